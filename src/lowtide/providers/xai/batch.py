"""`XaiBatchProvider`: answers requests through xAI's Batch API (a named batch, its requests added to it) at xAI's
batch discount, through the `openai` SDK's client at xAI's base URL. The engine's part and `complete_many` are the
base's (`ChatBatchProvider`)."""

from __future__ import annotations

from openai import AsyncOpenAI

from lowtide.providers import ProviderOptions
from lowtide.providers.openai_compatible.batch import ChatBatchProvider
from lowtide.providers.xai.batch_backend import XaiBatchBackend
from lowtide.providers.xai.dialect import XAI
from lowtide.providers.xai.sdk import XAI_SDK

__all__ = ["XaiBatchProvider"]


class XaiBatchProvider(ChatBatchProvider[AsyncOpenAI]):
    """xAI's Batch API: half the price of live calls, results typically within 24 hours."""

    codec = XaiBatchBackend.codec
    dialect = XAI
    sdk = XAI_SDK

    def make_backend(self, client: AsyncOpenAI, owns_client: bool, options: ProviderOptions) -> XaiBatchBackend:
        return XaiBatchBackend(client, owns_client=owns_client, clock=options.clock, settings=options.batch)
