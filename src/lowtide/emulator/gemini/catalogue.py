"""The Gemini models the emulator serves (`GET /{version}/models`), with the limits the API reports for them: the
context window (`inputTokenLimit`), the longest answer (`outputTokenLimit`) and whether they think. A model the
emulator is told of (`Emulator(extra_models=...)`) is served too, with the limits of Gemini 2.5 Flash."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lowtide.emulator.gemini.errors import not_found
from lowtide.emulator.gemini.wire import ModelInfo, ModelList

__all__ = ["MODELS", "GeminiModel", "find", "listed", "model_info", "served"]

_METHODS = ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"]


@dataclass(frozen=True)
class GeminiModel:
    id: str
    display_name: str
    input_limit: int
    output_limit: int
    thinking: bool


MODELS: tuple[GeminiModel, ...] = (
    GeminiModel("gemini-3.8-flash", "Gemini 3.8 Flash", 1_048_576, 65_536, True),
    # Named by google-genai 2.x's README (2.18, the lowest the gemini extra allows; the 2.x pydantic-ai pins).
    GeminiModel("gemini-3.5-flash", "Gemini 3.5 Flash", 1_048_576, 65_536, True),
    GeminiModel("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", 1_048_576, 65_536, True),
    GeminiModel("gemini-3.1-flash-lite", "Gemini 3.1 Flash-Lite", 1_048_576, 65_536, True),
    GeminiModel("gemini-3-pro-preview", "Gemini 3 Pro Preview", 1_048_576, 65_536, True),
    GeminiModel("gemini-3-flash-preview", "Gemini 3 Flash Preview", 1_048_576, 65_536, True),
    GeminiModel("gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, 65_536, True),
    GeminiModel("gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, 65_536, True),
    GeminiModel("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1_048_576, 65_536, True),
    GeminiModel("gemini-2.0-flash", "Gemini 2.0 Flash", 1_048_576, 8_192, False),
    GeminiModel("gemini-2.0-flash-lite", "Gemini 2.0 Flash-Lite", 1_048_576, 8_192, False),
)


def _bare(name: str) -> str:
    """A model's id without the `models/` its resource name starts with (the SDK sends either)."""
    return name.removeprefix("models/")


def find(name: str, extra: Iterable[str] = ()) -> GeminiModel | None:
    """The model `name` (`gemini-2.5-flash` or `models/gemini-2.5-flash`) names, if served."""
    bare = _bare(name)
    for model in MODELS:
        if model.id == bare:
            return model
    if bare in extra:
        return GeminiModel(bare, bare, 1_048_576, 65_536, True)
    return None


def served(name: str, extra: Iterable[str], version: str, method: str) -> GeminiModel:
    """The model `name` names, or the API's 404 for `method` under `version` when it is not served."""
    model = find(name, extra)
    if model is None:
        raise not_found(
            f"models/{_bare(name)} is not found for API version {version}, or is not supported for {method}. Call "
            "ListModels to see the list of available models and their supported methods."
        )
    return model


def model_info(model: GeminiModel) -> ModelInfo:
    return {
        "name": f"models/{model.id}",
        "version": "001",
        "displayName": model.display_name,
        "description": f"{model.display_name}, as lowtide's emulator serves it.",
        "inputTokenLimit": model.input_limit,
        "outputTokenLimit": model.output_limit,
        "supportedGenerationMethods": list(_METHODS),
        "temperature": 1.0,
        "maxTemperature": 2.0,
        "topP": 0.95,
        "topK": 64,
        "thinking": model.thinking,
    }


def listed(extra: Iterable[str], page_size: int | None, page_token: str | None) -> ModelList:
    """One page of the models (50 by default, at most 1000), the next page's token when there is one."""
    served = [*MODELS, *(GeminiModel(name, name, 1_048_576, 65_536, True) for name in extra)]
    size = min(max(page_size or 50, 1), 1000)
    start = int(page_token) if page_token and page_token.isdigit() else 0
    page: ModelList = {"models": [model_info(model) for model in served[start : start + size]]}
    if start + size < len(served):
        page["nextPageToken"] = str(start + size)
    return page
