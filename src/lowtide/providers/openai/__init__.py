"""The built-in OpenAI providers (live: the Responses and Chat Completions APIs; batch: the Batch API over either)
and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the Anthropic built-ins. The provider classes
(and the OpenAI SDK with them) are imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.core.modes import BatchProcessingMode
from lowtide.core.parameters import LazyCheck
from lowtide.providers.lazy import LazyProvider
from lowtide.providers.openai import rules

if TYPE_CHECKING:
    from lowtide.providers.openai.batch import OpenAIBatchProvider
    from lowtide.providers.openai.live import OpenAIProvider
    from lowtide.providers.openai.options import OpenAIOptions
    from lowtide.registry import ProviderRegistry

__all__ = ["OpenAIBatchProvider", "OpenAIOptions", "OpenAIProvider", "register"]

_CLASSES = {
    "OpenAIProvider": "lowtide.providers.openai.live",
    "OpenAIBatchProvider": "lowtide.providers.openai.batch",
    "OpenAIOptions": "lowtide.providers.openai.options",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters("openai", LazyCheck("lowtide.providers.openai.parameters", "check_parameters"))
    registry.register_pricing("openai", rules.USAGE)
    registry.register("openai", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["OpenAIProvider"], "OpenAIProvider"))
    registry.register(
        "openai", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["OpenAIBatchProvider"], "OpenAIBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
