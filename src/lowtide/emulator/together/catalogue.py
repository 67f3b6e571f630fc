"""The models the emulated Together account may use, as `GET /v1/models` lists them: chat models of November 2026.
(The together SDK v3 lists a project's custom models, `/v2/projects/{id}/models`, which lowtide never asks: the
emulator does not serve it.)"""

from __future__ import annotations

from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject

__all__ = ["CATALOGUE", "known"]


@dataclass(frozen=True)
class TogetherModel:
    id: str
    organization: str
    window: int

    def render(self) -> JsonObject:
        return {
            "id": self.id,
            "object": "model",
            "created": 1_754_425_777,
            "type": "chat",
            "display_name": self.id.split("/")[-1],
            "organization": self.organization,
            "context_length": self.window,
        }


CATALOGUE: tuple[TogetherModel, ...] = (
    TogetherModel("meta-llama/Llama-3.3-70B-Instruct-Turbo", "Meta", 131_072),
    TogetherModel("meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", "Meta", 131_072),
    TogetherModel("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "Meta", 1_048_576),
    TogetherModel("openai/gpt-oss-120b", "OpenAI", 131_072),
    TogetherModel("deepseek-ai/DeepSeek-V4.1-Flash", "DeepSeek", 131_072),
    TogetherModel("Qwen/Qwen3.8-Flash", "Qwen", 262_144),
    TogetherModel("togethercomputer/Tidal-Lite-8B", "Together", 32_768),
)
_BY_ID = {model.id: model for model in CATALOGUE}


def known(name: object) -> bool:
    return isinstance(name, str) and name in _BY_ID
