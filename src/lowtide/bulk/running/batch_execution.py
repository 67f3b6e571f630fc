"""One go at a bulk run: attach to what is out, send what is not, keep the cost and time limits, report progress.

`BulkRun` (`running/runner.py`) checks the jobs, records the run and sorts its items (`Prepared`); an `Execution`
then does the sending and waiting for that one go, and gives back the `RunResult`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Coroutine, Sequence
from typing import TextIO

from lowtide.batching.backend import ResultLine, Settled, UnreadableLine
from lowtide.batching.engine.batch_engine import BatchEngine, GroupCall
from lowtide.batching.keys import owner_id
from lowtide.batching.policy import stored_outcome
from lowtide.bulk.outputs.results import ItemResult, ItemStatus
from lowtide.bulk.planning.batches import Splitter, batches_from
from lowtide.bulk.planning.primers import rest_of
from lowtide.bulk.progress.eta import batch_run_eta
from lowtide.bulk.progress.tally import BatchTally
from lowtide.bulk.recorded.sorting import among, stored_success
from lowtide.bulk.running.admitting import Admitting
from lowtide.bulk.running.batch_outcomes import BatchOutcomes, cut_reason, late_reason
from lowtide.bulk.running.cancels import Cancels
from lowtide.bulk.running.deadline_moves import Steps, deadline_moves
from lowtide.bulk.running.decisions import Decisions
from lowtide.bulk.running.definition import Prepared, RunDefinition
from lowtide.bulk.running.priming import Priming
from lowtide.bulk.running.state import RunEnd, RunState, Underway
from lowtide.errors import (
    ActorError,
    APIUnreachableError,
    BatchRequestCanceled,
    BatchRequestError,
    StructuredOutputError,
    classify,
)
from lowtide.ledger.runs import ItemOutcome
from lowtide.ledger.store import RequestState
from lowtide.telemetry.switch import tracing

__all__ = ["Execution"]

log = logging.getLogger(__name__)


class Execution:
    """One go at a run: attach to what is out, send what is not, keep the limits, report progress."""

    def __init__(
        self, run: RunDefinition, prepared: Prepared, *, hold: bool = True, stream: TextIO | None = None
    ) -> None:
        self.run = run
        self.prepared = prepared
        self.run_id = prepared.run_id
        self.keys = prepared.keys
        actor = run.actor
        self.clock = actor.clock
        backend = prepared.backend
        assert backend is not None, "prepared for a dry run"
        self.engine = BatchEngine(
            backend,
            actor.ledger,
            endpoint=backend.endpoint,
            settings=actor.configuration.batch,
            clock=self.clock,
            owner=owner_id(),
        )
        self.tally = BatchTally()
        self.priming = Priming(run)
        # Progress is spaced in real seconds: a batch run's clock may stand still between polls.
        self.state = RunState(
            run, prepared, underway=self._underway, moment=time.monotonic, hold=hold,
            runs=self.engine.ledger.run_store, rebuild=self._rebuilt,
        )  # fmt: skip
        self.stream = stream
        self.budget = self.state.budget
        self.outcomes = BatchOutcomes(run, self.state, backend.codec, time_up=lambda: self.time_up)
        self.admitting = Admitting(actor.configuration, self.engine, self.budget, self.tally, clock=self.clock,
                                   changed=self.state.next_change, stopping=self._stopping)  # fmt: skip
        if self.state.directory is not None:
            self.engine.on_results = self._raw
        self.batches_after = [0]  # how many batches the items still to send make, from each place in their order
        self.outstanding = 0
        self.batches_sent = 0
        self.time_up = False
        self.unreachable: APIUnreachableError | None = None
        """Set when a call could not connect to the API: nothing more is sent in this go (each batch would fail the
        same way), and what was not sent waits for the run to be started again."""
        self.cancels = Cancels(self.run_id, self.engine.ledger.run_store, self.engine.ledger, backend, self.clock)
        self.decided: set[int] = set()
        self.decisions = Decisions(self.engine.ledger.run_store, self.run_id, self.clock)
        """The items' decisions, written in order from the event loop (never a blocking write from a callback)."""
        self.tasks: set[asyncio.Task[None]] = set()
        steps = Steps(self._spawn, self._answered, self.cancels.outstanding, self._tick)
        self.moves = deadline_moves(self, self.engine.ledger.run_store, steps)  # a deadline's route, if given

    async def go(self) -> RunEnd:
        state = self.state
        try:
            await self._settle_stored()
            await self._load_finished()
            await self._count_batches()
            await self._attach()
            self.priming.plan_for(self.prepared)
            self.prepared.sorted_out()
            timer = self._spawn(self._time_limit()) if self.run.time_limit is not None else None
            if self.moves is not None:  # (canceled with the go's other tasks)
                self._spawn(self.moves.timer())
            await state.begin()
            if self.moves is not None:
                self.moves.move(self.moves.again, canceled=True)
            await self._send(await self._prime(self.prepared.to_send))
            await self._wait_for_answers()
            if timer is not None:
                timer.cancel()
            await self.decisions.flush()
            await self._recount_batches()
        finally:
            for task in self.tasks:
                task.cancel()
            try:
                await self.decisions.flush()
            except Exception as exc:  # the go failed already: that failure is the one to raise
                log.warning("Run %s: some of its items' decisions were not written: %s", self.run_id, exc)
            await self.engine.aclose()
        return await state.conclude(batches=self.tally.total, stream=self.stream, cache_saving=self.priming.saving())

    def _underway(self) -> Underway:
        tally, now = self.tally, self.clock.now()
        eta = batch_run_eta(
            now,
            tally.times(now),
            waiting=len(self.keys) - self.state.done,
            unsent_batches=tally.planned,
            parallel=self.run.max_parallel_batches,
        )
        return Underway(
            batches_total=tally.total, batches_done=tally.done, batches_in_flight=tally.out, paced_eta_seconds=eta
        )

    # What is there already.

    async def _settle_stored(self) -> None:
        """Close the batches whose results were all stored before a stop (nothing left to fetch). One that holds an
        item the sort found still out in it is not looked at: it cannot be (its members read for nothing, 50,000 of
        them for a batch a kill cut short)."""
        rows = self.prepared.row_of
        open_batches = {rows[index].batch_id for index in self.prepared.attach}
        for batch_id in await self.engine.ledger.run_store.outstanding_batches(self.run_id):
            if batch_id in open_batches:
                continue
            batch = await self.engine.ledger.batch(batch_id)
            if batch is not None:
                await self.engine.settle_stored(batch)

    async def _load_finished(self) -> None:
        rows = self.prepared.row_of
        if rows:  # (a new run has none: no set of every item to send is made)
            sending = set(self.prepared.to_send)
            again = sending | set(self.prepared.attach)
            cleared = [(i, None, None) for i in again if i in rows and rows[i].status is not None]
            if cleared:
                await self.decisions.decide(cleared)
            self.state.keep_unsent(self.prepared.rows, sending)
        finished, stored = self.prepared.finished, self.prepared.stored
        if self.state.results is None:  # not held: an answer stored is read back at the end, not now
            self.state.keep_spooled(lambda index: stored_success(rows.get(index)) or among(stored, index))
            for index in stored:  # (kept as their indexes alone: `sorting.sort_items`)
                self.state.stored_success(index)
            for index in finished:
                if stored_success(rows[index]):
                    self.state.stored_success(index)
            finished = [index for index in finished if not self.state.has(index)]
        else:
            finished = [*stored, *finished]
        async for index, record in self.state.records(self.engine.ledger, finished):
            outcome, row = stored_outcome(record), rows.get(index)
            if self.moves is not None and isinstance(outcome, BatchRequestCanceled) and (row is None or not row.status):
                self.moves.again.append(index)  # canceled in a batch before this go: moved once it has begun
                continue
            self.state.set(self.outcomes.result(index, outcome, row))

    async def _count_batches(self) -> None:
        """The batches the run used before this go (those it still waits on are counted out by `_attach`), and
        how many the items to send should take."""
        rows = self.prepared.row_of
        waiting = {rows[index].batch_id or "unrecorded" for index in self.prepared.attach}
        self.tally.done = sum(1 for batch in await self._batches_in_ledger() if batch not in waiting)
        self._plan_batches(self.prepared.to_send)

    def _plan_batches(self, indexes: Sequence[int]) -> None:
        sizes = array("q", (self.prepared.sizes[index] for index in indexes))
        self.batches_after = batches_from(sizes, max_requests=self.run.max_requests(), max_bytes=self.run.max_bytes())
        self.tally.planned = self.batches_after[0]

    async def _recount_batches(self) -> None:
        """At the end, the ledger's count: batches the engine sent again (expired or overloaded requests) count too."""
        self.tally.planned = 0
        self.tally.done = max(0, len(await self._batches_in_ledger()) - self.tally.out)

    async def _batches_in_ledger(self) -> list[str]:
        # A create the API refused (`failed`) never made a batch.
        batches = await self.engine.ledger.run_store.batches(self.run_id)
        return [batch for batch, _, state, _ in batches if state != "failed"]

    async def _attach(self) -> None:
        """Wait on the items a run stopped earlier left out in batches; they count against the cost limit."""
        rows = self.prepared.row_of
        batches: dict[str, list[int]] = {}
        for index in self.prepared.attach:
            batches.setdefault(rows[index].batch_id or "unrecorded", []).append(index)
        for batch, indexes in batches.items():
            record = await self.engine.ledger.batch(batch) if batch != "unrecorded" else None
            self.tally.out_with(batch, len(indexes), sent_at=record.submitted_at if record is not None else None)
            for index in indexes:
                worst_case = rows[index].worst_case_usd
                if worst_case is None and self.budget.limit is not None:
                    # Sent by a run with no cost limit, which priced nothing: priced now, as this run would have.
                    [(_, params, _)] = self.run.built(self.prepared, [index])
                    worst_case = self.run.worst_case(params)
                self.budget.reserve(index, worst_case)
        # Their records read together, a chunk of keys a query (each key alone was a query of its own).
        outcomes = await self.engine.outcomes([self.keys[index] for index in self.prepared.attach])
        for batch, indexes in batches.items():
            for index in indexes:
                self._watch(index, outcomes[self.keys[index]], batch=batch)

    # Sending.

    async def _prime(self, indexes: Sequence[int]) -> Sequence[int]:
        """The primers sent first, in a batch of their own, and answered (the cache written): `indexes` less them."""
        primers = self.priming.primers
        if primers:
            await self._send(primers)
            while not all(map(self.state.has, primers)) and self.unreachable is None and not self._stopping():
                await self.state.next_change()
        return rest_of(indexes, primers) if primers else indexes

    async def _send(self, indexes: Sequence[int]) -> None:
        """Send `indexes` in groups, in order. Under a cost limit a group that does not fit waits for the batches out
        to settle at their real cost; then what fits is sent and the rest leads the next group. Only when not one
        request fits, with nothing out, is the rest not run. `indexes` are in input order (ascending): an item's place
        among them is found by bisection, not kept in a map of a million entries."""

        def position(index: int) -> int:
            return bisect_left(indexes, index)

        if self.priming.primers:  # the primers, then the rest: planned apart
            self._plan_batches(indexes)

        splitter = Splitter(
            ((entry, entry[2]) for entry in self.priming.marked(self.run.built(self.prepared, indexes))),
            max_requests=self.run.max_requests(),
            max_bytes=self.run.max_bytes(),
        )

        def and_after(group: list[int]) -> list[int]:
            """The group and every item after it: what is decided at once when none of them is to be sent."""
            return group + list(indexes[position(group[-1]) + 1 :])

        while taken := splitter.take():
            group = [index for (index, _, _), _ in taken]
            await self._capacity()
            if self._halted(and_after, group, unreachable=True):
                return
            worst = self.priming.worst_case
            calls = [
                GroupCall(self.keys[i], params, size, worst(i, self.run.worst_case(params)), self.run.model_of(params))
                for (i, params, size), _ in taken
            ]
            fitting = await self.admitting.fitting(calls)
            if self._halted(and_after, group, unreachable=False):
                await self.admitting.unsent(calls[:fitting])
                return
            if not fitting:
                self._decide_unsent(and_after(group), ItemStatus.NOT_RUN, self.admitting.refusal(calls))
                return
            splitter.give_back(taken[fitting:])
            self.tally.planned = self.batches_after[position(group[fitting - 1]) + 1]
            await self._dispatch(calls[:fitting], group[:fitting])

    def _halted(self, rest: Callable[[list[int]], list[int]], group: list[int], *, unreachable: bool) -> bool:
        """Whether sending stops before `group`: it and the `rest` moved, not run (API unreachable) or failed (late)."""
        if self.moves is not None and self.moves.moving:
            self.moves.move(rest(group), canceled=False)
        elif unreachable and self.unreachable is not None:
            self._decide_unsent(rest(group), ItemStatus.NOT_RUN, f"not sent: {self.unreachable}")
        elif self.time_up:
            self._decide_unsent(rest(group), ItemStatus.FAILED, late_reason(self.run.time_limit))
        else:
            return False
        return True

    def _decide_unsent(self, indexes: Sequence[int], status: ItemStatus, reason: str) -> None:
        self.tally.planned = 0
        self._decide(indexes, status, reason)

    async def _dispatch(self, calls: list[GroupCall], indexes: list[int]) -> None:
        for call, index in zip(calls, indexes, strict=True):
            self.budget.reserve(index, call.worst_case_usd)
        later = None
        if tracing():  # each item's call span, made when its answer arrives (children of the run's span)
            from lowtide.telemetry.later_calls import for_run

            telemetry_name, models = self.engine.backend.codec.telemetry_name(), [call.model or "" for call in calls]
            later = for_run(self.run.actor.configuration, gen_ai_provider=telemetry_name, run_id=self.run_id,
                            defaults=self.run.defaults, models=models)  # fmt: skip
        try:
            futures = await self.engine.send_group(calls, actor=self.run.actor.name, later=later)
        except BaseException:
            await self.admitting.unsent(calls)
            raise
        self.batches_sent += 1
        batch = f"sent-{self.batches_sent}"
        self.tally.out_with(batch, len(indexes), sent_at=self.clock.now())
        for call, index in zip(calls, indexes, strict=True):
            self._watch(index, futures[call.key], batch=batch)
        self.state.report(now=True)

    async def _capacity(self) -> None:
        while self.tally.out >= self.run.max_parallel_batches and not self._stopping():
            await self.state.next_change()

    # Answers.

    def _watch(self, index: int, future: asyncio.Future[Settled], *, batch: str) -> None:
        self.outstanding += 1

        def settled(done: asyncio.Future[Settled]) -> None:
            if done.cancelled():
                self.outstanding -= 1
                return
            failure = done.exception()
            if failure is None:
                outcome: Settled = done.result()
            elif isinstance(failure, BatchRequestError):
                outcome = failure
            else:
                # Not the request's own outcome: the work around it failed (a download cut, the API unreachable, a
                # batch past its max wait). Where the item stands is the ledger's to say.
                error = failure if isinstance(failure, ActorError) else classify(failure, doing="collecting an answer")
                if isinstance(error, APIUnreachableError):
                    self.unreachable = error  # nothing more is sent: the run ends saying so
                self._spawn(self._unsettled(index, error, batch))
                return
            self.outstanding -= 1
            self._answered(index, outcome)
            self._counted(batch)

        future.add_done_callback(settled)

    def _counted(self, batch: str) -> None:
        batch_done = self.tally.settled(batch, at=self.clock.now())
        self.state.change()
        self.state.report(now=batch_done)

    async def _unsettled(self, index: int, error: ActorError, batch: str) -> None:
        """An item whose call failed for a reason of lowtide's or the API's, not the request's: final if the ledger
        has its outcome after all; waiting on its batch (the API has it) or pending (a create whose outcome is unknown)
        if its request is not final, which the same run again collects; failed if it is in no batch (its create was
        refused: `lowtide retry` sends it again) or the ledger has no trace of it."""
        key = self.keys[index]
        try:
            try:
                record = await self.engine.ledger.request(key)
                batch_record = await self.engine.ledger.batch(record.batch_id) if record and record.batch_id else None
                if record is not None and record.state is RequestState.PENDING:
                    # In no batch: its create was refused, nothing sent. Failed, so that `lowtide retry` sends it.
                    reason = f"{type(error).__name__}: {error}"
                    await self.decisions.decide([(index, ItemStatus.FAILED.value, reason)])
            except ActorError:  # the ledger cannot say: the error is all there is to report
                record, batch_record = None, None
            if record is None or record.state is RequestState.PENDING:
                self._answered(index, error)
            elif record.state.final:
                self._answered(index, stored_outcome(record))
            else:
                self.state.unfinished(index, error, record.state, batch_record)
        finally:
            self.outstanding -= 1  # only now: the run waits for every item's word before it ends
            self._counted(batch)

    def _answered(self, index: int, outcome: Settled) -> None:
        if self.moves is not None and isinstance(outcome, BatchRequestCanceled):
            self.budget.release(index)  # never answered, never charged: moved, under a new attempt's key
            self.moves.move([index], canceled=True)
            return
        result = self.outcomes.result(index, outcome, None)
        if isinstance(result.error, StructuredOutputError):
            self.decisions.add([(index, ItemStatus.FAILED.value, str(result.error))])
        elif index in self.decided and result.status is ItemStatus.SUCCEEDED:
            self.decisions.add([(index, None, None)])
        self.budget.settle(index, result.cost_usd)
        self.state.settle([result])

    def _rebuilt(self, outcome: ItemOutcome) -> ItemResult:
        return self.outcomes.rebuilt(outcome)  # (the state is made before the outcomes, which read it)

    def _decide(self, indexes: Sequence[int], status: ItemStatus, reason: str) -> None:
        """Items the run settles without the API (not sent for the cost limit, or the time limit)."""
        undecided = [i for i in indexes if not self.state.has(i)]
        if not undecided:
            return
        self.decisions.add([(i, status.value, reason) for i in undecided])
        self.decided.update(undecided)
        self.state.settle([self.state.item(i, status, reason=reason) for i in undecided])
        self.state.report()

    def _stopping(self) -> bool:
        """Whether sending has stopped: the time limit passed, or a deadline's work is moving."""
        return self.time_up or (self.moves is not None and self.moves.moving)

    async def _wait_for_answers(self) -> None:
        while self.outstanding > 0:
            if self.time_up:
                # The canceled batches' answers have `cancel_grace` to arrive; then the rest is reported failed.
                grace_ends = self.clock.now() + self.run.cancel_grace
                while self.outstanding > 0 and self.clock.now() < grace_ends:
                    await self.cancels.outstanding()
                    await self._change_or_tick(grace_ends)
                # A batch whose create was on its way is canceled too: nothing is left running once the run gives up.
                await self.engine.dispatched()
                await self.cancels.outstanding()
                self._decide(self.state.undecided(), ItemStatus.FAILED, cut_reason(self.run.time_limit))
                return
            await self.state.next_change()

    async def _change_or_tick(self, until: float) -> None:
        """Wait for an answer, or a tick of the clock (never past `until`), whichever comes first."""
        change = asyncio.ensure_future(self.state.next_change())
        tick = asyncio.ensure_future(self.clock.sleep(min(self._tick(), max(0.0, until - self.clock.now()))))
        await asyncio.wait({change, tick}, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (change, tick):
            waiter.cancel()

    def _tick(self) -> float:
        """How often limits are looked at: as often as batches are polled, and at least every 5 seconds."""
        return max(0.01, min(self.run.actor.configuration.batch.poll_interval, 5.0))

    async def _time_limit(self) -> None:
        assert self.run.time_limit is not None
        deadline = self.state.started + self.run.time_limit
        while (left := deadline - self.clock.now()) > 0:
            await self.clock.sleep(min(left, self._tick()))
        self.time_up = True
        log.warning("Run %s: time limit of %gs passed; canceling its outstanding batches.", self.run_id,
                    self.run.time_limit)  # fmt: skip
        await self.cancels.outstanding()
        pending = self.state.undecided()
        self.decided.update(pending)
        await self.decisions.decide([(i, ItemStatus.FAILED.value, cut_reason(self.run.time_limit)) for i in pending])
        self.state.change()

    # Reporting.

    def _raw(self, batch_id: str, provider_batch_id: str, lines: Sequence[ResultLine | UnreadableLine]) -> None:
        del batch_id
        if self.state.directory is not None:
            self.state.directory.add_raw(provider_batch_id, lines)

    def _spawn(self, coroutine: Coroutine[object, None, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task
