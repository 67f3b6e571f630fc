"""The models the emulated OpenAI account may use, as `GET /v1/models` lists them (the SDK's `Model`: id, object,
created, owned_by), with each text model's context window, which a request's input may not exceed.

The text models are those the installed SDK names (its `ChatModel` literal) as of November 2026, and the three
embedding models; windows are those of OpenAI's model pages (the input a GPT-5 model reads is 272,000 tokens of its
400,000), the same numbers lowtide checks requests against before sending them. A model without a window here is
not refused for its length.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.openai.errors import OpenAIError

__all__ = ["CATALOGUE", "SNAPSHOTS", "Kind", "OpenAIModel", "find", "model_not_found", "page", "retrieve"]

Kind = Literal["text", "embedding"]
# Release days, as Unix times: families share one (the SDK gives none).
_2023, _2024, _2025, _2026 = 1_686_588_896, 1_715_367_049, 1_754_425_777, 1_773_705_600


@dataclass(frozen=True)
class OpenAIModel:
    id: str
    created: int
    window: int | None = None
    kind: Kind = "text"
    owned_by: str = "system"

    def render(self) -> JsonObject:
        return {"id": self.id, "object": "model", "created": self.created, "owned_by": self.owned_by}


def _family(names: Iterable[str], created: int, window: int | None, kind: Kind = "text") -> list[OpenAIModel]:
    return [OpenAIModel(name, created, window, kind) for name in names]


_GPT6 = ("gpt-6-astra", "gpt-6.2-astra", "gpt-6.1-sol", "gpt-6.2-sol", "gpt-6.1-terra", "gpt-6-sol", "gpt-6-luna")
_GPT5 = (
    "gpt-5.6-sol",
    "gpt-5.6-terra",
    "gpt-5.6-luna",
    "gpt-5.5",
    "gpt-5.5-2026-04-23",
    "gpt-5.4",
    "gpt-5.4-mini",
    "gpt-5.4-nano",
    "gpt-5.4-mini-2026-03-17",
    "gpt-5.4-nano-2026-03-17",
    "gpt-5.2",
    "gpt-5.2-2025-12-11",
    "gpt-5.2-pro",
    "gpt-5.2-pro-2025-12-11",
    "gpt-5.1",
    "gpt-5.1-2025-11-13",
    "gpt-5.1-codex",
    "gpt-5.1-mini",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5-2025-08-07",
    "gpt-5-mini-2025-08-07",
    "gpt-5-nano-2025-08-07",
)
_CHAT_LATEST = ("gpt-5.3-chat-latest", "gpt-5.2-chat-latest", "gpt-5.1-chat-latest", "gpt-5-chat-latest")
_GPT41 = (
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4.1-2025-04-14",
    "gpt-4.1-mini-2025-04-14",
    "gpt-4.1-nano-2025-04-14",
)
_O_SERIES = (
    "o4-mini",
    "o4-mini-2025-04-16",
    "o3",
    "o3-2025-04-16",
    "o3-mini",
    "o3-mini-2025-01-31",
    "o1",
    "o1-2024-12-17",
)
_GPT4O = (
    "o1-preview",
    "o1-preview-2024-09-12",
    "o1-mini",
    "o1-mini-2024-09-12",
    "gpt-4o",
    "gpt-4o-2024-11-20",
    "gpt-4o-2024-08-06",
    "gpt-4o-2024-05-13",
    "chatgpt-4o-latest",
    "gpt-4o-mini",
    "gpt-4o-mini-2024-07-18",
    "gpt-4-turbo",
    "gpt-4-turbo-2024-04-09",
    "gpt-4-0125-preview",
    "gpt-4-turbo-preview",
    "gpt-4-1106-preview",
)
_AUDIO_AND_SEARCH = (
    "gpt-audio-mini",
    "gpt-audio-mini-2025-12-15",
    "gpt-4o-audio-preview",
    "gpt-4o-audio-preview-2024-10-01",
    "gpt-4o-audio-preview-2024-12-17",
    "gpt-4o-audio-preview-2025-06-03",
    "gpt-4o-mini-audio-preview",
    "gpt-4o-mini-audio-preview-2024-12-17",
    "gpt-4o-search-preview",
    "gpt-4o-mini-search-preview",
    "gpt-4o-search-preview-2025-03-11",
    "gpt-4o-mini-search-preview-2025-03-11",
    "codex-mini-latest",
)
_EMBEDDINGS = ("text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002")

CATALOGUE: tuple[OpenAIModel, ...] = (
    *_family(_GPT6, _2026, None),
    *_family(_GPT5, _2025, 272_000),
    *_family(_CHAT_LATEST, _2025, 128_000),
    *_family(_GPT41, _2025, 1_047_576),
    *_family(_O_SERIES, _2025, 200_000),
    *_family(_GPT4O, _2024, 128_000),
    *_family(_AUDIO_AND_SEARCH, _2025, None),
    *_family(("gpt-4", "gpt-4-0613", "gpt-4-0314"), _2023, 8_192),
    *_family(("gpt-4-32k", "gpt-4-32k-0314", "gpt-4-32k-0613"), _2023, 32_768),
    *_family(("gpt-3.5-turbo", "gpt-3.5-turbo-0125", "gpt-3.5-turbo-1106", "gpt-3.5-turbo-16k"), _2023, 16_385),
    *_family(_EMBEDDINGS, _2024, 8_191, "embedding"),
)  # fmt: skip
_BY_ID = {model.id: model for model in CATALOGUE}

SNAPSHOTS: dict[str, str] = {
    "gpt-5.5": "gpt-5.5-2026-04-23",
    "gpt-5.4-mini": "gpt-5.4-mini-2026-03-17",
    "gpt-5.4-nano": "gpt-5.4-nano-2026-03-17",
    "gpt-5.2": "gpt-5.2-2025-12-11",
    "gpt-5.2-pro": "gpt-5.2-pro-2025-12-11",
    "gpt-5.1": "gpt-5.1-2025-11-13",
    "gpt-5": "gpt-5-2025-08-07",
    "gpt-5-mini": "gpt-5-mini-2025-08-07",
    "gpt-5-nano": "gpt-5-nano-2025-08-07",
    "gpt-4.1": "gpt-4.1-2025-04-14",
    "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
    "gpt-4.1-nano": "gpt-4.1-nano-2025-04-14",
    "o4-mini": "o4-mini-2025-04-16",
    "o3": "o3-2025-04-16",
    "o3-mini": "o3-mini-2025-01-31",
    "o1": "o1-2024-12-17",
    "o1-preview": "o1-preview-2024-09-12",
    "o1-mini": "o1-mini-2024-09-12",
    "gpt-4o": "gpt-4o-2024-08-06",
    "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
    "gpt-4-turbo": "gpt-4-turbo-2024-04-09",
    "gpt-4-turbo-preview": "gpt-4-0125-preview",
    "gpt-4": "gpt-4-0613",
    "gpt-4-32k": "gpt-4-32k-0613",
    "gpt-3.5-turbo": "gpt-3.5-turbo-0125",
    "gpt-audio-mini": "gpt-audio-mini-2025-12-15",
    "gpt-4o-audio-preview": "gpt-4o-audio-preview-2025-06-03",
    "gpt-4o-mini-audio-preview": "gpt-4o-mini-audio-preview-2024-12-17",
    "gpt-4o-search-preview": "gpt-4o-search-preview-2025-03-11",
    "gpt-4o-mini-search-preview": "gpt-4o-mini-search-preview-2025-03-11",
}
"""The dated snapshot each alias stands for, which the API's answers name (`gpt-4o-mini-2024-07-18` answers a request
for `gpt-4o-mini`); an alias without one here (and every dated name) answers as itself."""


def find(name: str, kind: Kind = "text") -> OpenAIModel | None:
    """The model `name` names, if it is one of `kind`."""
    model = _BY_ID.get(name)
    return model if model is not None and model.kind == kind else None


def model_not_found(name: str) -> OpenAIError:
    return OpenAIError(
        404,
        f"The model `{name}` does not exist or you do not have access to it.",
        param="model",
        code="model_not_found",
    )


def retrieve(name: str) -> JsonObject:
    """`GET /v1/models/{model}`."""
    model = _BY_ID.get(name)
    if model is None:
        raise model_not_found(name)
    return model.render()


def page(own: Iterable[OpenAIModel] = ()) -> JsonObject:
    """`GET /v1/models`: every model, and the account's own (`own`: its fine-tuned models), in one page, as OpenAI
    lists them."""
    return {"object": "list", "data": [model.render() for model in (*CATALOGUE, *own)]}


def fine_tuned_id(base: str, organization: str, suffix: str, job: str) -> str:
    """A fine-tuned model's id as OpenAI names it: `ft:<base>:<organization>:<suffix>:<id>`."""
    return f"ft:{base}:{organization}:{suffix}:{job}"


def cannot_delete(name: str) -> OpenAIError:
    """The refusal to delete a model of the catalogue: only the account's fine-tuned models can be deleted."""
    return OpenAIError(
        403, f"You do not have permission to delete the model `{name}`: only fine-tuned models can be deleted."
    )
