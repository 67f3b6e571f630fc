"""The built-in Together AI providers (live: Chat Completions; batch: Together's Batch API; both through the official
together SDK, v3), a dialect of the OpenAI-compatible base (`dialect.TOGETHER`), and their plugin registration:
`register`, the entry point of the `lowtide.providers` group, imports no SDK (the classes load when first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.lazy import lender
from lowtide.providers.openai_compatible.dialect import register_dialect
from lowtide.providers.together.dialect import TOGETHER

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.together.batch import TogetherBatchProvider
    from lowtide.providers.together.dialect import TogetherOptions
    from lowtide.providers.together.live import TogetherProvider

__all__ = ["TogetherBatchProvider", "TogetherOptions", "TogetherProvider", "register"]


__getattr__ = lender(
    __name__, {"TogetherProvider": "live", "TogetherBatchProvider": "batch", "TogetherOptions": "dialect"}
)


def register(registry: ProviderRegistry) -> None:
    register_dialect(
        registry, TOGETHER, live=f"{__name__}.live:TogetherProvider", batch=f"{__name__}.batch:TogetherBatchProvider"
    )
