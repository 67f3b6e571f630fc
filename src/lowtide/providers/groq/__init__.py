"""The built-in Groq providers (live: Chat Completions; batch: Groq's Batch API, OpenAI's in shape, under
`/openai/v1/`; both through the official groq SDK), an OpenAI-compatible dialect (`dialect.GROQ`), and their plugin
registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the groq SDK, which the `lowtide[groq]` extra installs) are imported when first used, so registering them needs no
SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.openai_compatible.dialect import register_dialect

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.groq.batch import GroqBatchProvider
    from lowtide.providers.groq.dialect import GroqOptions
    from lowtide.providers.groq.live import GroqProvider

__all__ = ["GroqBatchProvider", "GroqOptions", "GroqProvider", "register"]

_MODULES = {"GroqProvider": "live", "GroqBatchProvider": "batch", "GroqOptions": "dialect"}


def register(registry: ProviderRegistry) -> None:
    register_dialect(registry, GROQ, live=f"{__name__}.live:GroqProvider", batch=f"{__name__}.batch:GroqBatchProvider")


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
