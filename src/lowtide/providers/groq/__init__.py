"""The built-in Groq providers (live: Chat Completions; batch: Groq's Batch API, OpenAI's in shape, under
`/openai/v1/`; both through the official groq SDK) and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the groq SDK, which the `lowtide[groq]` extra installs) are imported when first used, so registering them needs no
SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide import BatchProcessingMode
from lowtide.providers import LazyCheck, LazyProvider
from lowtide.providers.groq import rules

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.groq.batch import GroqBatchProvider
    from lowtide.providers.groq.live import GroqProvider
    from lowtide.providers.groq.options import GroqOptions

__all__ = ["GroqBatchProvider", "GroqOptions", "GroqProvider", "register"]

_CLASSES = {
    "GroqProvider": "lowtide.providers.groq.live",
    "GroqBatchProvider": "lowtide.providers.groq.batch",
    "GroqOptions": "lowtide.providers.groq.options",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters("groq", LazyCheck("lowtide.providers.groq.parameters", "check_parameters"))
    registry.register_pricing("groq", rules.USAGE)
    registry.register("groq", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["GroqProvider"], "GroqProvider"))
    registry.register(
        "groq", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["GroqBatchProvider"], "GroqBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
