"""The built-in Anthropic providers and their plugin registration.

`register` is the entry point of the `lowtide.providers` group: the built-ins load exactly as a plugin would. The
provider classes (and the Anthropic SDK with them) are imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.core.modes import BatchProcessingMode
from lowtide.core.parameters import LazyCheck
from lowtide.providers.anthropic import rules
from lowtide.providers.lazy import LazyProvider

if TYPE_CHECKING:
    from lowtide.providers.anthropic.batch import ClaudeBatchProvider
    from lowtide.providers.anthropic.live import ClaudeProvider
    from lowtide.registry import ProviderRegistry

__all__ = ["ClaudeBatchProvider", "ClaudeProvider", "register"]

_CLASSES = {
    "ClaudeProvider": "lowtide.providers.anthropic.live",
    "ClaudeBatchProvider": "lowtide.providers.anthropic.batch",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters("anthropic", LazyCheck("lowtide.providers.anthropic.parameters", "check_parameters"))
    registry.register_pricing("anthropic", rules.USAGE)
    registry.register_custom_ids("anthropic", rules.CUSTOM_IDS)
    registry.register("anthropic", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["ClaudeProvider"], "ClaudeProvider"))
    registry.register(
        "anthropic", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["ClaudeBatchProvider"], "ClaudeBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
