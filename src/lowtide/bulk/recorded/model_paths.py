"""Naming a pydantic model by `module:QualifiedName`, so a run's `response_model` can be stored and found again."""

from __future__ import annotations

import importlib

from pydantic import BaseModel

from lowtide.errors import ConfigurationError

__all__ = ["import_model", "model_path"]


def model_path(model: type[BaseModel]) -> str:
    return f"{model.__module__}:{model.__qualname__}"


def import_model(path: str) -> type[BaseModel]:
    """The pydantic model named `module:QualifiedName` (the module must be importable from here)."""
    module_name, _, qualified = path.partition(":")
    if not module_name or not qualified:
        raise ConfigurationError(
            f"A response model is named as module:Class (e.g. myproject.models:Invoice), not {path!r}.",
            field="response_model",
        )
    try:
        found: object = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"Cannot import {module_name!r} for the response model {path!r}: {exc}", field="response_model"
        ) from None
    for part in qualified.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise ConfigurationError(f"{module_name!r} has no {qualified!r} (response model {path!r}).",
                                     field="response_model")  # fmt: skip
    if not (isinstance(found, type) and issubclass(found, BaseModel)):
        raise ConfigurationError(f"{path!r} is not a pydantic model.", field="response_model")
    return found
