"""The batch engine: durable, coalesced, exactly-once batch calls for one endpoint and key in one process.

Every call is recorded in the ledger under its key before anything is sent. Concurrent calls are gathered for
`coalesce_window` seconds and flushed as one batch (earlier when the next request would cross the batch limits).
The intent is committed before `create`, the API's batch id right after. A create whose outcome is unknown is
reconciled against the API's list of batches before anything is sent again. One poller per batch serves every
waiter in the process; results are stored as they stream and handed to their waiters. A call whose key the ledger
already knows attaches to what is there: a stored result, a batch in flight, or work a dead process left behind.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import os
import socket
import uuid
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from anthropic.types.messages import MessageBatch
from pydantic import BaseModel

from lowtide.batching.crashpoints import crash_during, crashpoint
from lowtide.batching.reconcile import Candidate, Unresolved, decide
from lowtide.batching.records import error_from_json, error_to_json, response_from_json
from lowtide.clock import Clock
from lowtide.config import BatchSettings
from lowtide.errors import (
    ActorError,
    APIConnectionError,
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestExpired,
    BatchTimeoutError,
    ConfigurationError,
    ServerError,
    classify,
)
from lowtide.ledger.store import (
    BatchRecord,
    BatchState,
    Ledger,
    NewRequest,
    OutcomeRow,
    RequestRecord,
    RequestState,
    answer_json,
)
from lowtide.providers.anthropic.batch import ClaudeBatchProvider, request_id_of
from lowtide.providers.anthropic.mapping import custom_id_for, line_outcome, parse_response
from lowtide.providers.base import Outcome
from lowtide.types import ActorResponse

__all__ = [
    "BatchEngine",
    "GroupCall",
    "Ticket",
    "close_engines_of",
    "derive_key",
    "engine_for",
    "owner_id",
    "ticket_for",
]

log = logging.getLogger(__name__)

# How far the API's clock may differ from ours when matching an unknown create against the list of batches.
CLOCK_SKEW = 300.0
RESULTS_PER_TRANSACTION = 2000  # results stored (and their callers woken) per transaction


def owner_id() -> str:
    """This process, as the ledger names it: host, pid and a random part (pids are reused)."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def _owner_alive(owner: str | None, until: float | None, now: float) -> bool:
    """Whether the process named `owner` may still be working; a dead pid on this host frees its work at once."""
    if owner is None:
        return False
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host == socket.gethostname() and pid_text.isdigit():
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # pragma: no cover - someone else's live process
            return True
        return True
    return until is None or until >= now


def derive_key(provider: str, params: dict[str, Any] | str) -> str:
    """The key of a request the caller did not name: a digest of everything it sends (params, or their JSON).

    The same request made again attaches to the first one's batch or stored answer instead of paying twice.
    """
    digest = hashlib.sha256(f"{provider}\n{_params_json(params)}".encode()).hexdigest()
    return f"auto-{digest[:40]}"


# Per event loop (weakly: an engine's tasks and futures belong to its loop, and a new loop may reuse a dead one's
# id), then per ledger, endpoint, credential and batch settings.
_engines: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[Path, str, str, BatchSettings], BatchEngine]
] = weakref.WeakKeyDictionary()


def engine_for(provider: ClaudeBatchProvider, ledger: Ledger, *, settings: BatchSettings, clock: Clock) -> BatchEngine:
    """The process's engine for this event loop, ledger, endpoint, credential and batch settings.

    Actors that share all of these share one engine, so their concurrent calls travel in the same batches.
    """
    engines = _engines.setdefault(asyncio.get_running_loop(), {})
    index = (ledger.path, provider.endpoint, provider.credential, settings)
    engine = engines.get(index)
    if engine is None or engine.closed:
        engine = engines[index] = BatchEngine(
            provider, ledger, endpoint=provider.endpoint, settings=settings, clock=clock
        )
    return engine


async def close_engines_of(provider: ClaudeBatchProvider) -> None:
    """Close and forget the engines that use `provider` (its actor is closing); others build a new one."""
    engines = _engines.get(asyncio.get_running_loop(), {})
    for index, engine in list(engines.items()):
        if engine.provider is provider:
            del engines[index]
            await engine.aclose()


def ticket_for(ledger: Ledger, key: str) -> Ticket:
    """Where the request `key` stands, from the ledger alone (no API call, no event loop needed)."""
    record = ledger.request(key)
    if record is None:
        raise ConfigurationError(f"The ledger has no request with key {key!r}.", field="key")
    return Ticket.of(record, ledger.batch(record.batch_id) if record.batch_id else None)


class Ticket(BaseModel):
    """The handle of a parked request."""

    key: str
    actor: str
    state: str
    batch_id: str | None
    """The API's batch id, once the batch exists."""
    ledger_batch_id: str | None
    attempts: int
    cost_usd: Decimal | None = None

    @classmethod
    def of(cls, record: RequestRecord, batch: BatchRecord | None) -> Ticket:
        return cls(
            key=record.key,
            actor=record.actor,
            state=ticket_state(record, batch),
            batch_id=batch.provider_batch_id if batch is not None else None,
            ledger_batch_id=record.batch_id,
            attempts=record.attempts,
            cost_usd=record.cost_usd,
        )


def ticket_state(record: RequestRecord, batch: BatchRecord | None) -> str:
    """The state a user sees: `waiting-on-batch`, `ended`, `collected`, `canceled`, `expired` or `failed`."""
    match record.state:
        case RequestState.SUCCEEDED:
            return "collected"
        case RequestState.FAILED | RequestState.CANCELED | RequestState.EXPIRED:
            return record.state.value
        case RequestState.WAITING if batch is not None and batch.state is BatchState.ENDED:
            return "ended"
        case _:
            return record.state.value


@dataclass(frozen=True)
class GroupCall:
    """One request of a group sent as a batch of its own (`BatchEngine.send_group`)."""

    key: str
    params: dict[str, Any]
    size: int
    """Its bytes in the create request, as the caller's splitting counted them."""
    worst_case_usd: Decimal | None = None


@dataclass(slots=True)
class _Queued:
    key: str
    custom_id: str
    params: dict[str, Any] | str
    """The Messages params, or (for a call claimed just now) their JSON as the ledger holds it."""
    size: int


# What claiming a call gives: the future of its outcome when it is new (queued here), else the record the ledger had.
_Entered = RequestRecord | asyncio.Future[Outcome]
# Who waits on a background task: their keys, or a callable that fails them with the task's error.
_Waiters = list[str] | Callable[[ActorError], None]


class BatchEngine:
    """Runs batch-mode calls for one provider endpoint and key, durably, through one ledger."""

    def __init__(
        self,
        provider: ClaudeBatchProvider,
        ledger: Ledger,
        *,
        endpoint: str,
        settings: BatchSettings,
        clock: Clock,
        owner: str | None = None,
    ) -> None:
        self.provider = provider
        self.ledger = ledger
        self.endpoint = endpoint
        self.settings = settings
        self._clock = clock
        self.owner = owner or owner_id()
        self._queue: list[_Queued] = []
        self._queue_bytes = 0
        self._queued_keys: set[str] = set()
        self._window: asyncio.Task[None] | None = None
        self._futures: dict[str, asyncio.Future[Outcome]] = {}
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._reconciling: dict[str, asyncio.Task[None]] = {}
        self._creating: dict[str, asyncio.Future[None]] = {}
        """Intents whose create is in flight here; each future is done once the create came back, however."""
        self._foreign: set[str] = set()
        """API batch ids whose results showed they belong to no unresolved intent of the ledger."""
        self._tasks: set[asyncio.Task[Any]] = set()
        # The calls waiting for their claim to be written, and their futures (two lists: no pair per call).
        self._claims: list[tuple[str, str, str, str, dict[str, Any] | str, int, Decimal | None, bool]] = []
        self._claimed: list[asyncio.Future[Any]] = []
        self._reserved: dict[str, Decimal] = {}
        self._claiming: asyncio.Task[None] | None = None
        self.closed = False
        self.on_results: Callable[[str, str, Sequence[Mapping[str, Any]]], None] | None = None
        """Called after each chunk of results is stored, with (ledger batch id, API batch id, the chunk's results
        lines as the API sent them). A download broken off and fetched again passes each line once. What it raises
        is logged, not raised: the answers are already in the ledger."""

    # The calls an actor makes.

    async def run(
        self,
        params: dict[str, Any],
        *,
        key: str,
        actor: str,
        response_model: type[BaseModel] | None = None,
        worst_case_usd: Decimal | None = None,
    ) -> ActorResponse[Any]:
        """Answer one call: from the ledger if it already has the answer, else through a (shared) batch."""
        model = str(params.get("model", ""))
        outcome = self.claim(params, model=model, key=key, actor=actor, worst_case_usd=worst_case_usd)
        del params  # queued as JSON once claimed: thousands of waiting calls need not keep their params alive
        return _deliver(await outcome, response_model)

    def claim(
        self,
        params: dict[str, Any] | str,
        *,
        model: str,
        key: str,
        actor: str,
        worst_case_usd: Decimal | None = None,
    ) -> asyncio.Future[Outcome]:
        """`run` for a caller that waits in its own coroutine: claim `key` for `params` (or their JSON as
        `stored_json` gives it), with every call of this moment in one transaction; `deliver` what the future gives.

        The future is the call's outcome itself: a call waits on one future, woken once. It fails if the ledger
        knows `key` for other params.
        """
        outcome: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._claim(params, model, key, actor, worst_case_usd, outcome, until_final=True)
        return outcome

    @staticmethod
    def deliver(outcome: Outcome, response_model: type[BaseModel] | None) -> ActorResponse[Any]:
        """The response of an outcome (parsed into `response_model`), or its error raised."""
        return _deliver(outcome, response_model)

    async def submit(
        self, params: dict[str, Any], *, key: str, actor: str, worst_case_usd: Decimal | None = None
    ) -> Ticket:
        """Park one call: return as soon as its batch exists (or its answer is already stored)."""
        entered = await self._claim_record(params, key=key, actor=actor, worst_case_usd=worst_case_usd)
        record = entered if isinstance(entered, RequestRecord) else self._reread(key)
        while record.state in (RequestState.PENDING, RequestState.SUBMITTING):
            outcome = self._futures.get(record.key)
            await self._clock.sleep(min(0.05, self.settings.coalesce_window or 0.05))
            failure = outcome.exception() if outcome is not None and outcome.done() else None
            if failure is not None:
                raise failure  # the create was refused: say so rather than try again forever
            record = self._reread(record.key)
            if record.state is RequestState.PENDING and not self._mine(record):
                record = self._rescue_pending(record)
        return self.ticket(record.key)

    async def attach(self, key: str, response_model: type[BaseModel] | None = None) -> ActorResponse[Any]:
        """Wait for the answer of a key already in the ledger (parked earlier, maybe by another process)."""
        record = self.ledger.request(key)
        if record is None:
            raise ConfigurationError(f"The ledger has no request with key {key!r}.", field="key")
        return _deliver(await self._final(record), response_model)

    async def send_group(self, calls: Sequence[GroupCall], *, actor: str) -> dict[str, asyncio.Future[Outcome]]:
        """Send `calls` as one batch of their own, now: a bulk run splits its batches itself, so no window applies.

        The claims are one transaction. A key the ledger already knows attaches as `run` would (its stored answer,
        or the batch it is in). Returns a future per key, resolved with the key's final outcome (never raised).
        """
        now = self._clock.now()
        records = self.ledger.claim(
            [
                NewRequest(
                    key=call.key,
                    custom_id=custom_id_for(call.key),
                    actor=actor,
                    model=str(call.params.get("model", "")),
                    params=call.params,
                    max_attempts=self.settings.max_attempts,
                    worst_case_usd=call.worst_case_usd,
                )
                for call in calls
            ],
            owner=self.owner,
            until=now + self.settings.lease_seconds,
            now=now,
        )
        by_key = {call.key: call for call in calls}
        futures: dict[str, asyncio.Future[Outcome]] = {}
        fresh: list[_Queued] = []
        for record in records:
            call = by_key[record.key]
            if record.state is RequestState.PENDING and record.owner != self.owner and not self._mine(record):
                # Claimed by a process that stopped before its batch existed: it travels in this group instead.
                record = self._take_abandoned(record) or record
            if record.state is RequestState.PENDING and record.owner == self.owner and not self._mine(record):
                fresh.append(_Queued(record.key, record.custom_id, call.params, call.size))
                futures[record.key] = self._future(record.key)
            else:
                futures[record.key] = asyncio.ensure_future(self._final(record))
        if fresh:
            self._spawn(self._dispatch(fresh), waiters=[entry.key for entry in fresh])
        return futures

    async def outcome(self, key: str) -> Outcome:
        """The final outcome of a key the ledger knows, waiting for its batch (or taking over dead work) if need be."""
        return await self._final(self._reread(key))

    def ticket(self, key: str) -> Ticket:
        return ticket_for(self.ledger, key)

    def result_of(self, record: RequestRecord, response_model: type[BaseModel] | None) -> ActorResponse[Any]:
        """The stored outcome of a final record: its response (parsed into `response_model`), or its error raised."""
        return _deliver(_outcome_of(record), response_model)

    async def collect_once(self, batches: Sequence[BatchRecord]) -> None:
        """Move outstanding batches forward once: reconcile unknown creates, store results of ended batches.

        A batch still processing is looked at and left; with a short `max_wait` this never waits long.
        """
        for batch in batches:
            if batch.state in (BatchState.INTENT, BatchState.UNKNOWN):
                if self._rescue_batch(batch):
                    await self._reconciling[batch.id]
            elif batch.provider_batch_id is not None and not self.settle_stored(batch):
                self._ensure_poller(batch.id)
        await self.drain()

    def settle_stored(self, batch: BatchRecord) -> bool:
        """Mark an ended batch collected when the ledger already holds every member's result; True if it did.

        A process that stopped after storing a batch's results but before saying the batch was collected leaves
        it `ended` with nothing left to fetch: this closes it without downloading its results again.
        """
        if batch.state is not BatchState.ENDED:
            return False
        records = self.ledger.requests_for(list(self.ledger.members(batch.id).values()))
        if not all(record.state.final or record.batch_id != batch.id for record in records):
            return False
        counts = batch.counts or {}
        state = (
            BatchState.CANCELED
            if any(record.state is RequestState.CANCELED for record in records)
            else BatchState.EXPIRED
            if counts.get("expired") and not counts.get("succeeded")
            else BatchState.COLLECTED
        )
        self.ledger.record_collected(batch.id, state=state, now=self._clock.now())
        return True

    async def drain(self) -> None:
        """Wait for everything this engine started (flushes, creates, pollers) to finish."""
        while self._tasks or self._queue:
            if self._queue and self._window is None:
                self._flush()
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        self.closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # Entering the ledger.

    def _claim_record(
        self, params: dict[str, Any], *, key: str, actor: str, worst_case_usd: Decimal | None = None
    ) -> asyncio.Future[_Entered]:
        """Claim `key` for `params`; the future gives a new request's outcome future (it is queued here), or the
        record of a key the ledger already knew. It fails if that key names other params."""
        claimed: asyncio.Future[_Entered] = asyncio.get_running_loop().create_future()
        self._claim(params, str(params.get("model", "")), key, actor, worst_case_usd, claimed, until_final=False)
        return claimed

    def _claim(
        self,
        params: dict[str, Any] | str,
        model: str,
        key: str,
        actor: str,
        worst_case_usd: Decimal | None,
        future: asyncio.Future[Any],
        *,
        until_final: bool,
    ) -> None:
        # A plain tuple while it waits (the collector stops tracking a tuple of strings): thousands wait at once.
        self._claims.append(
            (key, custom_id_for(key), actor, model, params, self.settings.max_attempts, worst_case_usd, until_final)
        )
        self._claimed.append(future)
        if self._claiming is None:
            self._claiming = self._spawn(self._write_claims(), waiters=[])
        if self._window is None:
            # The window counts from the call's arrival: its claim is written while the window runs.
            self._window = self._spawn(self._flush_after_window(self._clock.now()), waiters=self._window_failed)

    def reserve(self, actor: str, amount: Decimal) -> None:
        """Count a checked call's worst case against its actor until its claim is in the ledger."""
        self._reserved[actor] = self._reserved.get(actor, Decimal(0)) + amount

    def reserved(self, actor: str) -> Decimal:
        return self._reserved.get(actor, Decimal(0))

    async def _write_claims(self) -> None:
        """Record every call that arrived in this turn of the event loop in one transaction; queue the new ones."""
        await asyncio.sleep(0)
        raw, claimed_by, self._claims, self._claimed = self._claims, self._claimed, [], []
        self._claiming = None
        claims = [NewRequest(*claim[:7]) for claim in raw]
        for new in claims:  # counted in the ledger from here, or not at all
            if new.worst_case_usd is not None:
                self._reserved[new.actor] = self.reserved(new.actor) - new.worst_case_usd
        try:
            self._record_claims(raw, claims, claimed_by)
        except Exception as exc:  # a ledger that cannot be written (disk full, locked): the calls say so
            error = classify(exc, doing="recording the calls in the ledger")
            for claimed in claimed_by:
                if not claimed.done():
                    claimed.set_exception(error)
            self._fail([new.key for new in claims], error)

    def _record_claims(
        self,
        raw: Sequence[tuple[str, str, str, str, dict[str, Any] | str, int, Decimal | None, bool]],
        claims: Sequence[NewRequest],
        claimed_by: Sequence[asyncio.Future[Any]],
    ) -> None:
        now = self._clock.now()
        until = now + self.settings.lease_seconds
        inserted, known = self.ledger.claim_new(claims, owner=self.owner, until=until, now=now)
        records = {record.key: record for record in known}
        firsts: dict[str, NewRequest] = {}
        for (*_, until_final), new, claimed in zip(raw, claims, claimed_by, strict=True):
            record = records.get(new.key)
            if record is not None:
                if record.params != new.params and _canonical(record.params) != _params_json(new.params):
                    claimed.set_exception(_other_request(new.key))
                    continue
                if record.state is RequestState.PENDING and record.owner == self.owner:
                    self._enqueue(record)
                if not until_final:
                    claimed.set_result(record)
                elif record.state.final:
                    claimed.set_result(_outcome_of(record))
                else:
                    self._forward(self._final(record), claimed)
            elif new.key not in firsts:
                # Inserted just now, so this engine owns it: queued as the JSON the ledger holds, to send as it is.
                firsts[new.key] = new
                params = inserted[new.key]
                entry = _Queued(new.key, new.custom_id, params, len(params) + 64)
                if until_final:
                    self._futures[new.key] = claimed  # the caller's future is the outcome's: it is woken once
                    self._queue_entry(entry)
                else:
                    claimed.set_result(self._queue_entry(entry))
            elif _params_json(firsts[new.key].params) != _params_json(new.params):
                claimed.set_exception(_other_request(new.key))  # the same key twice in one moment, for two requests
            elif until_final:
                self._forward(self._future(new.key), claimed)
            else:
                claimed.set_result(self._future(new.key))

    def _forward(self, source: Awaitable[Outcome], future: asyncio.Future[Outcome]) -> None:
        """Resolve `future` with what `source` comes to (a caller attached to work already under way)."""

        async def forward() -> None:
            try:
                outcome = await source
            except asyncio.CancelledError:  # pragma: no cover - the engine closed under a waiting caller
                future.cancel()
                raise
            except Exception as exc:
                if not future.done():
                    future.set_exception(exc)
                return
            if not future.done():
                future.set_result(outcome)

        def failed(error: ActorError) -> None:
            if not future.done():
                future.set_exception(error)

        self._spawn(forward(), waiters=failed)

    def _mine(self, record: RequestRecord) -> bool:
        return record.key in self._queued_keys or record.key in self._futures

    def _reread(self, key: str) -> RequestRecord:
        record = self.ledger.request(key)
        assert record is not None, f"request {key} vanished from the ledger"
        return record

    # Waiting for a final outcome, whoever is working on it.

    async def _final(self, record: RequestRecord) -> Outcome:
        while not record.state.final:
            if record.state is RequestState.PENDING:
                if record.owner == self.owner or self._mine(record):
                    return await self._future(record.key)
                record = self._rescue_pending(record)
                if record.owner == self.owner:
                    continue
            elif record.state is RequestState.SUBMITTING:
                batch = self.ledger.batch(record.batch_id or "")
                if batch is not None and self._rescue_batch(batch):
                    return await self._future(record.key)
            else:  # waiting on a batch the API has
                self._ensure_poller(record.batch_id or "")
                return await self._future(record.key)
            # Another live process is on it: watch the ledger.
            await self._clock.sleep(self.settings.watch_interval)
            record = self._reread(record.key)
        return _outcome_of(record)

    def _rescue_pending(self, record: RequestRecord) -> RequestRecord:
        """Take over a pending request whose owner died or whose lease ran out, and queue it here."""
        taken = self._take_abandoned(record)
        if taken is not None and taken.state is RequestState.PENDING:
            self._enqueue(taken)
        return self._reread(record.key)

    def _take_abandoned(self, record: RequestRecord) -> RequestRecord | None:
        """Own a pending request whose owner died or whose lease ran out; its record now, or None if not taken."""
        now = self._clock.now()
        if _owner_alive(record.owner, record.owner_until, now) and record.owner != self.owner:
            return None
        # Seen dead (or out of its lease): take it, unless another process took it first.
        dead = record.owner if record.owner != self.owner else None
        until = now + self.settings.lease_seconds
        if self.ledger.take_over(record.key, owner=self.owner, until=until, now=now, dead_owner=dead):
            return self._reread(record.key)
        return None

    def _rescue_batch(self, batch: BatchRecord) -> bool:
        """Reconcile a batch whose create's outcome is unknown, unless a live process is still creating it."""
        if batch.id in self._reconciling or batch.id in self._creating:
            return True  # this process is on it: the caller waits for the outcome
        now = self._clock.now()
        if batch.owner != self.owner and _owner_alive(batch.owner, batch.owner_until, now):
            return False
        if not self.ledger.claim_batch(
            batch.id, owner=self.owner, until=now + self.settings.lease_seconds, now=now, force=True
        ):
            return False  # pragma: no cover - lost a race to another process; the caller watches the ledger
        self._reconciling[batch.id] = self._spawn(self._reconcile(batch.id), waiters=self._members_of(batch.id))
        return True

    def _future(self, key: str) -> asyncio.Future[Outcome]:
        future = self._futures.get(key)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._futures[key] = future
        return future

    def _settle(self, outcomes: Sequence[tuple[str, Outcome]]) -> None:
        """Hand final outcomes, as they were just stored, to the calls waiting on them."""
        for key, outcome in outcomes:
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                future.set_result(outcome)

    def _fail(self, keys: Sequence[str], error: ActorError) -> None:
        for key in keys:
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                future.set_exception(error)
                # Work nobody waits on (a collect, a requeue) may fail: that is recorded, not an unhandled error.
                # (Marked here rather than by a done callback on every future: one callback each costs a context.)
                future.exception()

    # Coalescing.

    def _enqueue(self, record: RequestRecord) -> None:
        self._queue_entry(_Queued(record.key, record.custom_id, record.params, record.params_bytes + 64))

    def _queue_entry(self, entry: _Queued) -> asyncio.Future[Outcome]:
        """Queue a request for the next batch (once); the future of its outcome."""
        if entry.key in self._queued_keys:
            return self._future(entry.key)
        if self._queue and (
            len(self._queue) + 1 > self.settings.max_batch_requests
            or self._queue_bytes + entry.size > self.settings.max_batch_bytes
        ):
            self._flush()
        self._queue.append(entry)
        self._queue_bytes += entry.size
        self._queued_keys.add(entry.key)
        if self._window is None:
            self._window = self._spawn(self._flush_after_window(self._clock.now()), waiters=self._window_failed)
        return self._future(entry.key)

    async def _flush_after_window(self, opened: float) -> None:
        await asyncio.sleep(0)  # the claims of this moment are written first
        await self._clock.sleep(max(0.0, opened + self.settings.coalesce_window - self._clock.now()))
        claiming = self._claiming
        if claiming is not None:
            await asyncio.shield(claiming)  # calls that arrived in the window are being claimed: they travel in it
        self._window = None
        self._flush()

    def _flush(self) -> None:
        if self._window is not None and self._window is not asyncio.current_task():
            self._window.cancel()
        self._window = None
        entries, self._queue, self._queue_bytes = self._queue, [], 0
        if entries:
            self._spawn(self._dispatch(entries), waiters=[entry.key for entry in entries])

    # Exactly-once submission.

    async def _dispatch(self, entries: list[_Queued]) -> None:
        batch_id = f"lt_{uuid.uuid4().hex}"
        now = self._clock.now()
        self.ledger.record_intent(
            batch_id,
            provider=self.provider.name,
            endpoint=self.endpoint,
            members=[(e.key, e.custom_id) for e in entries],
            request_bytes=sum(e.size for e in entries),
            owner=self.owner,
            until=now + self.settings.lease_seconds,
            now=now,
        )
        self._queued_keys.difference_update(e.key for e in entries)
        if not self._queued_keys:
            self._queued_keys = set()  # a set keeps its size once grown: 100,000 keys leave megabytes behind
        crashpoint("after-intent")
        keys = [e.key for e in entries]
        # Every custom_id here came from `custom_id_for`, so it is valid; params go as the JSON the ledger holds.
        body = self.provider.batch_body((e.custom_id, _params_json(e.params)) for e in entries)
        del entries
        timer = crash_during("during-create")
        # In flight from here until the create comes back: no reconciliation may adopt a batch this create made.
        created = self._creating[batch_id] = asyncio.get_running_loop().create_future()
        try:
            remote = await self.provider.create_body(body, len(keys))
        except (APIConnectionError, ServerError) as exc:
            # The API may or may not have the batch: find out before anything is sent again.
            log.warning("Create of batch %s has an unknown outcome (%s); reconciling.", batch_id, exc)
            self.ledger.record_unknown(batch_id, note=f"create outcome unknown: {type(exc).__name__}")
            self._reconciling[batch_id] = self._spawn(self._reconcile(batch_id), waiters=keys)
            return
        except ActorError as exc:
            # The API refused the batch: nothing was processed or charged. A later call may try again.
            self.ledger.record_refused(batch_id, note=f"refused: {exc}", now=self._clock.now())
            self._fail(keys, exc)
            return
        finally:
            del self._creating[batch_id]
            created.set_result(None)
            if timer is not None:  # pragma: no cover - only with a crash point set
                timer.cancel()
        crashpoint("after-create")
        try:
            self.ledger.record_submitted(
                batch_id,
                provider_batch_id=remote.id,
                processing_status=remote.processing_status,
                request_id=request_id_of(remote),
                now=self._clock.now(),
            )
        except Exception as exc:
            # The API has the batch, the ledger does not say so. Left `intent`, the next process (or `lowtide
            # collect`) reconciles it: it adopts this batch, which no other intent can claim. Nothing is resent.
            log.error("Batch %s was created as %s, but the ledger could not record it: %s", batch_id, remote.id, exc)
            try:  # not in flight any more: reconciliation adopts it, the one batch this intent can own
                self.ledger.record_unknown(batch_id, note=f"created as {remote.id}; not recorded: {exc}")
            except Exception:
                self._fail(keys, classify(exc, doing=f"recording batch {remote.id} in the ledger"))
                return
            self._reconciling[batch_id] = self._spawn(self._reconcile(batch_id), waiters=keys)
            return
        self._ensure_poller(batch_id, remote)

    async def _reconcile(self, batch_id: str) -> None:
        """Find the API's batch for an intent whose create is unknown; if it never arrived, send its requests again.

        A candidate is a batch the API created after our intent (less `CLOCK_SKEW`) with the same number of
        requests that no other ledger record has claimed. Results confirm the match by `custom_id`.
        """
        try:
            await self._reconcile_once(batch_id)
        except ActorError as exc:
            # The API cannot be asked: the batch stays `unknown` for a later call, `lowtide collect` or process.
            log.warning("Could not reconcile batch %s: %s", batch_id, exc)
            self._fail(list(self.ledger.members(batch_id).values()), exc)
        finally:
            self._reconciling.pop(batch_id, None)

    async def _reconcile_once(self, batch_id: str) -> None:
        """Apply `reconcile.decide` until it adopts a batch for this intent or sends its requests again.

        Each look lists the API's batches created since the intent (less `CLOCK_SKEW`) and reads the ledger's other
        unresolved intents of this endpoint. It never guesses between two intents that could own the same batch:
        it waits for a create in flight to come back, or for the candidates to end and their custom ids to say.
        """
        waiting_for = ""
        while True:
            record = self.ledger.batch(batch_id)
            assert record is not None
            if record.provider_batch_id is not None:  # adopted meanwhile: by a look at another intent's candidates
                self._ensure_poller(batch_id)
                return
            if record.state not in (BatchState.INTENT, BatchState.UNKNOWN):  # pragma: no cover - resolved elsewhere
                self._rewatch(list(self.ledger.members(batch_id).values()))
                return
            now = self._clock.now()
            others = [
                self._unresolved(other, now)
                for other in self.ledger.unresolved(provider=self.provider.name, endpoint=self.endpoint)
                if other.id != batch_id
            ]
            listed = {
                remote.id: remote
                for remote in await self.provider.recent_batches(created_after=record.intent_at - CLOCK_SKEW)
                if remote.id not in self._foreign and self.ledger.batch(remote.id) is None
            }
            decision = decide(
                self._unresolved(record, now),
                others,
                [_candidate(remote) for remote in listed.values()],
                now=now,
                grace=self.settings.reconcile_grace,
                skew=CLOCK_SKEW,
            )
            if decision.action.startswith("wait") and decision.reason != waiting_for:
                waiting_for = decision.reason
                log.info("Batch %s waits before it is reconciled: %s.", batch_id, decision.reason)
            match decision.action:
                case "adopt":
                    [candidate] = decision.candidates
                    if self.ledger.adopt(batch_id, provider_batch_id=candidate.id, now=self._clock.now()):
                        log.info("Batch %s reconciled with the API's %s.", batch_id, candidate.id)
                        self._ensure_poller(batch_id, listed[candidate.id])
                        return
                case "peek":
                    among = [batch_id, *(other.id for other in others)]
                    for candidate in decision.candidates:
                        await self._assign_by_results(listed[candidate.id], among)
                case "wait-create":
                    await self._await_creates(others)
                case "wait-listing":
                    remaining = record.intent_at + self.settings.reconcile_grace - now
                    await self._clock.sleep(min(self.settings.poll_interval, remaining))
                case "wait-end":
                    await self._clock.sleep(self.settings.poll_interval)
                case "resend":
                    self._resend(batch_id)
                    return

    def _unresolved(self, record: BatchRecord, now: float) -> Unresolved:
        """An intent as reconciliation sees it: in flight while a live process still waits for its create."""
        if record.id in self._creating:
            in_flight = True
        elif record.owner == self.owner or record.state is BatchState.UNKNOWN:
            in_flight = False  # this process's, and not being created: its outcome is unknown
        else:
            in_flight = _owner_alive(record.owner, record.owner_until, now)
        return Unresolved(record.id, record.request_count, record.intent_at, in_flight)

    async def _await_creates(self, others: Sequence[Unresolved]) -> None:
        """Wait for a rival create in flight to come back: at once for this process's, by watching the ledger for
        another process's."""
        here = [self._creating[other.id] for other in others if other.in_flight and other.id in self._creating]
        if here:
            await asyncio.wait(here, return_when=asyncio.FIRST_COMPLETED)
        else:
            await self._clock.sleep(self.settings.watch_interval)

    async def _assign_by_results(self, remote: MessageBatch, among: Sequence[str]) -> None:
        """Read the first custom id of an ended candidate's results: the intent holding that request owns it."""
        custom_id = await self.provider.first_custom_id(remote)
        owner = self.ledger.batch_holding(custom_id, among) if custom_id is not None else None
        if owner is None:
            log.warning("The API's batch %s holds no request of an unresolved intent; it is not lowtide's.", remote.id)
            self._foreign.add(remote.id)
        elif self.ledger.adopt(owner, provider_batch_id=remote.id, now=self._clock.now()):
            log.info("Batch %s reconciled with the API's %s by the custom ids in its results.", owner, remote.id)

    def _resend(self, batch_id: str) -> None:
        """The create never took effect: mark the intent failed and queue its requests for another batch."""
        log.warning("Batch %s never reached the API; its requests are sent again.", batch_id)
        keys = list(self.ledger.members(batch_id).values())
        self.ledger.record_refused(batch_id, note="create never reached the API (reconciled)", now=self._clock.now())
        now = self._clock.now()
        self.ledger.requeue(keys, owner=self.owner, until=now + self.settings.lease_seconds, now=now)
        for key in keys:
            self._enqueue(self._reread(key))

    def _rewatch(self, keys: Sequence[str]) -> None:  # pragma: no cover - an intent resolved by another process
        """Hand the waiters of `keys` to whatever the ledger now says of them."""
        for key in keys:
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                self._forward(self._final(self._reread(key)), future)

    # Polling and collecting.

    def _ensure_poller(self, batch_id: str, remote: MessageBatch | None = None) -> None:
        if batch_id in self._pollers:
            return
        self._pollers[batch_id] = self._spawn(self._poll(batch_id, remote), waiters=self._members_of(batch_id))

    async def _poll(self, batch_id: str, remote: MessageBatch | None) -> None:
        record = self.ledger.batch(batch_id)
        assert record is not None
        assert record.provider_batch_id is not None
        # Read while the batch runs, not after it ends: the answers are waited for from then on.
        members, attempts = self.ledger.members_and_attempts(batch_id)
        try:
            ended = await self.provider.wait(
                remote or record.provider_batch_id, on_status=self._status_recorder(batch_id)
            )
            await self._collect(batch_id, ended, members, attempts, request_id=record.request_id)
        except BatchTimeoutError as exc:
            exc.custom_ids = list(members)
            self._fail(list(members.values()), exc)  # the requests stay in the ledger, to be collected later
        except ActorError as exc:
            self._fail(list(members.values()), exc)
        finally:
            self._pollers.pop(batch_id, None)

    def _status_recorder(self, batch_id: str) -> Any:
        polls = 0

        def record(batch: MessageBatch) -> None:
            nonlocal polls
            counts = batch.request_counts.model_dump() if batch.processing_status == "ended" else None
            ended_at = batch.ended_at.timestamp() if batch.ended_at is not None else None
            self.ledger.record_status(
                batch_id, processing_status=batch.processing_status, counts=counts, ended_at=ended_at
            )
            polls += 1
            if polls > 1:
                crashpoint("while-polling")

        return record

    async def _collect(
        self,
        batch_id: str,
        ended: MessageBatch,
        members: dict[str, str],
        attempts: dict[str, tuple[int, int]],
        *,
        request_id: str | None = None,
    ) -> None:
        """Stream results into the ledger in chunks, settle waiters, and requeue what may succeed next time."""
        rows: list[OutcomeRow] = []
        settled: list[tuple[str, Outcome]] = []
        seen: set[str] = set()
        retry: set[str] = set()
        strangers = 0
        lines: list[Mapping[str, Any]] = []  # the chunk's lines as received, for `on_results`

        def write() -> None:
            """Store the chunk in hand; once it is stored, hand its outcomes out."""
            if not rows:
                return
            self.ledger.record_outcomes(batch_id, rows, now=self._clock.now())
            crashpoint("while-streaming")
            if lines and self.on_results is not None:
                try:
                    self.on_results(batch_id, ended.id, list(lines))
                except Exception:
                    log.exception("on_results failed on batch %s; its results are stored all the same.", ended.id)
            self._settle(settled)
            rows.clear()
            settled.clear()
            lines.clear()

        def handle(line: dict[str, Any]) -> None:
            nonlocal strangers
            custom_id = line.get("custom_id")
            if not isinstance(custom_id, str) or custom_id not in members:
                strangers += 1
                return
            key = members[custom_id]
            if custom_id in seen:
                return  # a download broken off is fetched again from the start: this line is stored already
            seen.add(custom_id)
            used, allowed = attempts.get(key, (1, 1))
            outcome, stored = line_outcome(line, batch_id=ended.id, request_id=request_id)
            row = _row(key, outcome, stored, used=used, allowed=allowed)
            (retry.add if row.state is RequestState.PENDING else retry.discard)(key)
            rows.append(row)
            if row.state.final:
                settled.append((key, outcome))
            if self.on_results is not None:
                lines.append(line)
            if len(rows) >= RESULTS_PER_TRANSACTION:
                write()

        await self.provider.stream_results(ended, handle, expected=len(members))
        if strangers and not seen:
            log.error(
                "Batch %s holds none of the requests of %s; it was not ours. Sending them again.", ended.id, batch_id
            )
        for custom_id, key in members.items():
            if custom_id not in seen:
                error = BatchRequestError(
                    f"Batch {ended.id} ended without a result for request {custom_id}.",
                    batch_id=ended.id,
                    custom_id=custom_id,
                )
                used, allowed = attempts.get(key, (1, 1))
                retry_it = bool(strangers and not seen) and used < allowed
                rows.append(
                    OutcomeRow(
                        key, RequestState.PENDING if retry_it else RequestState.FAILED, error=error_to_json(error)
                    )
                )
                if retry_it:
                    retry.add(key)
                else:
                    settled.append((key, error))
        write()
        counts = ended.request_counts
        state = (
            BatchState.CANCELED
            if ended.cancel_initiated_at is not None
            else BatchState.EXPIRED
            if counts.expired and not counts.succeeded
            else BatchState.COLLECTED
        )
        self.ledger.record_collected(batch_id, state=state, now=self._clock.now())
        if retry:
            now = self._clock.now()
            self.ledger.requeue(sorted(retry), owner=self.owner, until=now + self.settings.lease_seconds, now=now)
            for key in sorted(retry):
                self._enqueue(self._reread(key))

    def _spawn(self, coroutine: Coroutine[Any, Any, None], *, waiters: _Waiters) -> asyncio.Task[None]:
        """Run `coroutine` as a task of this engine. Should it fail, `waiters` (the keys whose calls wait on it, a
        callable giving them, or one taking the error) get the error, classified: no call waits on a dead task."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._task_done, waiters))
        return task

    def _task_done(self, waiters: _Waiters, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()  # retrieved here, so never "Task exception was never retrieved"
        if exc is None:
            return
        error = classify(exc, doing=f"running {getattr(task.get_coro(), '__qualname__', task.get_name())}")
        log.error("%s failed; its calls get the error.", task.get_name(), exc_info=exc)
        try:
            if callable(waiters):
                waiters(error)
            else:
                self._fail(waiters, error)
        except Exception:  # the ledger itself failing: fail every call of this engine rather than leave any waiting
            log.exception("Could not tell the calls waiting on %s which failed; failing every call.", task.get_name())
            self._fail(list(self._futures), error)

    def _members_of(self, batch_id: str) -> Callable[[ActorError], None]:
        return lambda error: self._fail(list(self.ledger.members(batch_id).values()), error)

    def _window_failed(self, error: ActorError) -> None:
        """The coalescing window failed: fail what it held and let the next call open a new one."""
        self._window = None
        entries, self._queue, self._queue_bytes = self._queue, [], 0
        self._queued_keys.difference_update(entry.key for entry in entries)
        self._fail([entry.key for entry in entries], error)


def _candidate(remote: MessageBatch) -> Candidate:
    counts = remote.request_counts
    total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
    return Candidate(remote.id, total, remote.created_at.timestamp(), remote.processing_status == "ended")


def _outcome_of(record: RequestRecord) -> Outcome:
    if record.state is RequestState.SUCCEEDED and record.response is not None:
        return response_from_json(record.response)
    return error_from_json(record.error or {"class": "ActorError", "message": f"{record.key}: no result"})


def _deliver(outcome: Outcome, response_model: type[BaseModel] | None) -> ActorResponse[Any]:
    if isinstance(outcome, ActorError):
        raise outcome
    return outcome if response_model is None else parse_response(outcome, response_model)


def _row(
    key: str, outcome: ActorResponse[Any] | ActorError, stored: dict[str, Any] | None, *, used: int, allowed: int
) -> OutcomeRow:
    """How one result is stored: succeeded (`stored`: its response as JSON), requeued for another attempt, or final."""
    if isinstance(outcome, ActorResponse):
        assert stored is not None, "a response comes with the form it is stored in (line_outcome)"
        cost = outcome.cost
        return OutcomeRow(
            key,
            RequestState.SUCCEEDED,
            # Encoded now, so that the dicts of a chunk's answers do not outlive their line (the collector's work).
            response=answer_json(stored),
            cost_usd=cost.total_usd if cost else None,
            live_cost_usd=cost.live_equivalent_usd if cost else None,
        )
    error = error_to_json(outcome)
    if isinstance(outcome, BatchRequestCanceled):
        return OutcomeRow(key, RequestState.CANCELED, error=error)
    retryable = isinstance(outcome, BatchRequestError) and outcome.retryable
    if retryable and used < allowed:
        return OutcomeRow(key, RequestState.PENDING, error=error)
    final = RequestState.EXPIRED if isinstance(outcome, BatchRequestExpired) else RequestState.FAILED
    return OutcomeRow(key, final, error=error)


def _other_request(key: str) -> ConfigurationError:
    return ConfigurationError(
        f"Key {key!r} already names a different request in the ledger; use a new key for new content.", field="key"
    )


def _canonical(params: dict[str, Any]) -> str:
    return _ENCODE(params)


def _params_json(params: dict[str, Any] | str) -> str:
    return params if isinstance(params, str) else _ENCODE(params)


# Built once: `json.dumps` with options builds an encoder on every call.
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode
