"""The built-in Together AI providers (live: Chat Completions; batch: Together's Batch API, a JSONL file uploaded
then a job created from it; both through the official together SDK, v3) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the together SDK, which the `lowtide[together]` extra installs) are imported when first used, so registering them
needs no SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide import BatchProcessingMode
from lowtide.providers import LazyCheck, LazyProvider
from lowtide.providers.together import rules

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.together.batch import TogetherBatchProvider
    from lowtide.providers.together.live import TogetherProvider
    from lowtide.providers.together.options import TogetherOptions

__all__ = ["TogetherBatchProvider", "TogetherOptions", "TogetherProvider", "register"]

_CLASSES = {
    "TogetherProvider": "lowtide.providers.together.live",
    "TogetherBatchProvider": "lowtide.providers.together.batch",
    "TogetherOptions": "lowtide.providers.together.options",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters("together", LazyCheck("lowtide.providers.together.parameters", "check_parameters"))
    registry.register_pricing("together", rules.USAGE)
    registry.register(
        "together", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["TogetherProvider"], "TogetherProvider")
    )
    registry.register(
        "together", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["TogetherBatchProvider"], "TogetherBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
