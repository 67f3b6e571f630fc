"""The built-in Fireworks AI provider, live only for now: Chat Completions through the official fireworks SDK
(`fireworks-ai`), a dialect of the OpenAI-compatible base (`dialect.FIREWORKS`), and its plugin registration.

lowtide does not yet speak Fireworks' Batch Inference API, so the provider is registered for live mode alone and an
actor of it in batch mode is refused as it loads, saying so (unless it sets `fallback_to_live`). `register`, the entry
point of the `lowtide.providers` group, imports no SDK (the class loads when first used)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.core.modes import BatchProcessingMode
from lowtide.providers import LazyProvider
from lowtide.providers.fireworks.dialect import FIREWORKS, check_parameters

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.fireworks.dialect import FireworksOptions
    from lowtide.providers.fireworks.live import FireworksProvider

__all__ = ["FireworksOptions", "FireworksProvider", "register"]

_MODULES = {"FireworksProvider": "live", "FireworksOptions": "dialect"}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters(FIREWORKS.name, check_parameters)
    registry.register_pricing(FIREWORKS.name, FIREWORKS.usage)
    registry.register(FIREWORKS.name, BatchProcessingMode.LIVE, LazyProvider(f"{__name__}.live", "FireworksProvider"))


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
