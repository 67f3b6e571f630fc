"""The built-in xAI providers (live: Chat Completions through the `openai` SDK at xAI's base URL, as xAI documents;
batch: xAI's own Batch API, a named batch that requests are added to), a dialect of the OpenAI-compatible base
(`dialect.XAI`), and their plugin registration: `register`, the entry point of the `lowtide.providers` group, imports
no SDK (the classes load when first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.lazy import lender
from lowtide.providers.openai_compatible.dialect import register_dialect
from lowtide.providers.xai.dialect import XAI

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.xai.batch import XaiBatchProvider
    from lowtide.providers.xai.dialect import XaiOptions
    from lowtide.providers.xai.live import XaiProvider

__all__ = ["XaiBatchProvider", "XaiOptions", "XaiProvider", "register"]


__getattr__ = lender(__name__, {"XaiProvider": "live", "XaiBatchProvider": "batch", "XaiOptions": "dialect"})


def register(registry: ProviderRegistry) -> None:
    register_dialect(registry, XAI, live=f"{__name__}.live:XaiProvider", batch=f"{__name__}.batch:XaiBatchProvider")
