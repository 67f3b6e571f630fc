"""The state every part of a batch engine shares: its ledger, backend and settings, the futures of waiting calls, and
background tasks that hand their errors to those calls."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lowtide.batching import gathering
from lowtide.batching.adaptive import History
from lowtide.batching.backend import BatchBackend, BatchCodec, RemoteBatch, ResultLine, Settled, UnreadableLine
from lowtide.batching.keys import owner_id
from lowtide.config.settings import BatchSettings
from lowtide.core.clock import Clock
from lowtide.errors import (
    ActorError,
    APIError,
    InternalError,
    classify,
)
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.store import (
    BatchRecord,
    LedgerStore,
    NewRequest,
    RequestRecord,
)
from lowtide.telemetry.current import CallTrace, LaterCall
from lowtide.webhooks.notify import notifier_for

__all__ = ["REREAD_CHUNK", "BatchWatch", "EngineCore", "GroupCall", "Queued", "Waiters", "shared_done"]

REREAD_CHUNK = 2_000
"""Most keys read in one query when calls read their records again together (`EngineCore._reread`)."""

log = logging.getLogger("lowtide.batching.engine.batch_engine")


@dataclass(frozen=True)
class GroupCall:
    """One request of a group sent as a batch of its own (`BatchEngine.send_group`)."""

    key: str
    params: dict[str, Any] | str
    """The provider's request body, or its JSON as `stored_json` gives it (then `model` is given too)."""
    size: int
    """Its bytes in the create request, as the caller's splitting counted them."""
    worst_case_usd: Decimal | None = None
    model: str | None = None
    """The request's model (None: read from `params`)."""


@dataclass(slots=True)
class BatchWatch:
    """The calls of an engine waiting on a batch another live process polls, and what wakes its one watcher."""

    waiting: dict[str, asyncio.Future[Settled]]
    """By key, the outcome its calls wait for."""
    fresh: set[str]
    """Keys registered since the watcher last read: read at its next turn, whatever woke it."""
    registered: asyncio.Event
    """Set when a key registers, so that a waiting watcher reads it."""
    rewind: int | None = None
    """The earliest cursor (`results_since`) after which keys registered since the watcher's last read had their states
    read by their caller (`rewound`): the watcher reads the results from there at its next turn, not their states."""
    rewound: set[str] = field(default_factory=set[str])
    """Keys registered with their state read after `rewind` (waiting on the batch the API has)."""


@dataclass(slots=True)
class Queued:
    key: str
    custom_id: str
    params: dict[str, Any] | str
    """The provider's request body, or (for a call claimed just now) its JSON as the ledger holds it."""
    size: int
    model: str = ""


# What each background task does, in the words an error gives its waiting calls.
_DOING = {
    "_write_claims": "recording the calls in the ledger",
    "_flush_after_window": "gathering calls into a batch",
    "_send_gathered": "gathering calls into a batch",
    "_dispatch": "creating a batch",
    "_reconcile": "reconciling a create whose outcome is unknown",
    "_poll": "waiting for a batch and storing its results",
    "forward": "waiting for work already under way",
    "_attach_left_out": "waiting for another process's batch",
    "_watch_batch": "watching a batch another process polls",
}

# Who waits on a background task: their keys, or a callable that fails them with the task's error.
Waiters = list[str] | Callable[[ActorError], None]


class EngineCore:
    """What the engine's parts (coalescing, submission, collection, the calls) share. The parts call each other
    through the methods declared here and defined in the part that owns them."""

    def __init__(
        self,
        backend: BatchBackend,
        ledger: LedgerStore,
        *,
        endpoint: str,
        settings: BatchSettings,
        clock: Clock,
        owner: str | None = None,
    ) -> None:
        self.backend = backend
        self.ledger = async_ledger(ledger)
        """The ledger as the event loop calls it: every call awaited (a remote store never blocks the loop)."""
        self.endpoint = endpoint
        self.settings = settings
        self.history = History(ledger)
        """How long this ledger's batches took, for adaptive polling (`poll_schedule`)."""
        self.notifier = notifier_for(settings.notify, clock, outbox=self.ledger)
        """Where a batch's end is told (`batch.notify`), if anywhere: kept in the ledger's outbox until taken."""
        # A batch holds what the settings allow and the provider takes, whichever is less.
        limits = backend.codec.limits
        self.max_requests = min(settings.max_batch_requests, limits.max_requests)
        self.max_bytes = min(settings.max_batch_bytes, limits.max_bytes)
        self._clock = clock
        self.owner = owner or owner_id()
        shaping = settings.model_dump_json(exclude={"coalesce_window", "lease_seconds", "watch_interval"})
        self.scope = hashlib.sha256(
            f"lowtide-batch-scope\n{backend.name}\n{endpoint}\n{backend.credential}\n{shaping}".encode()
        ).hexdigest()[:32]
        """Which engines, in any process, may send this one's requests in their batches (`take_pending`): those of
        the same provider, endpoint, credentials and settings of a batch's run (actors whose poll interval, limits
        or attempts differ send their own batches; how long each gathers or waits is its own). A digest of a digest:
        never a secret."""
        # Other processes, on any host, leave this engine's work to it while its lease lives (a heartbeat, where the
        # store keeps one).
        self.ledger.keep_alive(self.owner, lease_seconds=settings.lease_seconds, now=clock.now)
        self._queue: list[Queued] = []
        self._queue_bytes = 0
        self._queued_keys: set[str] = set()
        self._window: asyncio.Task[None] | None = None
        self._futures: dict[str, asyncio.Future[Settled]] = {}
        self._registered = 0
        """Futures made by `_future` so far: a collection looks for calls that came to wait late only when it moved."""
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._reconciling: dict[str, asyncio.Task[None]] = {}
        self._creating: dict[str, asyncio.Future[None]] = {}
        self._dispatching: set[asyncio.Task[None]] = set()
        """Batches on their way: intent recorded, create not yet come back."""
        """Intents whose create is in flight here; each future is done once the create came back, however."""
        self._placed_signal: asyncio.Future[None] | None = None
        """Done when a batch of this engine's is placed (`_placed`): what parked calls (`submit`) wait on."""
        self._foreign: set[str] = set()
        """API batch ids whose results showed they belong to no unresolved intent of the ledger."""
        self._stored_from: set[str] = set()
        """Batches a call was answered from a stored result of, looked at once to be closed if left `ended`."""
        self._closing: set[asyncio.Task[None]] = set()
        """Those looks under way: a few reads and a write each, let finish when the engine closes."""
        self._api_failures: list[APIError] | None = None
        """While a one-off `collect_once` runs: the API errors its work met (it has no callers to tell)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        # The calls waiting for their claim to be written, and their futures (two lists: no pair per call).
        self._claims: list[tuple[str, str, str, dict[str, Any] | str, int, Decimal | None, bool]] = []
        """(key, actor, model, params, max attempts, worst case, until final) of each call."""
        self._claimed: list[asyncio.Future[Any]] = []
        self._reserved: dict[str, Decimal] = {}
        self._claiming: asyncio.Task[None] | None = None
        self._claim_writes: dict[asyncio.Task[None], float] = {}
        """Claim writers still writing, with when the first of their calls arrived: with a remote store, the next one
        starts while one waits for the server."""
        self._arrivals: dict[asyncio.Future[None], float] = {}
        """Calls on their way to their claim that wait for something first (a ledger read), with when they came."""
        self._gatherings: set[gathering.Gathering] = set()
        """The gatherings whose members' calls reached this engine: the open window waits for their other members."""
        self._asked: dict[str, list[asyncio.Future[bool]]] = {}
        """Keys asked of the ledger in this turn of the event loop (`knows`), with who waits for each answer."""
        self._reading: asyncio.Task[None] | None = None
        self._rereads: dict[str, list[asyncio.Future[RequestRecord | None]]] = {}
        """Records asked again in this turn of the event loop (`_reread`), with who waits for each."""
        self._rereading: asyncio.Task[None] | None = None
        self._parking: set[str] = set()
        self._woken: tuple[asyncio.Future[None], dict[str, RequestRecord]] | None = None
        """Parked calls waiting for a create of this engine's (`submit`), and the records the first of those one
        `_placed` woke read for all of them (a local store): what `BatchEngine._woken_record` hands out."""
        self._batch_reads: dict[str, asyncio.Future[BatchRecord | None]] = {}
        """Batches being read (`_batch`): the calls that ask for one while it is read share the read."""
        self._traced: dict[str, CallTrace] = {}
        """The spans of this process's calls claimed while telemetry is on, by key, until their batch's intent links
        them (`telemetry.current.CALL`); empty, and never read, while it is off."""
        self._later: dict[str, LaterCall] = {}
        """The calls claimed while telemetry is on whose spans are made when their outcomes are handed on (`_settle`,
        `_fail`): `run_many`'s, a bulk run's items. Empty, and never read, while it is off."""
        self._poll_decisions: dict[str, asyncio.Future[bool]] = {}
        """Whether this engine polls a batch, being decided (`_poll_here`): the calls waiting on it share it."""
        self._watches: dict[str, BatchWatch] = {}
        """The batches another live process polls that calls of this engine wait on, each watched by one task
        (`Waiting._watch_batch`), with those calls' futures."""
        self._identity: str | None = None
        self._unkeyed = False
        """Whether the ledger holds rebuilt requests whose keys are not known (`adopting`), read with its identity."""
        self.closed = False
        self.on_results: Callable[[str, str, Sequence[ResultLine | UnreadableLine]], None] | None = None
        """Called after each chunk of results is stored, with (ledger batch id, API batch id, the chunk's results
        lines as the API sent them: a line lowtide could not read as an `UnreadableLine`, its bytes kept). A download
        broken off and fetched again passes each line once. What it raises is logged, not raised: the answers are
        already in the ledger."""

    async def identity(self) -> str:
        """The ledger's identity, which every custom id this engine gives carries (read once: it never changes); and,
        read with it (PostgreSQL: in the same round trip), whether the ledger holds rebuilt requests whose keys are not
        known, which this engine's claims then take over (`adopting`)."""
        if self._identity is None:
            identity = await self.ledger.identity()
            self._unkeyed = await self.ledger.unkeyed()
            self._identity = identity
        return self._identity

    async def adopting(self, claims: Sequence[NewRequest]) -> None:
        """Before `claims` are written, in a rebuilt ledger that holds requests whose keys are not known: those whose
        custom ids are these claims' become theirs, so that the claims find them known and nothing is sent again. A
        ledger never rebuilt (all but a few) pays nothing: `_unkeyed` is False from its first read."""
        if self._unkeyed:
            self._unkeyed = await self.ledger.adopt_unkeyed(claims)

    def arrive(self) -> asyncio.Future[None]:
        """A call that came now and waits for something (a ledger read) before its claim: a window that is open
        when it came waits for it until `arrived` (on a remote store the read takes a while, and a virtual clock
        moves meanwhile). Its time is `arrival_of` it, for `claim(arrived=...)`."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._arrivals[done] = self._clock.now()
        self._reached()
        return done

    def _reached(self) -> None:
        """A call reaches this engine now: the gathering its task is a member of (if any) is waited for."""
        if (group := gathering.reached()) is not None:
            self._gatherings.add(group)

    def arrival_of(self, arrival: asyncio.Future[None]) -> float:
        return self._arrivals[arrival]

    def arrived(self, arrival: asyncio.Future[None]) -> None:
        """The call of `arrival` is claimed, or gave up."""
        self._arrivals.pop(arrival, None)
        if not arrival.done():
            arrival.set_result(None)

    def _mine(self, record: RequestRecord) -> bool:
        return record.key in self._queued_keys or record.key in self._futures

    async def _reread(self, key: str) -> RequestRecord:
        """The ledger's record of `key` now. A remote store is read once for every key asked in the same turn of the
        event loop: thousands of calls waiting on another process's batch wake together when it ends, and read the
        ledger together (one query per `REREAD_CHUNK` keys), not each through a connection of the pool in turn."""
        local = self.ledger.inline
        if local is not None:
            record = local.request(key)
        else:
            answer: asyncio.Future[RequestRecord | None] = asyncio.get_running_loop().create_future()
            self._rereads.setdefault(key, []).append(answer)
            if self._rereading is None:
                self._rereading = asyncio.ensure_future(self._read_again())
            record = await answer
        if record is None:
            raise InternalError(f"request {key} vanished from the ledger")
        return record

    async def _read_again(self) -> None:
        await asyncio.sleep(0)  # every call of this moment asks first
        asked, self._rereads, self._rereading = self._rereads, {}, None
        keys = list(asked)
        try:
            records: dict[str, RequestRecord] = {}
            for start in range(0, len(keys), REREAD_CHUNK):
                for record in await self.ledger.requests_for(keys[start : start + REREAD_CHUNK]):
                    records[record.key] = record
        except BaseException as exc:  # each caller gets the error (a cancellation too: the engine is closing)
            error = exc if isinstance(exc, asyncio.CancelledError) else classify(exc, doing="reading the ledger")
            for answers in asked.values():
                for answer in answers:
                    if not answer.done():
                        answer.set_exception(error)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        for key, answers in asked.items():
            for answer in answers:
                if not answer.done():  # (a caller that gave up cancelled its own)
                    answer.set_result(records.get(key))

    async def _batch(self, batch_id: str) -> BatchRecord | None:
        """The ledger's record of a batch now; the calls that ask for the same batch in one turn of the event loop
        share one read (one that has begun is not joined: it may predate what the caller saw)."""
        reading = self._batch_reads.get(batch_id)
        if reading is None:
            reading = asyncio.ensure_future(self._read_batch(batch_id))
            self._batch_reads[batch_id] = reading
            reading.add_done_callback(functools.partial(shared_done, self._batch_reads, batch_id))
        return await asyncio.shield(reading)

    async def _read_batch(self, batch_id: str) -> BatchRecord | None:
        await asyncio.sleep(0)  # every call of this moment asks first
        self._batch_reads.pop(batch_id, None)
        return await self.ledger.batch(batch_id)

    def _future(self, key: str) -> asyncio.Future[Settled]:
        future = self._futures.get(key)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._futures[key] = future
            self._registered += 1
        return future

    def _settle(self, outcomes: Sequence[tuple[str, Settled]]) -> None:
        """Hand final outcomes, as they were just stored, to the calls waiting on them."""
        if self._later:
            self._finish_later(outcomes)
        for key, outcome in outcomes:
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                future.set_result(outcome)

    def _finish_later(self, outcomes: Sequence[tuple[str, object]]) -> None:
        """The spans of the calls made when their outcome is handed on (telemetry on)."""
        later = self._later
        for key, outcome in outcomes:
            call = later.pop(key, None)
            if call is not None:
                call.finish(key, outcome)

    def _fail(self, keys: Sequence[str], error: ActorError) -> None:
        if self._api_failures is not None and isinstance(error, APIError):
            self._api_failures.append(error)
        if self._later:
            self._finish_later([(key, error) for key in keys])
        for key in keys:
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                future.set_exception(error)
                # Work nobody waits on (a collect, a requeue) may fail: that is recorded, not an unhandled error.
                # (Marked here rather than by a done callback on every future: one callback each costs a context.)
                future.exception()

    def _send_groups(self, entries: list[Queued]) -> None:
        """Send `entries` now, one batch per group (`_groups`), each tracked until its create has come back."""
        for group in self._groups(entries):
            task = self._spawn(self._dispatch(group), waiters=[entry.key for entry in group])
            self._track_dispatch(task, creates=True)

    def _track_dispatch(self, task: asyncio.Task[None], *, creates: bool) -> None:
        """`task` sends a batch (`creates`: makes its create; else gathers what goes in it): on its way until it
        ends, which wakes the parked calls once a create came back (made, refused or in doubt), or a gathering
        failed before any create (its calls got the error)."""
        self._dispatching.add(task)
        task.add_done_callback(functools.partial(self._dispatch_done, creates))

    def _dispatch_done(self, creates: bool, task: asyncio.Task[None]) -> None:
        self._dispatching.discard(task)
        if creates or task.cancelled() or task.exception() is not None:
            self._placed()

    def _placing(self) -> asyncio.Future[None]:
        """What the next `_placed` completes: taken before a parked call reads its record, so that a batch placed
        while it reads is not missed."""
        loop = asyncio.get_running_loop()
        if self._placed_signal is None or self._placed_signal.get_loop() is not loop:  # (a program's loop ended)
            self._placed_signal = loop.create_future()
        return self._placed_signal

    def _placed(self) -> None:
        """A batch of this engine's has its create's outcome (or gave up its calls): the parked calls look again."""
        signal, self._placed_signal = self._placed_signal, None
        if signal is not None and not signal.done():
            signal.set_result(None)

    async def _placed_wait(self, placed: asyncio.Future[None]) -> None:
        """Wait for `placed` (`_placing`) to be done; a caller that gives up leaves it to the others waiting on it."""
        if not placed.done():
            await asyncio.wait((placed,))

    async def dispatched(self) -> None:
        """Wait until every batch on its way has been created or refused: what a caller that stops sending (a run
        whose time limit passed) must wait for before it cancels what is out."""
        while self._dispatching:
            await asyncio.wait(list(self._dispatching))

    def _groups(self, entries: list[Queued]) -> list[list[Queued]]:
        """`entries` split by what a batch of the provider's must share (`BatchCodec.batch_group`), in order."""
        codec = self.backend.codec
        if not entries or type(codec).batch_group is BatchCodec.batch_group:
            return [entries] if entries else []  # any request may travel with any other: one batch
        groups: dict[str, list[Queued]] = {}
        for entry in entries:
            groups.setdefault(codec.batch_group(entry.params, entry.model), []).append(entry)
        return list(groups.values())

    def _spawn(self, coroutine: Coroutine[Any, Any, None], *, waiters: Waiters) -> asyncio.Task[None]:
        """Run `coroutine` as a task of this engine. Should it fail, `waiters` (the keys whose calls wait on it, a
        callable giving them, or one taking the error) get the error, classified: no call waits on a dead task."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._task_done, waiters))
        return task

    def _task_done(self, waiters: Waiters, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()  # retrieved here, so never "Task exception was never retrieved"
        if exc is None:
            return
        name = getattr(task.get_coro(), "__name__", "")
        error = classify(exc, doing=_DOING.get(name, f"running {name or task.get_name()}"))
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
        """What fails the calls waiting on a batch's members with a task's error (they are read from the ledger)."""

        def fail(error: ActorError) -> None:
            self._spawn(self._fail_members(batch_id, error), waiters=[])

        return fail

    async def _fail_members(self, batch_id: str, error: ActorError) -> None:
        try:
            keys = list((await self.ledger.members(batch_id)).values())
        except Exception:  # the ledger itself failing: fail every call of this engine rather than leave any waiting
            log.exception("Could not read the members of batch %s; failing every call.", batch_id)
            keys = list(self._futures)
        self._fail(keys, error)

    # Defined by the parts that own them.

    def _enqueue(self, record: RequestRecord) -> None:
        raise NotImplementedError

    def _ensure_poller(self, batch_id: str, remote: RemoteBatch | None = None) -> None:
        raise NotImplementedError

    async def _final(self, record: RequestRecord) -> Settled:
        raise NotImplementedError

    async def _poll_here(self, batch_id: str) -> bool:
        raise NotImplementedError

    def _stored_in(self, batch_id: str | None) -> None:
        raise NotImplementedError

    async def _attach_left_out(self, calls: list[tuple[str, asyncio.Future[Settled]]]) -> None:
        raise NotImplementedError

    async def _final_of(self, key: str) -> Settled:
        """`_final` of the record the ledger holds for `key` now."""
        return await self._final(await self._reread(key))

    def _forward(self, source: Awaitable[Settled], future: asyncio.Future[Settled]) -> None:
        raise NotImplementedError

    async def _dispatch(self, entries: list[Queued]) -> None:
        raise NotImplementedError

    async def _reconcile(self, batch_id: str) -> None:
        raise NotImplementedError


def shared_done(shared: dict[str, asyncio.Future[Any]], key: str, done: asyncio.Future[Any]) -> None:
    """A read or decision shared by several calls is over: the next asks again. Its error is retrieved here, so
    that one whose callers all gave up is not reported as never retrieved (each caller that waited got it)."""
    if shared.get(key) is done:
        del shared[key]
    if not done.cancelled():
        done.exception()
