"""The built-in Mistral providers (live: chat completions; batch: Mistral's Batch API, inline or from an uploaded
file; both through the official mistralai SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the mistralai SDK, which the `lowtide[mistral]` extra installs) are imported when first used, so registering them
needs no SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide import BatchProcessingMode
from lowtide.providers import LazyCheck, LazyProvider
from lowtide.providers.mistral import rules

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.mistral.batch import MistralBatchProvider
    from lowtide.providers.mistral.live import MistralProvider
    from lowtide.providers.mistral.options import MistralOptions

__all__ = ["MistralBatchProvider", "MistralOptions", "MistralProvider", "register"]

_CLASSES = {
    "MistralProvider": "lowtide.providers.mistral.live",
    "MistralBatchProvider": "lowtide.providers.mistral.batch",
    "MistralOptions": "lowtide.providers.mistral.options",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters("mistral", LazyCheck("lowtide.providers.mistral.parameters", "check_parameters"))
    registry.register_pricing("mistral", rules.USAGE)
    registry.register("mistral", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["MistralProvider"], "MistralProvider"))
    registry.register(
        "mistral", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["MistralBatchProvider"], "MistralBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
