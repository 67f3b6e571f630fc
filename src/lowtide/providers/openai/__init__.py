"""The built-in OpenAI providers (live: the Responses and Chat Completions APIs; batch: the Batch API over either)
and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the Anthropic built-ins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.config import BatchProcessingMode
from lowtide.providers.openai.batch import OpenAIBatchProvider
from lowtide.providers.openai.live import OpenAIProvider
from lowtide.providers.openai.options import OpenAIOptions

if TYPE_CHECKING:
    from lowtide.registry import ProviderRegistry

__all__ = ["OpenAIBatchProvider", "OpenAIOptions", "OpenAIProvider", "register"]


def register(registry: ProviderRegistry) -> None:
    registry.register("openai", BatchProcessingMode.LIVE, OpenAIProvider)
    registry.register("openai", BatchProcessingMode.BATCH, OpenAIBatchProvider)
