"""`ClaudeBatchProvider`: answers requests through Anthropic's Message Batches API.

One call of `complete_many` is one batch: submit (`POST /v1/messages/batches`), poll (`GET .../{id}`) every
`poll_interval` seconds until the batch ends or `max_wait` passes, then stream the results line by line and join
them to their requests on `custom_id`. Each request gets its own outcome; one failure never fails its neighbours.

`submit`, `wait`, `collect` and `cancel` are public so that a caller can park a batch and pick it up later.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import httpx2
from anthropic.types.messages import MessageBatch
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, retry_if_result, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from lowtide.config import BatchProcessingMode, BatchSettings, TimeoutPolicy
from lowtide.errors import (
    ActorError,
    APIConnectionError,
    APIError,
    BatchRequestError,
    BatchTimeoutError,
    ConfigurationError,
    OverloadedError,
    RateLimitError,
)
from lowtide.providers.anthropic.checks import ModelDirectory, directory_for, preflight
from lowtide.providers.anthropic.client import build_client
from lowtide.providers.anthropic.mapping import BatchEntry, to_batch_request, to_outcome, translate_errors
from lowtide.providers.base import Capability, Outcome, Provider, ProviderOptions
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "ClaudeBatchProvider", "PreparedBatch", "request_id_of"]

log = logging.getLogger(__name__)

MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256 * 1024 * 1024

T = TypeVar("T")

_JSON_BODY = {"Content-Type": "application/json"}
_RESULTS_FILE = {"Accept": "application/binary"}


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


class ClaudeBatchProvider(Provider):
    """Anthropic's Message Batches API: half the price of live calls, results within 24 hours."""

    name: ClassVar[str] = "anthropic"
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

    def __init__(self, options: ProviderOptions) -> None:
        client, self._owns_client = build_client(options)
        # lowtide decides what is retried: a blind retry of `create` could pay for the same batch twice.
        self._client = client.with_options(max_retries=0)
        self._closable = client
        self._clock = options.clock
        self.settings: BatchSettings = options.batch

    @functools.cached_property
    def endpoint(self) -> str:
        """The API's base URL: what the ledger records of where a batch lives (never the key)."""
        return str(self._client.base_url).rstrip("/")

    @functools.cached_property
    def credential(self) -> str:
        """An in-memory identity of the credentials, for grouping calls into batches; never stored or logged."""
        key = self._client.api_key or self._client.auth_token or ""
        # An injected client (an emulator's, say) is its own endpoint even when base URLs look alike.
        owner = "own" if self._owns_client else f"client-{id(self._closable)}"
        return hashlib.sha256(f"{owner}:{key}".encode()).hexdigest()

    @functools.cached_property
    def _models(self) -> ModelDirectory:
        # The client as given or built (not the copy without retries), which is what names the endpoint.
        return directory_for(self._closable, owned=self._owns_client)

    async def preflight(self, request: ActorRequest) -> None:
        await preflight(self._client, self._models, request)

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        [outcome] = await self.complete_many([request])
        if isinstance(outcome, ActorError):
            raise outcome
        return outcome

    async def complete_many(self, requests: Sequence[ActorRequest]) -> list[Outcome]:
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
        body = self.batch_body(
            (entry["custom_id"], json.dumps(entry["params"], separators=(",", ":"))) for entry in entries
        )
        return await self.create_body(body, len(entries))

    @staticmethod
    def batch_body(entries: Iterable[tuple[str, str]]) -> bytes:
        """The body of a create, joined from (custom_id, Messages params as JSON) pairs whose custom_ids are checked.

        Joined from JSON the caller holds (the ledger's), rather than built by the SDK's `batches.create`, which
        copies every request before it encodes it.
        """
        parts = [f'{{"custom_id":"{custom_id}","params":{params}}}' for custom_id, params in entries]
        return ('{"requests":[' + ",".join(parts) + "]}").encode()

    async def create_body(self, body: bytes, count: int) -> MessageBatch:
        """Create a batch of `count` requests from its `batch_body`.

        Retried only when the API refused it outright (429, 529), never on doubt.
        """

        async def create() -> MessageBatch:
            return await self._client.post(
                "/v1/messages/batches", cast_to=MessageBatch, content=body, options={"headers": _JSON_BODY}
            )

        batch = await self._retrying(create, retry_on=(RateLimitError, OverloadedError))
        log.info("Submitted batch %s with %d request(s).", batch.id, count)
        return batch

    async def retrieve(self, batch_id: str) -> MessageBatch:
        return await self._retrying(lambda: self._client.messages.batches.retrieve(batch_id))

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
        settings = self.settings
        start = self._clock.now() if started_at is None else started_at
        deadline = start + settings.max_wait
        known: list[MessageBatch] = [batch] if isinstance(batch, MessageBatch) else []
        batch_id = batch.id if isinstance(batch, MessageBatch) else batch

        async def poll() -> MessageBatch:
            # The batch we already hold counts as the first look, saving one call.
            seen = known.pop() if known else await self.retrieve(batch_id)
            if on_status is not None:
                on_status(seen)
            return seen

        def remaining(_: RetryCallState) -> float:
            return max(0.0, min(settings.poll_interval, deadline - self._clock.now()))

        def out_of_time(_: RetryCallState) -> bool:
            return self._clock.now() >= deadline

        def last_seen(state: RetryCallState) -> MessageBatch:
            assert state.outcome is not None
            return state.outcome.result()

        polling: AsyncRetrying = AsyncRetrying(
            sleep=self._clock.sleep,
            wait=remaining,
            stop=out_of_time,
            retry=retry_if_result(lambda b: b.processing_status != "ended"),
            retry_error_callback=last_seen,
        )
        latest: MessageBatch = await polling(poll)
        if latest.processing_status == "ended":
            return latest
        await self._give_up(batch_id, elapsed=self._clock.now() - start)
        raise AssertionError("unreachable")  # pragma: no cover

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
        batch_id = batch.id if isinstance(batch, MessageBatch) else batch
        outcomes: dict[str, Outcome] = {}

        def handle(line: dict[str, Any]) -> None:
            custom_id = str(line.get("custom_id"))
            request = requests.get(custom_id) if requests is not None else None
            if requests is not None and request is None:
                log.warning("Batch %s returned a result for unknown custom_id %r.", batch_id, custom_id)
                return
            model = request.response_model if request is not None else None
            outcomes[custom_id] = to_outcome(line, batch_id=batch_id, request_id=request_id, response_model=model)

        await self.stream_results(batch, handle, expected=expected)
        for custom_id in requests or ():
            if custom_id not in outcomes:
                outcomes[custom_id] = BatchRequestError(
                    f"Batch {batch_id} ended without a result for request {custom_id}.",
                    batch_id=batch_id,
                    custom_id=custom_id,
                )
        return outcomes

    async def stream_results(
        self,
        batch: MessageBatch | str,
        handle: Callable[[dict[str, Any]], None],
        *,
        expected: int | None = None,
    ) -> None:
        """Feed each results line of an ended batch to `handle` as the JSON object the API sent, never holding the
        whole file. Given the ended batch, its `results_url` is used as it is; given an id, the batch is looked up.

        Lines are decoded with `json.loads` alone: the SDK's decoder would build models for every line, several
        times the work, and lowtide reads the JSON directly. A broken stream (a dropped connection, a line cut
        short, or fewer lines than `expected`) is retried from the start, so `handle` must accept a line it has
        seen before.
        """
        batch_id = batch.id if isinstance(batch, MessageBatch) else batch
        known = batch if isinstance(batch, MessageBatch) and batch.results_url else None

        async def stream() -> None:
            nonlocal known
            if known is None:
                known = await self._client.messages.batches.retrieve(batch_id)
            if not known.results_url:
                raise APIError(f"Batch {batch_id} has no results to download yet (it is {known.processing_status}).")
            lines = 0
            response = await self._client.get(
                known.results_url, cast_to=httpx2.Response, stream=True, options={"headers": _RESULTS_FILE}
            )
            try:
                async for text in response.aiter_lines():
                    if not text:
                        continue
                    lines += 1
                    handle(json.loads(text))
            finally:
                await response.aclose()
            if expected is not None and lines < expected:
                raise APIConnectionError(f"The results of batch {batch_id} ended after {lines} of {expected} lines.")

        await self._retrying(stream)

    async def recent_batches(self, *, created_after: float) -> list[MessageBatch]:
        """Batches the API lists as created after `created_after` (epoch seconds), newest first."""
        found: list[MessageBatch] = []

        async def listing() -> None:
            found.clear()
            with translate_errors():
                async for batch in self._client.messages.batches.list(limit=100):
                    if batch.created_at.timestamp() < created_after:
                        break
                    found.append(batch)

        await self._retrying(listing)
        return found

    async def cancel(self, batch_id: str) -> MessageBatch:
        """Ask the API to cancel the batch; it moves to `canceling`, then ends with unprocessed requests canceled."""
        batch = await self._retrying(lambda: self._client.messages.batches.cancel(batch_id))
        log.info("Cancellation of batch %s requested (%s).", batch_id, batch.processing_status)
        return batch

    async def aclose(self) -> None:
        if self._owns_client:
            await self._closable.close()

    async def _give_up(self, batch_id: str, *, elapsed: float) -> None:
        canceled = False
        if self.settings.on_timeout is TimeoutPolicy.CANCEL:
            try:
                await self.cancel(batch_id)
                canceled = True
            except APIError as exc:
                log.warning("Could not cancel batch %s after its maximum wait: %s", batch_id, exc)
        raise BatchTimeoutError(batch_id=batch_id, elapsed=elapsed, max_wait=self.settings.max_wait, canceled=canceled)

    async def _retrying(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        retry_on: tuple[type[APIError], ...] | None = None,
    ) -> T:
        """Run `call` with SDK errors translated, retrying transient failures with backoff and jitter.

        `retry_on` narrows what is retried; by default every error that says it is retryable is.
        A wait the API asked for (`retry-after`) is honoured.
        """
        backoff = wait_exponential_jitter(initial=1, max=60)

        def should_retry(exc: BaseException) -> bool:
            if not isinstance(exc, APIError):
                return False
            return isinstance(exc, retry_on) if retry_on is not None else exc.retryable

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            if isinstance(exc, RateLimitError) and exc.retry_after is not None:
                return exc.retry_after
            return backoff(state)

        async def translated() -> T:
            with translate_errors():
                return await call()

        retrying: AsyncRetrying = AsyncRetrying(
            sleep=self._clock.sleep,
            stop=stop_after_attempt(self.settings.api_retries + 1),
            wait=wait,
            retry=retry_if_exception(should_retry),
            reraise=True,
        )
        return await retrying(translated)


def request_id_of(batch: MessageBatch) -> str | None:
    """The `request-id` the API gave the call that returned `batch` (the SDK keeps it on the object)."""
    value = getattr(batch, "_request_id", None)
    return value if isinstance(value, str) else None


def _total(batch: MessageBatch) -> int:
    counts = batch.request_counts
    return counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
