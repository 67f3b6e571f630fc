"""The built-in Fireworks AI providers (live: Chat Completions; batch: the Batch Inference API), both through the
official fireworks SDK (`fireworks-ai`), a dialect of the OpenAI-compatible base (`dialect.FIREWORKS`), and their
plugin registration: `register`, the entry point of the `lowtide.providers` group, imports no SDK (the classes load
when first used)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.providers.fireworks.dialect import FIREWORKS
from lowtide.providers.openai_compatible.dialect import register_dialect

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.fireworks.batch import FireworksBatchProvider
    from lowtide.providers.fireworks.dialect import FireworksOptions
    from lowtide.providers.fireworks.live import FireworksProvider

__all__ = ["FireworksBatchProvider", "FireworksOptions", "FireworksProvider", "register"]

_MODULES = {"FireworksProvider": "live", "FireworksBatchProvider": "batch", "FireworksOptions": "dialect"}


def register(registry: ProviderRegistry) -> None:
    register_dialect(
        registry, FIREWORKS, live=f"{__name__}.live:FireworksProvider", batch=f"{__name__}.batch:FireworksBatchProvider"
    )


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
