"""`OpenRouterBatchProvider`: answers requests through OpenRouter's Batch API (every request inline in one create,
one model a batch) at OpenRouter's batch price, through the `openai` SDK's client at OpenRouter's base URL. The
engine's part and `complete_many` are the base's (`ChatBatchProvider`)."""

from __future__ import annotations

from openai import AsyncOpenAI

from lowtide.providers import ProviderOptions
from lowtide.providers.openai_compatible.batch import ChatBatchProvider
from lowtide.providers.openrouter.batch_backend import OpenRouterBatchBackend
from lowtide.providers.openrouter.dialect import OPENROUTER
from lowtide.providers.openrouter.live import OPENROUTER_SDK

__all__ = ["OpenRouterBatchProvider"]


class OpenRouterBatchProvider(ChatBatchProvider[AsyncOpenAI]):
    """OpenRouter's Batch API: about half the price of live calls, results within 24 hours."""

    codec = OpenRouterBatchBackend.codec
    dialect = OPENROUTER
    sdk = OPENROUTER_SDK

    def make_backend(self, client: AsyncOpenAI, owns_client: bool, options: ProviderOptions) -> OpenRouterBatchBackend:
        return OpenRouterBatchBackend(client, owns_client=owns_client, clock=options.clock, settings=options.batch)
