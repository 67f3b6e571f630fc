"""Anthropic's Message Batches API as a `BatchBackend`: every shape, status name and id rule of it stays here.

The SDK client has its own retries off: status checks, result downloads, listings and cancels are retried here
(tenacity, with backoff and jitter, and the `retry-after` the API asked for); a create only when the API refused it
outright (429, 529), never on doubt.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from decimal import Decimal
from typing import Any, cast

import httpx2
from anthropic import AsyncAnthropic
from anthropic.pagination import AsyncPage
from anthropic.types.messages import MessageBatch
from pydantic import BaseModel

from lowtide.batching.backend import (
    BatchCodec,
    BatchLimits,
    Counts,
    CreateSteps,
    CustomIdParts,
    Phase,
    RemoteBatch,
    ResultLine,
    Settled,
    UnreadableLine,
    credential_of,
)
from lowtide.batching.lines import feed_lines
from lowtide.config.actors import BatchProcessingMode, BatchSettings
from lowtide.core.clock import Clock
from lowtide.cost.pricing import cost_range, estimate_input_tokens, worst_case_cost
from lowtide.errors import APIConnectionError, APIError, OverloadedError, RateLimitError
from lowtide.providers.anthropic.caching import AnthropicCaching
from lowtide.providers.anthropic.mapping import (
    custom_id_for,
    custom_id_parts,
    line_outcome,
    parse_response,
    to_message_params,
    translate_errors,
)
from lowtide.providers.anthropic.options import GEN_AI_PROVIDER_NAME
from lowtide.providers.anthropic.rules import USAGE
from lowtide.providers.sdk_backend import SdkBatchBackend
from lowtide.types import ActorRequest, ActorResponse

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_REQUESTS",
    "AnthropicBatchBackend",
    "AnthropicBatchCodec",
    "remote_batch",
    "request_id_of",
]

log = logging.getLogger(__name__)

MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256 * 1024 * 1024


_JSON_BODY = {"Content-Type": "application/json"}
_RESULTS_FILE = {"Accept": "application/binary"}
_ENVELOPE_BYTES = len('{"custom_id":"","params":},')
_PHASES = {"in_progress": Phase.RUNNING, "canceling": Phase.CANCELING, "ended": Phase.ENDED}


def request_id_of(batch: MessageBatch) -> str | None:
    """The `request-id` the API gave the call that returned `batch` (the SDK keeps it on the object)."""
    value = getattr(batch, "_request_id", None)
    return value if isinstance(value, str) else None


def remote_batch(batch: MessageBatch) -> RemoteBatch:
    """The neutral record of a Message Batch."""
    counts = batch.request_counts
    return RemoteBatch(
        id=batch.id,
        phase=_PHASES[batch.processing_status],
        status=batch.processing_status,
        created_at=batch.created_at.timestamp(),
        counts=Counts(
            processing=counts.processing,
            succeeded=counts.succeeded,
            errored=counts.errored,
            canceled=counts.canceled,
            expired=counts.expired,
        ),
        ended_at=batch.ended_at.timestamp() if batch.ended_at is not None else None,
        cancel_requested=batch.cancel_initiated_at is not None,
        request_id=request_id_of(batch),
        handle=batch,
    )


class AnthropicBatchCodec(BatchCodec):
    """Message Batches requests and results: Messages parameters, `custom_id` rules, result lines."""

    name = "anthropic"
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=24.0)
    prompt_caching = AnthropicCaching()

    # Requests.

    def encode_request(self, request: ActorRequest) -> dict[str, Any]:
        return to_message_params(request)

    def custom_id_for(self, key: str, ledger: str | None) -> str:
        return custom_id_for(key, ledger)

    def custom_id_parts(self, custom_id: str) -> CustomIdParts | None:
        return custom_id_parts(custom_id)

    def decode_input(self, line: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """A request of a create's body (`{"custom_id", "params"}`): the API never shows one back, but the shape is
        the codec's."""
        custom_id, params = line.get("custom_id"), line.get("params")
        if not isinstance(custom_id, str) or not isinstance(params, Mapping):
            return None
        return custom_id, cast("Mapping[str, Any]", params)

    def request_size(self, custom_id: str, params_json: str) -> int:
        return len(params_json.encode()) + len(custom_id.encode()) + _ENVELOPE_BYTES

    def encode(self, entries: Iterable[tuple[str, str]]) -> bytes:
        """The body of a create, joined from JSON the caller holds (the ledger's), rather than built by the SDK's
        `batches.create`, which copies every request before it encodes it."""
        parts = [f'{{"custom_id":"{custom_id}","params":{params}}}' for custom_id, params in entries]
        return ('{"requests":[' + ",".join(parts) + "]}").encode()

    def worst_case_usd(
        self, params: Mapping[str, Any], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        return worst_case_cost(params, mode=mode, provider=USAGE)

    def cost_range(self, params: Mapping[str, Any]) -> tuple[Decimal, Decimal] | None:
        return cost_range(
            self.model_of(params),
            input_tokens=estimate_input_tokens(params),
            max_output_tokens=int(params.get("max_tokens", 0)),
            mode=BatchProcessingMode.BATCH,
            provider=USAGE,
        )

    # Answers.

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, Any] | None]:
        return line_outcome(line, batch_id=batch_id, request_id=request_id)

    def parse(self, response: ActorResponse[object], response_model: type[BaseModel]) -> ActorResponse[object]:
        return parse_response(response, response_model)


class AnthropicBatchBackend(SdkBatchBackend):
    """The Message Batches API through one SDK client (its own retries off: lowtide decides what is retried)."""

    codec: BatchCodec = AnthropicBatchCodec()

    def __init__(self, client: AsyncAnthropic, *, owns_client: bool, clock: Clock, settings: BatchSettings) -> None:
        self._client = client.with_options(max_retries=0)
        key = self._client.api_key or self._client.auth_token or ""
        super().__init__(
            endpoint=str(self._client.base_url).rstrip("/"),
            credential=credential_of(key, owned=owns_client, client=client),
            clock=clock,
            settings=settings,
        )
        self._closable = client
        self._owns_client = owns_client

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """One call; the Message Batches API takes no metadata, so `intent_id` cannot travel with it."""

        async def create() -> MessageBatch:
            return await self._client.post(
                "/v1/messages/batches", cast_to=MessageBatch, content=body, options={"headers": _JSON_BODY}
            )

        batch = await self._retrying(create, retry_on=(RateLimitError, OverloadedError))
        log.info("Submitted batch %s with %d request(s).", batch.id, count)
        return remote_batch(batch)

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        async def listing() -> AsyncGenerator[RemoteBatch, None]:
            with translate_errors():
                async for batch in self._client.messages.batches.list(limit=self.list_page):
                    yield remote_batch(batch)

        return await self._newest_since(listing, created_after)

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every Message Batch the workspace lists (29 days' worth: the API keeps them no longer), newest first, a
        page of 100 at a time, each page's call retried. A batch's requests are named only in its results, once it
        has ended: `inputs` shows none."""
        after: str | None = None
        while True:

            async def page(cursor: str | None = after) -> AsyncPage[MessageBatch]:
                with translate_errors():
                    if cursor is None:
                        return await self._client.messages.batches.list(limit=self.list_page)
                    return await self._client.messages.batches.list(limit=self.list_page, after_id=cursor)

            listed = await self._retrying(page)
            for batch in listed.data:
                yield remote_batch(batch)
            if not listed.has_more or not listed.last_id:
                return
            after = listed.last_id

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._retrying(lambda: self._client.messages.batches.retrieve(batch_id)))

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """Stream the results file from the ended batch's `results_url`, each line read once, by orjson, from the bytes
        as they came: the SDK's decoder would build models for every line, several times the work. A whole line that
        cannot be read goes to `handle` as an `UnreadableLine`. A broken stream (a dropped connection, a last line
        cut short, or fewer lines than `expected`) is fetched again from the start."""

        async def stream() -> None:
            url = await self._results_url(batch)
            response = await self._client.get(url, cast_to=httpx2.Response, stream=True, options=_RESULTS_OPTIONS)
            try:
                lines = await feed_lines(response.aiter_bytes(), handle, source=f"the results of batch {batch.id}")
            finally:
                await response.aclose()
            if expected is not None and lines < expected:
                raise APIConnectionError(f"The results of batch {batch.id} ended after {lines} of {expected} lines.")

        await self._retrying(stream)

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        async def peek() -> str | None:
            url = await self._results_url(batch)
            response = await self._client.get(url, cast_to=httpx2.Response, stream=True, options=_RESULTS_OPTIONS)
            first: list[ResultLine | UnreadableLine] = []
            try:
                await feed_lines(
                    response.aiter_bytes(), first.append, source=f"the results of batch {batch.id}", first_only=True
                )
            finally:
                await response.aclose()
            if not first:
                return None
            line = first[0]
            custom_id = line.custom_id if isinstance(line, UnreadableLine) else line.get("custom_id")
            return custom_id if isinstance(custom_id, str) else None

        return await self._retrying(peek)

    async def cancel(self, batch_id: str) -> RemoteBatch:
        batch = await self._retrying(lambda: self._client.messages.batches.cancel(batch_id))
        log.info("Cancellation of batch %s requested (%s).", batch_id, batch.processing_status)
        return remote_batch(batch)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._closable.close()

    async def _results_url(self, batch: RemoteBatch) -> str:
        known = batch.handle if isinstance(batch.handle, MessageBatch) and batch.handle.results_url else None
        if known is None:
            known = await self._client.messages.batches.retrieve(batch.id)
        if not known.results_url:
            raise APIError(f"Batch {batch.id} has no results to download yet (it is {known.processing_status}).")
        return known.results_url

    def _translate(self) -> AbstractContextManager[None]:
        return translate_errors()


_RESULTS_OPTIONS: Any = {"headers": _RESULTS_FILE}
