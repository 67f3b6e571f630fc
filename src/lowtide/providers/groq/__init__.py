"""The built-in Groq providers (live: Chat Completions; batch: Groq's Batch API, OpenAI's in shape, under
`/openai/v1/`; both through the official groq SDK), an OpenAI-compatible dialect (`dialect.GROQ`), and their plugin
registration.

`register` is the entry point of the `lowtide.providers` group, as for the other built-ins. The provider classes (and
the groq SDK, which the `lowtide[groq]` extra installs) are imported when first used, so registering them needs no
SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.lazy import lender
from lowtide.providers.openai_compatible.dialect import register_dialect

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.groq.batch import GroqBatchProvider
    from lowtide.providers.groq.dialect import GroqOptions
    from lowtide.providers.groq.live import GroqProvider

__all__ = ["GroqBatchProvider", "GroqOptions", "GroqProvider", "register"]


__getattr__ = lender(__name__, {"GroqProvider": "live", "GroqBatchProvider": "batch", "GroqOptions": "dialect"})


def register(registry: ProviderRegistry) -> None:
    register_dialect(registry, GROQ, live=f"{__name__}.live:GroqProvider", batch=f"{__name__}.batch:GroqBatchProvider")
