"""`OpenAIBatchProvider`: answers requests through OpenAI's Batch API (the Responses or Chat Completions endpoint, as
the actor's `provider_options.openai.endpoint` picks), at half the live price.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the batch's metadata, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
batch per endpoint and model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from lowtide.batching.backend import BatchCodec
from lowtide.batching.oneshot import run_batch
from lowtide.config import BatchProcessingMode
from lowtide.errors import ActorError
from lowtide.providers.base import Capability, Outcome, Provider, ProviderOptions
from lowtide.providers.openai.batch_backend import OpenAIBatchBackend
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec
from lowtide.providers.openai.client import build_client
from lowtide.types import ActorRequest, ActorResponse
from lowtide.wire import Wire

__all__ = ["OpenAIBatchProvider"]


class OpenAIBatchProvider(Provider):
    """OpenAI's Batch API: half the price of live calls, results within 24 hours."""

    name: ClassVar[str] = "openai"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.BATCH,
            Capability.STRUCTURED_OUTPUT,
            Capability.TOOLS,
            Capability.THINKING,
            Capability.PROMPT_CACHING,
        }
    )
    codec: ClassVar[BatchCodec | None] = OpenAIBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client = build_client(options)
        self.settings = options.batch
        self._clock = options.clock
        self.backend = OpenAIBatchBackend(client, owns_client=owns_client, clock=options.clock, settings=options.batch)

    def batch_backend(self) -> OpenAIBatchBackend:
        return self.backend

    def serving_wires(self) -> Sequence[Wire]:
        from lowtide.providers.openai.serving import ChatCompletionsWire, ResponsesWire

        return (ChatCompletionsWire(), ResponsesWire())

    @property
    def endpoint(self) -> str:
        """The API's base URL: what the ledger records of where a batch lives (never the key)."""
        return self.backend.endpoint

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        """One request as one batch of its own, outside the ledger (`complete_many`); `Actor.run` records it."""
        [outcome] = await self.complete_many([request])
        if isinstance(outcome, ActorError):
            raise outcome
        return outcome

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
        """The requests as one batch per endpoint and model, outside the ledger (`oneshot.run_batch`): nothing
        recorded, so that calling it twice pays twice. `Actor.run_many` is the same through the ledger."""
        return await run_batch(self.backend, requests, settings=self.settings, clock=self._clock)

    async def aclose(self) -> None:
        await self.backend.aclose()
