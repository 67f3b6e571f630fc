"""What the OpenAI provider's step modules share: the model and key the scenarios use, and the response models."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
from pydantic import BaseModel

MODEL = "gpt-5.4-mini"
OPENAI_KEY = "sk-openai-lowtide-scenario-secret-4b1d"
"""The key every OpenAI client of these scenarios sends: distinctive, so that a leak into a message is caught."""


class TideRecord(BaseModel):
    port: str
    height_m: float
    note: str | None = None


RESPONSE_MODELS: dict[str, type[BaseModel]] = {"TideRecord": TideRecord}


def openai_client(w: Any, transport: httpx2.AsyncBaseTransport | None = None) -> openai.AsyncOpenAI:
    """The official OpenAI SDK client of a scenario: the emulator's OpenAI API over the scenario's hooked
    transport (or `transport`), with the scenario's key; closed after the scenario."""
    base_url = f"{w.emu.base_url}/v1"
    client = openai.AsyncOpenAI(
        api_key=OPENAI_KEY,
        base_url=base_url,
        http_client=httpx2.AsyncClient(transport=transport or w.transport(), base_url=base_url),
        max_retries=0,
    )
    w.cleanups.append(client.close)
    return client
