"""The built-in OpenRouter provider, live only: Chat Completions through the `openai` SDK at OpenRouter's base URL,
as OpenRouter documents, a dialect of the OpenAI-compatible base (`dialect.OPENROUTER`), and its plugin registration.

lowtide does not yet speak OpenRouter's Batch API (in beta: inline requests, one model a batch), so the provider is
registered for live mode alone and an actor of it in batch mode is refused as it loads, saying so (unless it sets
`fallback_to_live`). `register`, the entry point of the `lowtide.providers` group, imports no SDK."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.core.modes import BatchProcessingMode
from lowtide.providers import LazyProvider
from lowtide.providers.openrouter.dialect import OPENROUTER, check_parameters

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.openrouter.dialect import OpenRouterOptions
    from lowtide.providers.openrouter.live import OpenRouterProvider

__all__ = ["OpenRouterOptions", "OpenRouterProvider", "register"]

_MODULES = {"OpenRouterProvider": "live", "OpenRouterOptions": "dialect"}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters(OPENROUTER.name, check_parameters)
    registry.register_pricing(OPENROUTER.name, OPENROUTER.usage)
    registry.register(OPENROUTER.name, BatchProcessingMode.LIVE, LazyProvider(f"{__name__}.live", "OpenRouterProvider"))


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
