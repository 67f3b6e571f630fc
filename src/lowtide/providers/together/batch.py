"""`TogetherBatchProvider`: answers requests through Together AI's Batch API (Chat Completions, from an uploaded
JSONL file) at Together's batch discount, with the official together SDK. The engine's part and `complete_many` are
the base's (`ChatBatchProvider`)."""

from __future__ import annotations

from together import AsyncTogether

from lowtide.providers import ProviderOptions
from lowtide.providers.openai_compatible.batch import ChatBatchProvider
from lowtide.providers.together.batch_backend import TogetherBatchBackend
from lowtide.providers.together.dialect import TOGETHER
from lowtide.providers.together.sdk import TOGETHER_SDK

__all__ = ["TogetherBatchProvider"]


class TogetherBatchProvider(ChatBatchProvider[AsyncTogether]):
    """Together's Batch API: half the price of live calls, results within 24 hours."""

    codec = TogetherBatchBackend.codec
    dialect = TOGETHER
    sdk = TOGETHER_SDK

    def make_backend(self, client: AsyncTogether, owns_client: bool, options: ProviderOptions) -> TogetherBatchBackend:
        priority = TOGETHER.options_in(options.provider_options).batch_priority
        return TogetherBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, priority=priority
        )
