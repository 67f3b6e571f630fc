"""`ClaudeBatchProvider`: answers requests through Anthropic's Message Batches API.

Through an actor (`run`, `run_many`, `submit`, bulk runs), calls go through lowtide's durable engine, over this
provider's `backend`: the ledger, keys, coalescing, exactly-once create, park and resume, budgets.

Called directly, the provider's own methods work outside the ledger. One call of `complete_many` is one batch:
submit (`POST /v1/messages/batches`), poll (`GET .../{id}`) every `poll_interval` seconds until the batch ends or
`max_wait` passes, then stream the results line by line and join them to their requests on `custom_id`. Each request
gets its own outcome; one failure never fails its neighbours. Nothing is recorded: no key, and calling it twice pays
twice; a create whose outcome is in doubt is raised, never reconciled. `submit`, `wait`, `collect` and `cancel` are
public so that a caller can handle a batch by its id, outside the ledger too.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from anthropic.types.messages import MessageBatch

from lowtide.batching.backend import NO_STEPS, BatchCodec, RemoteBatch, ResultLine, UnreadableLine
from lowtide.batching.oneshot import OneBatchCalls
from lowtide.batching.outcomes import custom_id_of, outcome_of
from lowtide.batching.polling import wait_until_ended
from lowtide.config.actors import BatchProcessingMode
from lowtide.errors import BatchRequestError, BatchTimeoutError, ConfigurationError
from lowtide.messages.limits import InputLimits, body_json, byte_size
from lowtide.messages.structured import parsed_outcome
from lowtide.messages.wire import Wire
from lowtide.provider import Outcome, Provider, ProviderOptions
from lowtide.providers.anthropic.backend import (
    MAX_BATCH_BYTES,
    MAX_BATCH_REQUESTS,
    AnthropicBatchBackend,
    AnthropicBatchCodec,
    remote_batch,
    request_id_of,
)
from lowtide.providers.anthropic.checks import ModelDirectory, directory_for, preflight
from lowtide.providers.anthropic.client import build_client
from lowtide.providers.anthropic.inputs import check_request_input, input_limits
from lowtide.providers.anthropic.mapping import BatchEntry, to_batch_request, to_message_params
from lowtide.providers.anthropic.options import GEN_AI_PROVIDER_NAME
from lowtide.types import ActorRequest

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "ClaudeBatchProvider", "PreparedBatch", "request_id_of"]

log = logging.getLogger(__name__)

_API_BATCH_BYTES = 256_000_000
"""The API's 256 MB, as an actor's `batch.max_batch_bytes` counts it."""
_ENTRY_ROOM = 128
"""The bytes a request's custom id and its entry's keys add to it in a batch."""


class PreparedBatch:
    """Requests checked and given their `custom_id`s, ready to submit; nothing has been sent yet."""

    def __init__(self, requests: Sequence[ActorRequest]) -> None:
        if not requests:
            raise ConfigurationError("A batch needs at least one request.", field="requests")
        if len(requests) > MAX_BATCH_REQUESTS:
            raise ConfigurationError(
                f"{len(requests)} requests exceed the API's limit of {MAX_BATCH_REQUESTS} per batch.",
                field="requests",
            )
        self.custom_ids: list[str] = []
        self.entries: list[BatchEntry] = []
        self.requests: dict[str, ActorRequest] = {}
        size = 0
        for index, request in enumerate(requests):
            custom_id = request.custom_id or f"request-{index}"
            if custom_id in self.requests:
                raise ConfigurationError(f"custom_id {custom_id!r} is used twice in one batch.", field="custom_id")
            entry = to_batch_request(custom_id, request)
            size += len(json.dumps(entry, separators=(",", ":")).encode())
            self.custom_ids.append(custom_id)
            self.entries.append(entry)
            self.requests[custom_id] = request
        if size > MAX_BATCH_BYTES:
            raise ConfigurationError(
                f"The batch is {size / 2**20:.1f} MiB, over the API's limit of 256 MB; split it.", field="requests"
            )
        self.size_bytes = size


class ClaudeBatchProvider(OneBatchCalls[AnthropicBatchBackend], Provider):
    """Anthropic's Message Batches API: half the price of live calls, results within 24 hours."""

    name: ClassVar[str] = "anthropic"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client = build_client(options)
        self._closable, self._owns_client = client, owns_client
        # The pre-send checks ask the Models API once per model; a failure is skipped, never retried blindly.
        self._client = client.with_options(max_retries=0)
        self._clock = options.clock
        self.settings = options.batch
        self.backend = AnthropicBatchBackend(
            client, owns_client=owns_client, clock=options.clock, settings=options.batch
        )

    codec: ClassVar[BatchCodec | None] = AnthropicBatchCodec()

    def serving_wires(self) -> Sequence[Wire]:
        from lowtide.providers.anthropic.serving import MessagesWire

        return (MessagesWire(),)

    @functools.cached_property
    def _models(self) -> ModelDirectory:
        # The client as given or built (not the copy without retries), which is what names the endpoint.
        return directory_for(self._closable, owned=self._owns_client)

    async def preflight(self, request: ActorRequest) -> None:
        params = await preflight(self._client, self._models, request)
        body = body_json(params, ascii_json=True)
        limits = await self._limits(request, byte_size(body))
        await check_request_input(self._client, self._models, request, params, body, limits=limits)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._limits(request, byte_size(body_json(to_message_params(request), ascii_json=True)))

    async def _limits(self, request: ActorRequest, body_bytes: int) -> InputLimits:
        # A request travels in a batch: the batch's limit is its own (less the room its custom id takes).
        configured = self.settings.max_batch_bytes
        most = min(MAX_BATCH_BYTES, configured) - _ENTRY_ROOM
        where = "the Message Batches API" if configured >= _API_BATCH_BYTES else "a batch (batch.max_batch_bytes)"
        return await input_limits(
            self._client, self._models, request, body_bytes=body_bytes, max_bytes=most, where=where
        )

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
        """The requests as one batch, outside the ledger: each named by its own `custom_id` (else `request-<index>`),
        nothing recorded, so that calling it twice pays twice. `Actor.run_many` is the same through the ledger."""
        prepared = PreparedBatch(requests)
        batch = await self.submit(prepared)
        started = self._clock.now()
        try:
            ended = await self.wait(batch, started_at=started)
        except BatchTimeoutError as exc:
            exc.custom_ids = list(prepared.custom_ids)
            raise
        outcomes = await self.collect(ended, prepared.requests, request_id=request_id_of(batch), expected=_total(ended))
        return [outcomes[custom_id] for custom_id in prepared.custom_ids]

    async def submit(self, prepared: PreparedBatch) -> MessageBatch:
        """Create the batch for prepared requests."""
        return await self.create(prepared.entries)

    async def create(self, entries: Sequence[BatchEntry]) -> MessageBatch:
        """Create a batch. Retried only when the API refused it outright (429, 529), never on doubt."""
        body = self.backend.codec.encode(
            (entry["custom_id"], json.dumps(entry["params"], separators=(",", ":"))) for entry in entries
        )
        created = await self.backend.create(body, len(entries), intent_id="", steps=NO_STEPS)
        return _message_batch(created)

    async def wait(
        self,
        batch: MessageBatch | str,
        *,
        started_at: float | None = None,
        on_status: Callable[[MessageBatch], None] | None = None,
    ) -> MessageBatch:
        """Poll every `poll_interval` seconds until the batch ends; past `max_wait`, apply the timeout policy.

        `started_at` (clock time) lets a caller that parked the batch count the wait from its submission.
        """
        ended = await wait_until_ended(
            self.backend,
            remote_batch(batch) if isinstance(batch, MessageBatch) else batch,
            settings=self.settings,
            clock=self._clock,
            started_at=started_at,
            on_status=None if on_status is None else lambda seen: on_status(_message_batch(seen)),
        )
        return _message_batch(ended)

    async def collect(
        self,
        batch: MessageBatch | str,
        requests: Mapping[str, ActorRequest] | None = None,
        *,
        request_id: str | None = None,
        expected: int | None = None,
    ) -> dict[str, Outcome]:
        """Stream the results of an ended batch (or batch id), line by line, into one outcome per `custom_id`.

        With `requests` (custom_id -> request) lines are joined to them (and parsed into their `response_model`),
        and a request the results never mention gets a `BatchRequestError` saying so. Without, every line is
        returned: enough to pick up a batch left running after a timeout, knowing only its id.
        With `expected` (the batch's request count), a download that ends cleanly but short counts as broken.
        """
        remote = remote_batch(batch) if isinstance(batch, MessageBatch) else await self.backend.retrieve(batch)
        batch_id = remote.id
        outcomes: dict[str, Outcome] = {}

        codec = self.backend.codec

        def handle(line: ResultLine | UnreadableLine) -> None:
            custom_id = str(custom_id_of(codec, line))
            request = requests.get(custom_id) if requests is not None else None
            if requests is not None and request is None:
                log.warning("Batch %s returned a result for unknown custom_id %r.", batch_id, custom_id)
                return
            model = request.response_model if request is not None else None
            outcome, _ = outcome_of(codec, line, custom_id, batch_id=batch_id, request_id=request_id)
            outcomes[custom_id] = parsed_outcome(outcome, model)

        await self.backend.stream_results(remote, handle, expected=expected)
        for custom_id in requests or ():
            if custom_id not in outcomes:
                outcomes[custom_id] = BatchRequestError(
                    f"Batch {batch_id} ended without a result for request {custom_id}.",
                    batch_id=batch_id,
                    custom_id=custom_id,
                )
        return outcomes

    async def cancel(self, batch_id: str) -> MessageBatch:
        """Ask the API to cancel the batch; it moves to `canceling`, then ends with unprocessed requests canceled."""
        return _message_batch(await self.backend.cancel(batch_id))

    async def aclose(self) -> None:
        await self.backend.aclose()


def _message_batch(remote: RemoteBatch) -> MessageBatch:
    assert isinstance(remote.handle, MessageBatch), remote
    return remote.handle


def _total(batch: MessageBatch) -> int:
    counts = batch.request_counts
    return counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
