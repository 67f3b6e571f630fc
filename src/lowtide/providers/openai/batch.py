"""`OpenAIBatchProvider`: answers requests through OpenAI's Batch API (the Responses or Chat Completions endpoint, as
the actor's `provider_options.openai.endpoint` picks), at half the live price.

Through an actor, calls go through lowtide's durable engine (ledger, keys, coalescing, exactly-once create by the
intent id in the batch's metadata, park and resume, budgets, bulk runs). Called directly, `complete_many` is one
batch per endpoint and model, outside the ledger: no key, nothing recorded, and calling it twice pays twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from lowtide.batching.backend import BatchCodec
from lowtide.batching.oneshot import OneBatchCalls
from lowtide.core.modes import BatchProcessingMode
from lowtide.messages.limits import InputLimits
from lowtide.messages.wire import Wire
from lowtide.provider import Provider, ProviderOptions
from lowtide.providers.openai.batch_backend import OpenAIBatchBackend
from lowtide.providers.openai.batch_codec import MAX_BATCH_BYTES, OpenAIBatchCodec
from lowtide.providers.openai.checks import MAX_REQUEST_BYTES, Checks
from lowtide.providers.openai.client import build_client
from lowtide.providers.openai.options import GEN_AI_PROVIDER_NAME
from lowtide.providers.openai.venues import OPENAI_VENUES
from lowtide.routing.venues import Venue
from lowtide.types import ActorRequest

if TYPE_CHECKING:
    from lowtide.providers.openai.webhooks import OpenAIWebhooks
    from lowtide.webhooks.events import WebhookVerifier

__all__ = ["OpenAIBatchProvider"]

_LINE_ROOM = 256
"""The bytes a request's custom id, method and url add to it as a line of a batch's input file."""


class OpenAIBatchProvider(OneBatchCalls[OpenAIBatchBackend], Provider):
    """OpenAI's Batch API: half the price of live calls, results within 24 hours."""

    name: ClassVar[str] = "openai"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH
    codec: ClassVar[BatchCodec | None] = OpenAIBatchCodec()

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client = build_client(options)
        self.settings = options.batch
        self._clock = options.clock
        # The pre-send checks ask the models endpoint once per model; a failure is skipped, never retried blindly. A
        # line of a batch is a request as OpenAI takes one, within its input file (less its custom id and url).
        configured = options.batch.max_batch_bytes
        self._checks = Checks(
            client,
            owned=owns_client,
            checking=client.with_options(max_retries=0),
            ascii_json=True,
            max_bytes=min(MAX_REQUEST_BYTES, MAX_BATCH_BYTES, configured) - _LINE_ROOM,
            where="OpenAI" if configured >= MAX_REQUEST_BYTES else "a batch (batch.max_batch_bytes)",
        )
        self.backend = OpenAIBatchBackend(client, owns_client=owns_client, clock=options.clock, settings=options.batch)
        self._client = client
        self._webhooks: OpenAIWebhooks | None = None

    def venues(self) -> Sequence[Venue]:
        return OPENAI_VENUES

    def serving_wires(self) -> Sequence[Wire]:
        from lowtide.providers.openai.serving import ChatCompletionsWire, ResponsesWire

        return (ChatCompletionsWire(), ResponsesWire())

    def webhook_verifier(self) -> WebhookVerifier:
        """OpenAI's batch webhooks, verified by the SDK with `$OPENAI_WEBHOOK_SECRET` (`webhooks.py`)."""
        if self._webhooks is None:
            from lowtide.providers.openai.webhooks import OpenAIWebhooks

            self._webhooks = OpenAIWebhooks(self._client)
        return self._webhooks

    async def preflight(self, request: ActorRequest) -> None:
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    async def aclose(self) -> None:
        await self.backend.aclose()
