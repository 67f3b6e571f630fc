"""`GroqBatchProvider`: answers requests through Groq's Batch API (Chat Completions, from an uploaded JSONL file) at
Groq's batch discount, with the official groq SDK, within the actor's completion window (`provider_options.groq.
completion_window`, from 24h to 7d). The engine's part and `complete_many` are the base's (`ChatBatchProvider`)."""

from __future__ import annotations

from groq import AsyncGroq

from lowtide.providers import ProviderOptions
from lowtide.providers.groq.batch_backend import GroqBatchBackend
from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.groq.sdk import GROQ_SDK
from lowtide.providers.openai_compatible.batch import ChatBatchCodec, ChatBatchProvider

__all__ = ["GroqBatchProvider"]


class GroqBatchProvider(ChatBatchProvider[AsyncGroq]):
    """Groq's Batch API: half the price of live calls, results within the completion window."""

    codec = ChatBatchCodec(GROQ)
    dialect = GROQ
    sdk = GROQ_SDK

    def make_backend(self, client: AsyncGroq, owns_client: bool, options: ProviderOptions) -> GroqBatchBackend:
        window = GROQ.options_in(options.provider_options).completion_window
        return GroqBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, completion_window=window
        )
