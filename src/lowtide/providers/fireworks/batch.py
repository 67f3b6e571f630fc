"""`FireworksBatchProvider`: answers requests through Fireworks' Batch Inference API (an input dataset, a batch
inference job under an id lowtide chooses, its output dataset read) at Fireworks' batch discount, with the official
fireworks SDK. The engine's part and `complete_many` are the base's (`ChatBatchProvider`)."""

from __future__ import annotations

import os

from fireworks import AsyncFireworks

from lowtide import ActorRequest
from lowtide.providers import ProviderOptions
from lowtide.providers.fireworks.batch_backend import FireworksBatchBackend
from lowtide.providers.fireworks.dialect import FIREWORKS, FireworksOptions
from lowtide.providers.fireworks.sdk import FIREWORKS_SDK
from lowtide.providers.openai_compatible.batch import ChatBatchProvider

__all__ = ["FireworksBatchProvider"]

ACCOUNT_ENV = "FIREWORKS_ACCOUNT_ID"


class FireworksBatchProvider(ChatBatchProvider[AsyncFireworks]):
    """Fireworks' Batch Inference API: half the price of live calls, results within 24 hours."""

    codec = FireworksBatchBackend.codec
    dialect = FIREWORKS
    sdk = FIREWORKS_SDK

    def make_backend(
        self, client: AsyncFireworks, owns_client: bool, options: ProviderOptions
    ) -> FireworksBatchBackend:
        chosen: FireworksOptions = FIREWORKS.options_in(options.provider_options)
        account = chosen.account_id or os.environ.get(ACCOUNT_ENV)
        return FireworksBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, account=account
        )

    async def preflight(self, request: ActorRequest) -> None:
        """The account checked first: a batch job needs one, and nothing is sent without it."""
        if isinstance(self.backend, FireworksBatchBackend):
            self.backend.account()
        await super().preflight(request)
