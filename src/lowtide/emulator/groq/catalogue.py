"""The models the emulated Groq account may use, as `GET /openai/v1/models` lists them (Groq's `Model`: id, object,
created, owned_by, active, context_window): Groq's chat models as of November 2026."""

from __future__ import annotations

from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.catalogue import model_not_found

__all__ = ["CATALOGUE", "known", "page", "retrieve"]


@dataclass(frozen=True)
class GroqModel:
    id: str
    owned_by: str
    window: int
    created: int = 1_754_425_777

    def render(self) -> JsonObject:
        return {
            "id": self.id,
            "object": "model",
            "created": self.created,
            "owned_by": self.owned_by,
            "active": True,
            "context_window": self.window,
        }


CATALOGUE: tuple[GroqModel, ...] = (
    GroqModel("llama-3.1-8b-instant", "Meta", 131_072),
    GroqModel("llama-3.3-70b-versatile", "Meta", 131_072),
    GroqModel("meta-llama/llama-4-scout-17b-16e-instruct", "Meta", 131_072),
    GroqModel("meta-llama/llama-4-maverick-17b-128e-instruct", "Meta", 131_072),
    GroqModel("openai/gpt-oss-20b", "OpenAI", 131_072),
    GroqModel("openai/gpt-oss-120b", "OpenAI", 131_072),
    GroqModel("qwen/qwen3-32b", "Alibaba Cloud", 131_072),
    GroqModel("moonshotai/kimi-k2-instruct", "Moonshot AI", 131_072),
    GroqModel("allam-2-7b", "SDAIA", 4_096),
)
_BY_ID = {model.id: model for model in CATALOGUE}


def known(name: object) -> bool:
    return isinstance(name, str) and name in _BY_ID


def retrieve(name: str) -> JsonObject:
    model = _BY_ID.get(name)
    if model is None:
        raise model_not_found(name)
    return model.render()


def page() -> JsonObject:
    return {"object": "list", "data": [model.render() for model in CATALOGUE]}
