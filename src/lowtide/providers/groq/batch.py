"""`GroqBatchProvider`: answers requests through Groq's Batch API (Chat Completions, from an uploaded JSONL file) at
Groq's batch discount, with the official groq SDK, within the actor's completion window (`provider_options.groq.
completion_window`, from 24h to 7d).

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the batch's metadata, park and resume, budgets, bulk runs). Called directly, `complete_many` is one batch
per model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from lowtide import ActorError, ActorRequest, ActorResponse, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import BatchCodec, InputLimits, Outcome, run_batch
from lowtide.providers.groq.batch_backend import GroqBatchBackend
from lowtide.providers.groq.batch_codec import MAX_BATCH_BYTES, GroqBatchCodec
from lowtide.providers.groq.checks import check_model, input_limits, preflight
from lowtide.providers.groq.client import build_client
from lowtide.providers.groq.options import GEN_AI_PROVIDER_NAME, options_in

__all__ = ["GroqBatchProvider"]


class GroqBatchProvider(Provider):
    """Groq's Batch API: half the price of live calls, results within the completion window."""

    name: ClassVar[str] = "groq"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = GroqBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        window = options_in(options.provider_options).completion_window
        client, owns_client = build_client(options)
        self._client, self._owns_client = client, owns_client
        self.settings = options.batch
        self._clock = options.clock
        self.backend = GroqBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch, completion_window=window
        )

    def batch_backend(self) -> GroqBatchBackend:
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
