"""How a call waits for its request's final outcome: on this process's own batch, on a batch it polls for the process
that sent it (one poller per batch across processes, by the batch's lease), or by watching the ledger while another
live process works; and how it takes over what a dead process left (a pending request, a create whose outcome is
unknown)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Sequence
from typing import Any

from lowtide.batching.backend import Settled
from lowtide.batching.engine.shared_state import REREAD_CHUNK, BatchWatch, EngineCore, shared_done
from lowtide.batching.gc_tuning import freeze_survivors, thaw
from lowtide.batching.keys import owner_alive
from lowtide.batching.policy import settled_of, stored_outcome
from lowtide.errors import ActorError, InternalError, classify
from lowtide.ledger.store import BatchClaim, BatchRecord, BatchState, RequestRecord, RequestState

__all__ = ["IN_BATCH", "Waiting"]

IN_BATCH = (RequestState.SUBMITTING, RequestState.WAITING)
"""A request's states while it is in a batch: one a process is creating, or one the API has."""


class Waiting(EngineCore):
    def _forward(self, source: Awaitable[Settled], future: asyncio.Future[Settled]) -> None:
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

    async def _final(self, record: RequestRecord) -> Settled:
        while not record.state.final:
            if record.state is RequestState.PENDING:
                if self._mine(record):
                    return await self._future(record.key)
                if record.owner == self.owner:  # this engine's, on its way nowhere (left out of an intent): queued
                    self._enqueue(record)
                    return await self._future(record.key)
                record = await self._rescue_pending(record)
                if record.owner == self.owner:
                    continue
            elif record.state is RequestState.SUBMITTING:
                batch = await self._batch(record.batch_id or "")
                if batch is not None and await self._rescue_batch(batch):
                    return await self._future(record.key)
                if batch is not None:  # a live process is creating it: watched with the others waiting on it
                    watched = self._watched(record.key, batch.id)
                    del record
                    return await asyncio.shield(watched)
            elif await self._poll_here(record.batch_id or ""):  # waiting on a batch the API has
                key = record.key
                if record.batch_id in self._pollers:  # its collection answers the call, however late it comes
                    del record  # not held while it waits: a resumed bulk run waits on tens of thousands (2 KB each)
                    return await self._future(key)
                record = await self._reread(key)  # collected here since it was decided: what it stored
                continue
            elif record.state is RequestState.WAITING and record.batch_id is not None:
                # Another live process polls it: this engine's one watcher of that batch answers the call.
                watched = self._watched(record.key, record.batch_id)
                del record
                return await asyncio.shield(watched)  # (shared by the calls of one key: none cancels the others')
            # Another live process is on it: watch the ledger.
            record = await self._watch(record)
        self._stored_in(record.batch_id)
        return stored_outcome(record)

    async def _poll_here(self, batch_id: str) -> bool:
        """Poll a batch the API has here, unless another live process (on any host) polls it: one poller per batch
        across processes, by the batch's lease. True when this engine polls it. The calls waiting on one batch decide
        it once, together: thousands of them finding its poller dead ask the ledger once, not each in turn."""
        if batch_id in self._pollers:
            return True
        deciding = self._poll_decisions.get(batch_id)
        if deciding is None:
            deciding = asyncio.ensure_future(self._decide_poll(batch_id))
            self._poll_decisions[batch_id] = deciding
            deciding.add_done_callback(functools.partial(shared_done, self._poll_decisions, batch_id))
        return await asyncio.shield(deciding)

    async def _decide_poll(self, batch_id: str) -> bool:
        if batch_id in self._pollers:
            return True
        batch = await self._batch(batch_id)
        now = self._clock.now()
        if batch is None or not batch.state.outstanding:
            return False  # collected since the caller read its record (by another process): read it again instead
        if batch.owner not in (None, self.owner) and owner_alive(batch.owner, batch.owner_until, now):
            return False
        dead = batch.owner if batch.owner != self.owner else None
        until = now + self.settings.lease_seconds
        if not await self.ledger.claim_batch(BatchClaim(batch_id, self.owner, until, now, dead_owner=dead)):
            return False  # another process took it first: it polls, this one watches
        self._ensure_poller(batch_id)
        return True

    def _watched(
        self, key: str, batch_id: str, future: asyncio.Future[Settled] | None = None, read_after: int | None = None
    ) -> asyncio.Future[Settled]:
        """The outcome of `key`, in `batch_id` (which another live process creates or polls), as this engine's one
        watcher of that batch (started if none runs) gives it: into `future` if given (a call's own). `read_after`: the
        results' cursor taken before the caller read the key in that batch; the watcher then reads the results from
        there instead of the key's state (and its state only if the batch is no longer outstanding: a key leaves a
        batch with no result only when its create is refused or given up, which fails the batch)."""
        watch = self._watches.get(batch_id)
        if watch is None:
            watch = BatchWatch({}, set(), asyncio.Event())
            self._watches[batch_id] = watch
            self._spawn(self._watch_batch(batch_id, watch), waiters=[])
        waiting = watch.waiting.get(key)
        if waiting is not None and not waiting.done():  # another call of this key waits already: the same outcome
            if future is None:
                return waiting
            self._forward(waiting, future)
            return future
        watch.waiting[key] = future = future or asyncio.get_running_loop().create_future()
        if read_after is None:
            watch.fresh.add(key)
        else:
            watch.rewind = read_after if watch.rewind is None else min(watch.rewind, read_after)
            watch.rewound.add(key)
        watch.registered.set()
        return future

    async def _taken_here(self, batch_id: str) -> bool:
        """Whether this engine now works on a batch calls of its wait on: reconciles it (a create whose creator
        died, `_rescue_batch`), or polls it (`_poll_here`: its poller died, or none polls it). Then its own tasks
        settle those calls."""
        if batch_id in self._pollers:
            return True
        batch = await self._batch(batch_id)
        if batch is not None and batch.state in (BatchState.INTENT, BatchState.UNKNOWN):
            return await self._rescue_batch(batch)
        return await self._poll_here(batch_id)

    def _wait_here(self, batch_id: str, key: str, future: asyncio.Future[Settled]) -> None:
        """`future` given what this engine's own work on `batch_id` settles for `key` (`_taken_here` said it works on
        it): while its poller (or reconciliation, or create) is there, whose collection answers the call however late
        it comes (`LateWaiters`); else (collected here since it was decided) what the ledger holds (`_final_of`)."""
        if future.done():
            return
        if not (batch_id in self._pollers or batch_id in self._reconciling or batch_id in self._creating):
            self._forward(self._final_of(key), future)
            return
        own = self._futures.get(key)
        if own is None or own.done():
            self._futures[key] = future
            self._registered += 1  # (a collection looks for calls that came to wait late when this moved)
        elif own is not future:
            self._forward(own, future)

    async def _watch_batch(self, batch_id: str, watch: BatchWatch) -> None:
        """Watch a batch another live process polls for the calls of this engine waiting on it (`watch.waiting`),
        until none waits. A key that registers has its state read at the watcher's next turn, whatever woke it (its
        caller's read may predate a notice the watcher took already). At each of the batch's notices (where the store
        announces changes; else every `watch_interval`) the watcher reads only what came since its last read: the
        keys of the results stored from the batch after its cursor (`results_since`, taken before any state was
        read), whose records it reads and hands to their calls if they wait here, and the batch's record; when that
        record says the batch is no longer outstanding (a call may move without a result: an intent refused or given
        up), or when its timer, max(`watch_interval`, a quarter of the lease), ran out where notices come, every
        waiting key's state is read too (`_hand_moved`), and, if any still waits, whether this engine must work on the
        batch (`_taken_here`: its creator or poller died; looked at too when the batch's state or owner changed).
        Without notices (SQLite, memory: a result is seen in the order stored, the cursor misses none) that last look
        is made at each turn, the states read only when the batch is no longer outstanding."""
        notices = self.ledger.notices
        noticed = notices.watch(batch_id) if notices is not None else None  # watched first, read then
        every = self.settings.watch_interval
        if noticed is not None:
            every = max(every, self.settings.lease_seconds / 4)
        timer: asyncio.Future[None] | None = None
        try:
            # Before any state is read: a result stored after a key's state was read comes after the cursor.
            _, cursor = await self.ledger.results_since(batch_id, None)
            batch = await self._batch(batch_id)
            seen = (batch.state, batch.owner) if batch is not None else None
            woken = timed = False  # by a notice or the timer; by the timer
            while True:
                keys = list(watch.fresh)
                watch.fresh.clear()
                watch.registered.clear()
                rewind, rewound = watch.rewind, watch.rewound
                watch.rewind, watch.rewound = None, set()
                owner_looked = False  # whether this engine must take the batch over
                if woken or rewind is not None:
                    if noticed is not None and woken:
                        noticed.clear()  # before the reads: a notice meanwhile wakes the next turn
                    if rewind is not None:
                        cursor = min(cursor, rewind)
                    arrived, cursor = await self.ledger.results_since(batch_id, cursor)
                    waiting = watch.waiting
                    await self._hand_over(batch_id, watch, [key for key in dict.fromkeys(arrived) if key in waiting])
                    batch = await self._batch(batch_id)
                    if rewound and (batch is None or not batch.state.outstanding):
                        # It ended with no result for some (failed, canceled, expired, before or after their read):
                        # their states tell.
                        keys.extend(key for key in rewound if key in watch.waiting)
                if woken:
                    now_seen = (batch.state, batch.owner) if batch is not None else None
                    # Every state is read when the batch may have let calls go with no result: it is no longer
                    # outstanding (only a create refused or given up lets its members go, and it fails the batch);
                    # not as it is created, nor as it ends.
                    moved = now_seen != seen and (batch is None or not batch.state.outstanding)
                    every_state = moved or (timed and noticed is not None)
                    # (without notices its owner's death is seen by time; with, by the timer or a change of owner)
                    owner_looked = every_state or noticed is None or now_seen != seen
                    seen = now_seen
                    if every_state:
                        keys = list(watch.waiting)
                if keys:
                    await self._hand_moved(batch_id, watch, keys)
                if owner_looked and watch.waiting and await self._taken_here(batch_id):
                    # Its creator or poller died and this engine works on it now: its waiters are this engine's.
                    self._watches.pop(batch_id, None)
                    for key, future in watch.waiting.items():
                        self._wait_here(batch_id, key, future)
                    return
                if not watch.waiting:  # no await since the last registration was seen: none is missed
                    self._watches.pop(batch_id, None)
                    thaw()  # every answer it brought here is handed out (as a collection gives them back)
                    return
                if watch.fresh or watch.rewind is not None:
                    woken = timed = False
                    continue
                if timer is None:
                    timer = asyncio.ensure_future(self._clock.sleep(every))
                waits: list[asyncio.Future[Any]] = [timer, asyncio.ensure_future(watch.registered.wait())]
                if noticed is not None:
                    waits.append(asyncio.ensure_future(noticed.wait()))
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waited in waits[1:]:
                        waited.cancel()
                timed = timer.done()
                woken = timed or (noticed is not None and noticed.is_set())
                if timed:
                    timer = None
        except BaseException as exc:  # every call waiting gets the error (a cancellation: the engine is closing)
            if self._watches.get(batch_id) is watch:
                del self._watches[batch_id]
            if isinstance(exc, asyncio.CancelledError):
                for future in watch.waiting.values():
                    future.cancel()
            else:
                error = classify(exc, doing="watching a batch another process polls")
                for future in watch.waiting.values():
                    if not future.done():
                        future.set_exception(error)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            if notices is not None and noticed is not None:
                notices.unwatch(batch_id, noticed)

    async def _hand_moved(self, batch_id: str, watch: BatchWatch, keys: list[str]) -> None:
        """Read the states of `keys`; settle those final from their stored records, and hand those otherwise no longer
        waiting on `batch_id` (requeued, in another batch) to `_final`."""
        moved: list[str] = []
        for start in range(0, len(keys), REREAD_CHUNK):
            chunk = keys[start : start + REREAD_CHUNK]
            states = {found.key: found for found in await self.ledger.states_of(chunk)}
            for key in chunk:
                found = states.get(key)
                if found is None or found.state not in IN_BATCH or found.batch_id != batch_id:
                    moved.append(key)
        await self._hand_over(batch_id, watch, moved)

    async def _hand_over(self, batch_id: str, watch: BatchWatch, keys: list[str]) -> None:
        """Settle the calls waiting on `keys` whose latest result from `batch_id` is final from that result (its answer
        read from the batch's results alone, `answers_of`: what the caller's outcome is made of, no parameters nor
        record), and hand the others (requeued, in another batch, left with no result) to `_final`, their records
        read; a query per `REREAD_CHUNK` keys each."""
        for start in range(0, len(keys), REREAD_CHUNK):
            chunk = keys[start : start + REREAD_CHUNK]
            answers = {answer.key: answer for answer in await self.ledger.answers_of(batch_id, chunk)}
            # A final result is the request's outcome (a request leaves a batch only by a result that sends it on to
            # another attempt, or with none): the record is read only for the others.
            again = [key for key in chunk if (found := answers.get(key)) is None or not found.state.final]
            records = {record.key: record for record in await self.ledger.requests_for(again)} if again else {}
            for key in chunk:
                future = watch.waiting.pop(key, None)
                if future is None or future.done():
                    continue
                answer = answers.get(key)
                if answer is not None and answer.state.final:
                    future.set_result(settled_of(key, answer.state, answer.response, answer.error))
                    continue
                record = records.get(key)
                if record is None:
                    future.set_exception(InternalError(f"request {key} vanished from the ledger"))
                elif record.state.final:
                    future.set_result(stored_outcome(record))
                else:
                    self._forward(self._final(record), future)
            freeze_survivors(len(answers))  # the answers just handed out live as long as their callers keep them

    async def _watch(self, record: RequestRecord) -> RequestRecord:
        """Wait for another process's work on `record`, and read it again. Where the store announces changes
        (`notices`), until its batch's next announcement, or at most a quarter of the lease (its owner may have
        died); else for `watch_interval`."""
        notices = self.ledger.notices
        if notices is None or record.batch_id is None:
            await self._clock.sleep(self.settings.watch_interval)
            return await self._reread(record.key)
        event = notices.watch(record.batch_id)
        try:
            again = await self._reread(record.key)  # watched first, read then: an announcement between is not missed
            if again != record:
                return again
            woken = asyncio.ensure_future(event.wait())
            timer = asyncio.ensure_future(
                self._clock.sleep(max(self.settings.watch_interval, self.settings.lease_seconds / 4))
            )
            try:
                await asyncio.wait((woken, timer), return_when=asyncio.FIRST_COMPLETED)
            finally:
                woken.cancel()
                timer.cancel()
            return await self._reread(record.key)
        finally:
            notices.unwatch(record.batch_id, event)

    async def _rescue_pending(self, record: RequestRecord) -> RequestRecord:
        """Take over a pending request whose owner died or whose lease ran out, and queue it here."""
        taken = await self._take_abandoned(record)
        if taken is not None and taken.state is RequestState.PENDING:
            self._enqueue(taken)
            return taken
        return await self._reread(record.key)

    async def _take_abandoned(self, record: RequestRecord) -> RequestRecord | None:
        """Own a pending request whose owner died or whose lease ran out; its record now, or None if not taken."""
        now = self._clock.now()
        if owner_alive(record.owner, record.owner_until, now) and record.owner != self.owner:
            return None
        # Seen dead (or out of its lease): take it, unless another process took it first.
        dead = record.owner if record.owner != self.owner else None
        until = now + self.settings.lease_seconds
        if await self.ledger.take_over(record.key, owner=self.owner, until=until, now=now, dead_owner=dead):
            return await self._reread(record.key)
        return None

    async def _take_all_abandoned(self, records: Sequence[RequestRecord]) -> dict[str, RequestRecord]:
        """`_take_abandoned` of many pending records at once (a dead run's claims, found again by the run resumed):
        the take-overs one transaction a chunk, those taken read again together; the records now of those taken."""
        now = self._clock.now()
        alive: dict[tuple[str | None, float | None], bool] = {}
        free: list[tuple[str, str | None]] = []
        for record in records:
            seen = (record.owner, record.owner_until)
            if seen not in alive:  # (one dead owner holds them all, most often: its pid looked at once)
                alive[seen] = owner_alive(record.owner, record.owner_until, now)
            if alive[seen] and record.owner != self.owner:
                continue
            free.append((record.key, record.owner if record.owner != self.owner else None))
        until = now + self.settings.lease_seconds
        taken: dict[str, RequestRecord] = {}
        for start in range(0, len(free), REREAD_CHUNK):
            chunk = free[start : start + REREAD_CHUNK]
            keys = await self.ledger.take_over_many(chunk, owner=self.owner, until=until, now=now)
            if keys:
                taken.update((again.key, again) for again in await self.ledger.requests_for(sorted(keys)))
        return taken

    async def _rescue_batch(self, batch: BatchRecord) -> bool:
        """Reconcile a batch whose create's outcome is unknown, unless a live process is still creating it."""
        if batch.id in self._reconciling or batch.id in self._creating:
            return True  # this process is on it: the caller waits for the outcome
        now = self._clock.now()
        if batch.owner != self.owner and owner_alive(batch.owner, batch.owner_until, now):
            return False
        claim = BatchClaim(batch.id, self.owner, until=now + self.settings.lease_seconds, now=now, force=True)
        if not await self.ledger.claim_batch(claim):
            return False  # pragma: no cover - lost a race to another process; the caller watches the ledger
        if batch.id in self._reconciling or batch.id in self._creating:
            return True  # another call of this process took it while the lease was being taken
        self._reconciling[batch.id] = self._spawn(self._reconcile(batch.id), waiters=self._members_of(batch.id))
        return True
