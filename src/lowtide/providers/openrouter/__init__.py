"""The built-in OpenRouter providers (live: Chat Completions through the `openai` SDK at OpenRouter's base URL, as
OpenRouter documents; batch: OpenRouter's Batch API, every request inline in one create), a dialect of the
OpenAI-compatible base (`dialect.OPENROUTER`), and their plugin registration: `register`, the entry point of the
`lowtide.providers` group, imports no SDK (the classes load when first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.lazy import lender
from lowtide.providers.openai_compatible.dialect import register_dialect
from lowtide.providers.openrouter.dialect import OPENROUTER

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.openrouter.batch import OpenRouterBatchProvider
    from lowtide.providers.openrouter.dialect import OpenRouterOptions
    from lowtide.providers.openrouter.live import OpenRouterProvider

__all__ = ["OpenRouterBatchProvider", "OpenRouterOptions", "OpenRouterProvider", "register"]


__getattr__ = lender(
    __name__, {"OpenRouterProvider": "live", "OpenRouterBatchProvider": "batch", "OpenRouterOptions": "dialect"}
)


def register(registry: ProviderRegistry) -> None:
    register_dialect(
        registry,
        OPENROUTER,
        live=f"{__name__}.live:OpenRouterProvider",
        batch=f"{__name__}.batch:OpenRouterBatchProvider",
    )
