"""What the OpenAI provider's step modules share: the model and key the scenarios use, and the response models."""

from __future__ import annotations

from pydantic import BaseModel

MODEL = "gpt-5.4-mini"
OPENAI_KEY = "sk-openai-lowtide-scenario-secret-4b1d"
"""The key every OpenAI client of these scenarios sends: distinctive, so that a leak into a message is caught."""


class TideRecord(BaseModel):
    port: str
    height_m: float
    note: str | None = None


RESPONSE_MODELS: dict[str, type[BaseModel]] = {"TideRecord": TideRecord}
