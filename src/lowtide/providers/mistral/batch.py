"""`MistralBatchProvider`: answers requests through Mistral's Batch API (`/v1/batch/jobs` over
`/v1/chat/completions`), at half the live price, with the official mistralai SDK.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the job's metadata, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
batch per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from typing import ClassVar

from lowtide import ActorRequest, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import BatchCodec, InputLimits, OneBatchCalls
from lowtide.providers.mistral.batch_backend import MistralBatchBackend
from lowtide.providers.mistral.batch_codec import MistralBatchCodec
from lowtide.providers.mistral.checks import Checks
from lowtide.providers.mistral.client import build_client
from lowtide.providers.mistral.options import GEN_AI_PROVIDER_NAME, options_in

__all__ = ["MistralBatchProvider"]


class MistralBatchProvider(OneBatchCalls[MistralBatchBackend], Provider):
    """Mistral's Batch API: half the price of live calls, each job within its `timeout_hours`."""

    name: ClassVar[str] = "mistral"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = MistralBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        owned = build_client(options)
        self._checks = Checks(owned.client, scope=owned.scope, endpoint=owned.endpoint)
        self._http = owned.http
        self._clock = options.clock
        self.settings = options.batch
        self.backend = MistralBatchBackend(
            owned.client,
            endpoint=owned.endpoint,
            credential=owned.credential,
            clock=options.clock,
            settings=options.batch,
        )
        inline_bytes = options_in(options.provider_options).batch_inline_bytes
        if inline_bytes is not None:
            self.backend.inline_bytes = inline_bytes

    async def preflight(self, request: ActorRequest) -> None:
        """As in live mode: the model looked up, the request within its limits, before anything is recorded or
        sent."""
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self._http is not None:
            await self._http.aclose()
