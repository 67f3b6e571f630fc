"""`TogetherBatchProvider`: answers requests through Together AI's Batch API (Chat Completions, from an uploaded JSONL
file) at Together's batch discount, with the official together SDK.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
input file named after the intent, park and resume, budgets, bulk runs). Called directly, `complete_many` is one batch
per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from lowtide import ActorError, ActorRequest, ActorResponse, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import BatchCodec, InputLimits, Outcome, run_batch
from lowtide.providers.together.batch_backend import TogetherBatchBackend
from lowtide.providers.together.batch_codec import MAX_BATCH_BYTES, TogetherBatchCodec
from lowtide.providers.together.checks import check_model, input_limits, preflight
from lowtide.providers.together.client import build_client
from lowtide.providers.together.options import options_in

__all__ = ["TogetherBatchProvider"]


class TogetherBatchProvider(Provider):
    """Together's Batch API: half the price of live calls, results within 24 hours."""

    name: ClassVar[str] = "together"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = TogetherBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        priority = options_in(options.provider_options).batch_priority
        client, owns_client = build_client(options)
        self._client, self._owns_client = client, owns_client
        self.settings = options.batch
        self._clock = options.clock
        self.backend = TogetherBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, priority=priority
        )

    def batch_backend(self) -> TogetherBatchBackend:
        return self.backend

    def _batch_bytes(self) -> int:
        return min(MAX_BATCH_BYTES, self.settings.max_batch_bytes)

    async def preflight(self, request: ActorRequest) -> None:
        preflight(request, batch_bytes=self._batch_bytes())
        await check_model(self._client, owned=self._owns_client, request=request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return input_limits(request, batch_bytes=self._batch_bytes())

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        """One request as one batch of its own, outside the ledger (`complete_many`); `Actor.run` records it."""
        [outcome] = await self.complete_many([request])
        if isinstance(outcome, ActorError):
            raise outcome
        return outcome

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
        """The requests as one batch per model, outside the ledger (`run_batch`): nothing recorded, so that calling
        it twice pays twice. `Actor.run_many` is the same through the ledger."""
        return await run_batch(self.backend, requests, settings=self.settings, clock=self._clock)

    async def aclose(self) -> None:
        await self.backend.aclose()
