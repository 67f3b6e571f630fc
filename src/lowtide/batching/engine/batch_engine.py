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
import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from lowtide.batching.backend import Settled
from lowtide.batching.engine.coalescing import Coalescing
from lowtide.batching.engine.collecting import Collection
from lowtide.batching.engine.key_lookups import Lookups
from lowtide.batching.engine.left_out import LeftOut
from lowtide.batching.engine.shared_state import REREAD_CHUNK, GroupCall, Queued
from lowtide.batching.engine.submission import Submission
from lowtide.batching.gc_tuning import MANY, freeze_survivors, thaw
from lowtide.batching.keys import params_json
from lowtide.batching.policy import other_params, other_request, stored_outcome
from lowtide.batching.tickets import Ticket, ticket_of
from lowtide.errors import (
    ActorError,
    APIError,
    ConfigurationError,
    classify,
)
from lowtide.ledger.store import (
    BatchRecord,
    BatchState,
    NewRequest,
    RequestRecord,
    RequestState,
)
from lowtide.messages.answers import response_of
from lowtide.telemetry.current import CALL, LaterCall, with_traces
from lowtide.types import ActorResponse

__all__ = ["BatchEngine", "GroupCall"]

# What claiming a call gives: the future of its outcome when it is new (queued here), else the record the ledger had.
_Entered = RequestRecord | asyncio.Future[Settled]


class BatchEngine(Coalescing, Submission, Collection, Lookups, LeftOut):
    """Runs batch-mode calls for one provider endpoint and key, durably, through one ledger."""

    async def run(
        self,
        params: dict[str, Any],
        *,
        key: str,
        actor: str,
        response_model: type[BaseModel] | None = None,
        worst_case_usd: Decimal | None = None,
    ) -> ActorResponse[object]:
        """Answer one call: from the ledger if it already has the answer, else through a (shared) batch."""
        model = self.backend.codec.model_of(params)
        outcome = self.claim(params, model=model, key=key, actor=actor, worst_case_usd=worst_case_usd)
        del params  # queued as JSON once claimed: thousands of waiting calls need not keep their params alive
        return self.deliver(await outcome, response_model)

    def claim(
        self,
        params: dict[str, Any] | str,
        *,
        model: str,
        key: str,
        actor: str,
        worst_case_usd: Decimal | None = None,
        future: asyncio.Future[Settled] | None = None,
        arrived: float | None = None,
        later: LaterCall | None = None,
    ) -> asyncio.Future[Settled]:
        """`run` for a caller that waits in its own coroutine: claim `key` for `params` (or their JSON as
        `stored_json` gives it), with every call of this moment in one transaction; `deliver` what the future gives.

        The future (`future`, when the caller already waits on one) is the call's outcome itself: a call waits on
        one future, woken once. It fails if the ledger knows `key` for other params. `arrived` is when the call
        came, if earlier than now (it waited for the pre-send checks): a window it opens counts from then. `later`
        (telemetry on): the call's span is made when its outcome is handed on.
        """
        outcome = future if future is not None else asyncio.get_running_loop().create_future()
        self._claim(params, model, key, actor, worst_case_usd, outcome, until_final=True, arrived=arrived, later=later)
        return outcome

    def deliver(self, outcome: Settled, response_model: type[BaseModel] | None) -> ActorResponse[object]:
        """The response of an outcome (parsed into `response_model`), or its error raised."""
        if isinstance(outcome, ActorError):
            raise outcome
        response = response_of(outcome)
        return response if response_model is None else self.backend.codec.parse(response, response_model)

    async def submit(
        self,
        params: dict[str, Any] | str,
        *,
        key: str,
        actor: str,
        worst_case_usd: Decimal | None = None,
        model: str | None = None,
    ) -> Ticket:
        """Park one call: return as soon as its batch exists (or its answer is already stored). `params` may be their
        JSON as the ledger stores it (a prompt's template around its prompt), with its `model`."""
        entered = await self._claim_record(params, key=key, actor=actor, worst_case_usd=worst_case_usd, model=model)
        placed = self._placing()  # taken before the read: a batch placed while the ledger is read is not missed
        # A key claimed just now and queued here is pending and this engine's, as the ledger would say: its batch's
        # create (which this engine makes, and which wakes it) is awaited without reading the ledger first.
        record: RequestRecord | None
        if isinstance(entered, RequestRecord):
            record, outcome = entered, None
        else:
            record, outcome = (None if key in self._queued_keys else await self._reread(key)), entered
        while record is None or record.state in (RequestState.PENDING, RequestState.SUBMITTING):
            if record is None or self._mine(record):
                # This engine gathers or creates its batch: woken when a create of its comes back (or a gathering
                # fails, or a reconcile ends), not by reading the ledger every few milliseconds.
                self._parking.add(key)
                try:
                    await self._placed_wait(placed)
                finally:
                    self._parking.discard(key)
                outcome = self._refused(key, outcome)
                woken, placed = placed, self._placing()
                record = self._woken_record(key, woken) or await self._reread(key)
            else:  # another process's batch: the ledger watched every `watch_interval` (or woken by its notices)
                record = await self._watch(record)
            # Looked at again after the read: on a remote store the refusal may come while the ledger is read, and
            # the request is then pending and no longer this engine's. Taking it back would send it again.
            outcome = self._refused(key, outcome)
            if record.state is RequestState.PENDING and not self._mine(record):
                record = await self._rescue_pending(record)
        # The record just read is where it stands: not read again; its batch read once for the calls of this moment.
        return ticket_of(record.key, record, await self._batch(record.batch_id) if record.batch_id else None)

    def _woken_record(self, key: str, woken: asyncio.Future[None]) -> RequestRecord | None:
        """The record of a parked call `woken` woke, from a local store: the first call it woke reads those of
        every call it woke in one query (a query per `REREAD_CHUNK` keys), inline, in the same turn of the event loop
        as a read of its own would be; the others take theirs. None: read it alone (`_reread`)."""
        local = self.ledger.inline
        if local is None:
            return None  # a remote store's rereads of one moment are one query already
        if self._woken is None or self._woken[0] is not woken:
            keys = [key, *(other for other in self._parking if other != key)]
            try:
                found = {
                    record.key: record
                    for start in range(0, len(keys), REREAD_CHUNK)
                    for record in local.requests_for(keys[start : start + REREAD_CHUNK])
                }
            except Exception:  # read again alone, where its failure is said to its own call
                return None
            self._woken = (woken, found)
        found = self._woken[1]
        record = found.pop(key, None)
        if not found:
            self._woken = None  # every call it woke has its record: none kept
        return record

    def _refused(self, key: str, outcome: asyncio.Future[Settled] | None) -> asyncio.Future[Settled] | None:
        """The future of a parked call's outcome while it is the engine's (once failed it is dropped, and the
        last one seen is kept); its failure raised: the create was refused, which is said rather than retried."""
        outcome = self._futures.get(key, outcome)
        if outcome is not None and outcome.done() and (failure := outcome.exception()) is not None:
            raise failure
        return outcome

    async def attach(
        self, key: str, response_model: type[BaseModel] | None = None, *, known: RequestRecord | None = None
    ) -> ActorResponse[object]:
        """Wait for the answer of a key already in the ledger (parked earlier, maybe by another process). `known`:
        its record as the caller has just read it (an agent's `resume` pass reads its runs' answers together), not
        read again."""
        record = known if known is not None and known.key == key else await self.ledger.request(key)
        if record is None:
            raise ConfigurationError(f"The ledger has no request with key {key!r}.", field="key")
        return self.deliver(await self._final(record), response_model)

    async def send_group(
        self, calls: Sequence[GroupCall], *, actor: str, later: Sequence[LaterCall] | None = None
    ) -> dict[str, asyncio.Future[Settled]]:
        """Send `calls` as one batch of their own, now: a bulk run splits its batches itself, so no window applies.

        The claims are one transaction. A key the ledger already knows attaches as `run` would (its stored answer,
        or the batch it is in). Returns a future per key, resolved with the key's final outcome (never raised).
        `later` (telemetry on): each call's span, made when its outcome is handed on.
        """
        now = self._clock.now()
        codec = self.backend.codec
        identity = await self.identity()
        news = [
            NewRequest(
                key=call.key,
                custom_id=codec.custom_id_for(call.key, identity),
                actor=actor,
                model=call.model if call.model is not None else codec.model_of(_decoded(call.params)),
                params=call.params,
                max_attempts=self.settings.max_attempts,
                worst_case_usd=call.worst_case_usd,
                scope=self.scope,
            )
            for call in calls
        ]
        if later is not None:
            self._later.update((call.key, made) for call, made in zip(calls, later, strict=True))
            news = with_traces(news, {}, self._later)
        await self.adopting(news)
        # What was inserted is not read back (nor made into records): the group has it.
        inserted, known = await self.ledger.claim_new(
            news, owner=self.owner, until=now + self.settings.lease_seconds, now=now
        )
        records = {record.key: record for record in known}
        # Claimed by a process that stopped before their batch existed: they travel in this group instead, taken over
        # together (a resumed run finds a whole group's claims so), not a transaction each.
        abandoned = [
            r
            for r in records.values()
            if r.state is RequestState.PENDING and r.owner != self.owner and not self._mine(r)
        ]
        if abandoned:
            records.update(await self._take_all_abandoned(abandoned))
        futures: dict[str, asyncio.Future[Settled]] = {}
        fresh: list[Queued] = []
        for new, call in zip(news, calls, strict=True):
            record = records.get(new.key)
            if record is None:
                if new.key in futures:
                    continue  # the same key twice in one group: it travels once
                fresh.append(Queued(new.key, new.custom_id, inserted[new.key], call.size, new.model))
                futures[new.key] = self._future(new.key)
                continue
            if record.state is RequestState.PENDING and record.owner == self.owner and not self._mine(record):
                fresh.append(Queued(record.key, record.custom_id, call.params, call.size, record.model))
                futures[record.key] = self._future(record.key)
            else:
                futures[record.key] = asyncio.ensure_future(self._final(record))
                if self._later and (known := self._later.pop(record.key, None)) is not None:
                    _finish_when_done(futures[record.key], record.key, known)
        self._send_groups(fresh)
        freeze_survivors(len(futures))  # a bulk run's group waits on its batch: thousands of calls and their items
        return futures

    async def ticket(self, key: str) -> Ticket:
        """Where `key` stands, from the ledger alone (`tickets.ticket_for`, awaited)."""
        record = await self.ledger.request(key)
        return ticket_of(key, record, await self.ledger.batch(record.batch_id) if record and record.batch_id else None)

    async def collect_once(self, batches: Sequence[BatchRecord]) -> list[APIError]:
        """Move outstanding batches forward once: reconcile unknown creates, store results of ended batches. Returns
        the API errors met on the way (a batch that could not be looked at stays as it was in the ledger).

        A batch still processing is looked at and left; with a short `max_wait` this never waits long.
        """
        failures: list[APIError] = []
        self._api_failures = failures
        try:
            for batch in batches:
                if batch.state in (BatchState.INTENT, BatchState.UNKNOWN):
                    if await self._rescue_batch(batch):
                        await self._reconciling[batch.id]
                elif batch.provider_batch_id is not None and not await self.settle_stored(batch):
                    self._ensure_poller(batch.id)
            await self.drain()
        finally:
            self._api_failures = None
        return failures

    async def drain(self) -> None:
        """Wait for everything this engine started (flushes, creates, pollers) to finish."""
        while self._tasks or self._queue:
            if self._queue and self._window is None:
                self._flush()
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        self.closed = True
        if self.notifier is not None:  # the notices of the batches it collected, tried until given up
            await self.notifier.drain()
        # A batch left `ended` being closed (its answers already handed out, so a program may close at once): the
        # look ends with the program, or the next program's calls find the batch open again.
        await asyncio.gather(*list(self._closing), return_exceptions=True)
        thaw()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self.ledger.let_go(self.owner)  # what it still held is free for other processes at once

    def _claim_record(
        self,
        params: dict[str, Any] | str,
        *,
        key: str,
        actor: str,
        worst_case_usd: Decimal | None = None,
        model: str | None = None,
    ) -> asyncio.Future[_Entered]:
        """Claim `key` for `params` (of `model`: given with params as JSON); the future gives a new request's outcome
        future (it is queued here), or the record of a key the ledger already knew. It fails if that key names other
        params."""
        claimed: asyncio.Future[_Entered] = asyncio.get_running_loop().create_future()
        if model is None:
            assert not isinstance(params, str), "params as JSON come with their model"
            model = self.backend.codec.model_of(params)
        self._claim(params, model, key, actor, worst_case_usd, claimed, until_final=False)
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
        arrived: float | None = None,
        later: LaterCall | None = None,
    ) -> None:
        # A plain tuple while it waits (the collector stops tracking a tuple of strings): thousands wait at once. Its
        # custom id is made as its claim is written, with the ledger's identity.
        self._claims.append(
            (
                key,
                actor,
                model,
                params,
                self.settings.max_attempts,
                worst_case_usd,
                until_final,
            )
        )
        self._claimed.append(future)
        if later is not None:  # telemetry on: a span made when the outcome is handed on
            self._later[key] = later
        elif (traced := CALL.get()) is not None:  # telemetry on: the call's span, linked to its batch's, its context
            self._traced[key] = traced  # stored with it
            traced.span.set_attribute("lowtide.key", key)
        if len(self._claimed) % MANY == 0:
            freeze_survivors(MANY)  # thousands of calls arriving at once (a `gather`): they wait a while
        self._reached()
        came = self._clock.now() if arrived is None else arrived
        if self._claiming is None:
            writer = self._claiming = self._spawn(self._write_claims(), waiters=[])
            self._claim_writes[writer] = came
            writer.add_done_callback(self._claim_writes.pop)
        elif came < self._claim_writes.get(self._claiming, came):
            self._claim_writes[self._claiming] = came
        if self._window is None:
            # The window counts from the call's arrival: its claim is written while the window runs.
            self._window = self._spawn(self._flush_after_window(came), waiters=self._window_failed)

    def reserve(self, actor: str, amount: Decimal) -> None:
        """Count a checked call's worst case against its actor until its claim is in the ledger."""
        self._reserved[actor] = self._reserved.get(actor, Decimal(0)) + amount

    def reserved(self, actor: str) -> Decimal:
        return self._reserved.get(actor, Decimal(0))

    async def _write_claims(self) -> None:
        """Record every call that arrived in this turn of the event loop in one transaction; queue the new ones."""
        if self.notifier is not None:  # the notices this ledger's outbox holds are tried while the engine works
            self.notifier.sweep()
        await asyncio.sleep(0)
        raw, claimed_by, self._claims, self._claimed = self._claims, self._claimed, [], []
        self._claiming = None
        now = self._clock.now()  # when they are claimed: not after the first claims wait for the ledger's identity
        try:
            identity = await self.identity()  # read once, by the first claims (on a remote store, a round trip)
            custom_id_for = self.backend.codec.custom_id_for
            claims = [NewRequest(c[0], custom_id_for(c[0], identity), *c[1:6], scope=self.scope) for c in raw]
            if self._traced or self._later:
                claims = with_traces(claims, self._traced, self._later)
            await self.adopting(claims)
            await self._record_claims(raw, claims, claimed_by, now)
            freeze_survivors(len(claims))
        except Exception as exc:  # a ledger that cannot be written (disk full, locked): the calls say so
            error = classify(exc, doing="recording the calls in the ledger")
            for claimed in claimed_by:
                if not claimed.done():
                    claimed.set_exception(error)
            self._fail([claim[0] for claim in raw], error)
        finally:
            # Counted in the ledger from here, or not at all; reserved until then (a remote store's write takes a
            # while, during which other calls' budget checks must still see these).
            for claim in raw:
                if claim[5] is not None:
                    self._reserved[claim[1]] = self.reserved(claim[1]) - claim[5]

    async def _record_claims(
        self,
        raw: Sequence[tuple[str, str, str, dict[str, Any] | str, int, Decimal | None, bool]],
        claims: Sequence[NewRequest],
        claimed_by: Sequence[asyncio.Future[Any]],
        now: float,
    ) -> None:
        until = now + self.settings.lease_seconds
        inserted, known = await self.ledger.claim_new(claims, owner=self.owner, until=until, now=now)
        records = {record.key: record for record in known}
        firsts: dict[str, NewRequest] = {}
        for index, ((*_, until_final), new, claimed) in enumerate(zip(raw, claims, claimed_by, strict=True)):
            if index % MANY == MANY - 1:
                freeze_survivors(MANY)  # the queue entries made so far are kept: no full collection need walk them
            record = records.get(new.key)
            if record is not None:
                self._traced.pop(new.key, None)  # known already: no batch of this process will carry it
                if self._later and (later := self._later.pop(new.key, None)) is not None:
                    _finish_when_done(claimed, new.key, later)
                if other_params(record.params, new.params):
                    claimed.set_exception(other_request(new.key))
                    continue
                if record.state is RequestState.PENDING and record.owner == self.owner:
                    self._enqueue(record)
                if not until_final:
                    claimed.set_result(record)
                elif record.state.final:
                    claimed.set_result(stored_outcome(record))
                    self._stored_in(record.batch_id)
                else:
                    self._forward(self._final(record), claimed)
            elif new.key not in firsts:
                # Inserted just now, so this engine owns it: queued as the JSON the ledger holds, to send as it is.
                firsts[new.key] = new
                params = inserted[new.key]
                entry = Queued(new.key, new.custom_id, params, len(params) + 64, new.model)
                if until_final:
                    self._futures[new.key] = claimed  # the caller's future is the outcome's: it is woken once
                    self._queue_entry(entry)
                else:
                    claimed.set_result(self._queue_entry(entry))
            elif params_json(firsts[new.key].params) != params_json(new.params):
                claimed.set_exception(other_request(new.key))  # the same key twice in one moment, for two requests
            elif until_final:
                self._forward(self._future(new.key), claimed)
            else:
                claimed.set_result(self._future(new.key))


def _decoded(params: dict[str, Any] | str) -> dict[str, Any]:
    return params if isinstance(params, dict) else json.loads(params)


def _finish_when_done(future: asyncio.Future[Any], key: str, later: LaterCall) -> None:
    """The span of a call a key the ledger knew answers (no batch of this process carries it): made when it is."""

    def done(settled: asyncio.Future[Any]) -> None:
        if settled.cancelled():
            later.finish(key, asyncio.CancelledError())
            return
        failure = settled.exception()
        later.finish(key, failure if failure is not None else settled.result())

    future.add_done_callback(done)
