"""The Mistral models the emulator serves (`GET /v1/models`, `GET /v1/models/{id}`), each with its context window
(`max_context_length`) and aliases; a model the emulator is told of (`Emulator(extra_models=...)`) is served too."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.mistral.errors import MistralError, invalid

__all__ = ["MODELS", "MistralModel", "card", "find", "listed", "retrieved", "served"]

_CREATED = 1_735_689_600


@dataclass(frozen=True)
class MistralModel:
    id: str
    window: int
    aliases: tuple[str, ...] = ()
    vision: bool = False
    """Whether it reads images (`capabilities.vision`, as Mistral's models endpoint says)."""


MODELS: tuple[MistralModel, ...] = (
    MistralModel("mistral-large-2411", 131_072, ("mistral-large-latest",)),
    MistralModel("pixtral-large-2411", 131_072, ("pixtral-large-latest",), vision=True),
    MistralModel("mistral-medium-2505", 131_072, ("mistral-medium-latest",), vision=True),
    MistralModel("mistral-small-2503", 131_072, ("mistral-small-latest",), vision=True),
    MistralModel("ministral-8b-2410", 131_072, ("ministral-8b-latest",)),
    MistralModel("codestral-2501", 262_144, ("codestral-latest",)),
    MistralModel("open-mistral-nemo", 131_072, ("mistral-nemo",)),
)


def find(name: str, extra: Iterable[str] = ()) -> MistralModel | None:
    """The model `name` names (its id or an alias), if served."""
    for model in MODELS:
        if name == model.id or name in model.aliases:
            return model
    return MistralModel(name, 131_072, vision=True) if name in extra else None


def served(name: object, extra: Iterable[str]) -> MistralModel:
    """The model a request names, or Mistral's 400 for one it does not serve."""
    model = find(name, extra) if isinstance(name, str) else None
    if model is None:
        raise invalid(f"Invalid model: {name}", code="1500")
    return model


def card(model: MistralModel, name: str | None = None) -> JsonObject:
    """A `BaseModelCard`, under the name it was asked by."""
    return {
        "id": name or model.id,
        "object": "model",
        "created": _CREATED,
        "owned_by": "mistralai",
        "capabilities": {"completion_chat": True, "function_calling": True, "vision": model.vision},
        "name": model.id,
        "description": f"Emulated {model.id}",
        "max_context_length": model.window,
        "aliases": list(model.aliases),
        "deprecation": None,
        "default_model_temperature": 0.3,
        "type": "base",
    }


def listed(extra: Iterable[str]) -> JsonObject:
    extras = [MistralModel(name, 131_072) for name in extra if find(name) is None]
    return {"object": "list", "data": [card(model) for model in (*MODELS, *extras)]}


def retrieved(name: str, extra: Iterable[str]) -> JsonObject:
    model = find(name, extra)
    if model is None:
        raise MistralError(404, f"Model '{name}' not found", code="1500")
    return card(model, name)
