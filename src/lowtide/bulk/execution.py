"""One go at a bulk run: attach to what is out, send what is not, keep the cost and time limits, report progress.

`BulkRun` (runner.py) checks the jobs, records the run and sorts its items (`Prepared`); an `Execution` then does
the sending and waiting for that one go, and gives back the `RunResult`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol, TextIO

from pydantic import BaseModel

from lowtide.answers import TextAnswer, response_of
from lowtide.batching.backend import BatchBackend, BatchCodec, ResultLine, Settled, UnreadableLine
from lowtide.batching.engine import BatchEngine, GroupCall
from lowtide.batching.keys import owner_id
from lowtide.batching.policy import stored_outcome
from lowtide.bulk.budget import RunBudget
from lowtide.bulk.citations import citations_json
from lowtide.bulk.decisions import Decisions
from lowtide.bulk.jobs import Jobs
from lowtide.bulk.plan import Splitter, batches_from
from lowtide.bulk.progress import ProgressCallback, ProgressReporter, ReporterMode, RunProgress, reporter_for
from lowtide.bulk.results import ItemResult, ItemStatus, ResultsDirectory, RunResult, write_lines
from lowtide.bulk.tally import BatchTally
from lowtide.clock import Clock
from lowtide.config import ActorConfiguration, BatchProcessingMode
from lowtide.errors import (
    ActorError,
    APIUnreachableError,
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestExpired,
    StructuredOutputError,
    classify,
)
from lowtide.ledger.interface import LedgerStore, RunLedger
from lowtide.ledger.runs import ItemRow
from lowtide.ledger.store import BatchRecord, RequestRecord, RequestState
from lowtide.live.caller import LiveCaller
from lowtide.providers.base import Provider
from lowtide.types import ActorRequest

__all__ = ["Execution", "Prepared", "RunActor", "RunDefinition"]

log = logging.getLogger(__name__)

# Progress reaches the reporters at most this often (real seconds), besides every batch sent or finished.
_REPORT_EVERY = 0.2


class RunActor(Protocol):
    """What a bulk run needs of its actor (`lowtide.Actor` is one): its settings, ledger and clock, requests built
    from its defaults, its provider (for the pre-send checks), its batch codec and backend, and its live caller."""

    @property
    def name(self) -> str: ...

    @property
    def configuration(self) -> ActorConfiguration: ...

    @property
    def ledger(self) -> LedgerStore: ...

    @property
    def clock(self) -> Clock: ...

    def request(
        self, prompt: str | None = None, *, response_model: type[BaseModel] | None = None, **params: Any
    ) -> ActorRequest: ...

    def provider(self, mode: BatchProcessingMode | str | None = None) -> Provider: ...

    def batch_codec(self, capability: str = ...) -> BatchCodec: ...

    def batch_backend(self, capability: str = ...) -> BatchBackend: ...

    def live_caller(self) -> LiveCaller: ...


class RunDefinition(Protocol):
    """What an execution needs of its run (`BulkRun` is one): the jobs, the limits and outputs, and how requests
    are built, sized and priced."""

    actor: RunActor
    jobs: Jobs
    response_model: type[BaseModel] | None
    max_parallel_batches: int
    max_cost_usd: Decimal | None
    time_limit: float | None
    cancel_grace: float
    results_dir: Path | None
    out: Path | None
    on_progress: ProgressCallback | None
    progress: ReporterMode
    progress_stream: TextIO | None
    progress_interval: float

    def built(self, prepared: Prepared, indexes: Sequence[int]) -> Iterator[tuple[int, dict[str, Any] | str, int]]: ...

    def model_of(self, params: Mapping[str, Any] | str) -> str: ...

    def max_requests(self) -> int: ...

    def max_bytes(self) -> int: ...

    def worst_case(self, params: Mapping[str, Any] | str) -> Decimal | None: ...


@dataclass
class Prepared:
    """A run as `_prepare` found it: its keys, and which items are final, out in a batch, or to send."""

    run_id: str
    store: RunLedger
    backend: BatchBackend | None
    keys: list[str]
    rows: list[ItemRow]
    finished: list[int]
    attach: list[int]
    to_send: list[int]
    spent: Decimal
    sizes: list[int]
    """Each job's size as a batch request, estimated before its file is read: how many batches are still to come."""
    identity: str
    """The ledger's identity, which its custom ids carry (`BatchCodec.custom_id_for`)."""


class Execution:
    """One go at a run: attach to what is out, send what is not, keep the limits, report progress."""

    def __init__(self, run: RunDefinition, prepared: Prepared) -> None:
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
        self.results: list[ItemResult | None] = [None] * len(run.jobs)
        self.counts = dict.fromkeys(ItemStatus, 0)
        self.done = 0
        self.reported_at = -math.inf
        self.directory = ResultsDirectory(run.results_dir) if run.results_dir is not None else None
        if self.directory is not None:
            self.engine.on_results = self._raw
        self.budget = RunBudget(run.max_cost_usd, prepared.spent)
        self.tally = BatchTally()
        self.batches_after = [0]  # how many batches the items still to send make, from each place in their order
        self.outstanding = 0
        self.batches_sent = 0
        self.time_up = False
        self.unreachable: APIUnreachableError | None = None
        """Set when a call could not connect to the API: nothing more is sent in this go (each batch would fail the
        same way), and what was not sent waits for the run to be started again."""
        self.canceled: set[str] = set()
        """The provider ids of the batches this go canceled (at the time limit)."""
        self.decided: set[int] = set()
        self.decisions = Decisions(self.engine.ledger.run_store, self.run_id, self.clock)
        """The items' decisions, written in order from the event loop (never a blocking write from a callback)."""
        self.changed = asyncio.Event()
        self.started = self.clock.now()
        self.progress: ProgressReporter = reporter_for(
            run.progress,
            run.progress_stream or sys.stderr,
            interval=run.progress_interval,
            clock=self.clock,
            on_progress=run.on_progress,
        )
        self.tasks: set[asyncio.Task[Any]] = set()

    async def go(self) -> RunResult:
        try:
            for batch_id in await self.engine.ledger.run_store.outstanding_batches(self.run_id):
                batch = await self.engine.ledger.batch(batch_id)
                if batch is not None:
                    await self.engine.settle_stored(batch)  # results stored before a stop: nothing left to fetch
            await self._load_finished()
            await self._count_batches()
            if self.directory is not None:
                self.directory.start([r for r in self.results if r is not None])
            self._attach()
            timer = self._spawn(self._time_limit()) if self.run.time_limit is not None else None
            self._report(now=True)
            await self._send(self.prepared.to_send)
            await self._wait_for_answers()
            if timer is not None:
                timer.cancel()
            await self.decisions.flush()
            await self._recount_batches()
            result = self._result()
        finally:
            for task in self.tasks:
                task.cancel()
            try:
                await self.decisions.flush()
            except Exception as exc:  # the go failed already: that failure is the one to raise
                log.warning("Run %s: some of its items' decisions were not written: %s", self.run_id, exc)
            await self.engine.aclose()
        if self.directory is not None:
            self.directory.finish(result.items)
        if self.run.out is not None:
            write_lines(self.run.out, (item.as_json() for item in result.items))
        self.progress.close(self._snapshot())
        return result

    # What is there already.

    async def _load_finished(self) -> None:
        rows = {row.index: row for row in self.prepared.rows}
        sending = set(self.prepared.to_send)
        again = sending | set(self.prepared.attach)
        cleared = [(i, None, None) for i in again if i in rows and rows[i].status is not None]
        if cleared:
            await self.decisions.decide(cleared)
        for row in self.prepared.rows:
            if row.request_state is None and row.index not in sending:
                # Not sent this time (a retry sends only what failed): it stays as the run left it.
                status = ItemStatus(row.status) if row.status is not None else ItemStatus.NOT_RUN
                job_id = self.run.jobs.id_of(row.index)
                self._set(ItemResult(row.index, job_id, row.key, status, reason=row.reason))
        finished = self.prepared.finished
        for start in range(0, len(finished), 1000):  # a thousand records at a time: each holds its whole answer
            chunk = finished[start : start + 1000]
            records = {r.key: r for r in await self.engine.ledger.requests_for([self.keys[i] for i in chunk])}
            for index in chunk:
                record = records[self.keys[index]]
                self._set(self._outcome_result(index, self._stored(record), rows[index]))

    async def _count_batches(self) -> None:
        """The batches the run used before this go (those it still waits on are counted out by `_attach`), and
        how many the items to send should take."""
        rows = {row.index: row for row in self.prepared.rows}
        waiting = {rows[index].batch_id or "unrecorded" for index in self.prepared.attach}
        self.tally.done = sum(1 for batch in await self._batches_in_ledger() if batch not in waiting)
        sizes = [self.prepared.sizes[index] for index in self.prepared.to_send]
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

    def _attach(self) -> None:
        """Wait on the items a run stopped earlier left out in batches; they count against the cost limit."""
        rows = {row.index: row for row in self.prepared.rows}
        batches: dict[str, list[int]] = {}
        for index in self.prepared.attach:
            batches.setdefault(rows[index].batch_id or "unrecorded", []).append(index)
        for batch, indexes in batches.items():
            self.tally.out_with(batch, len(indexes))
            for index in indexes:
                worst_case = rows[index].worst_case_usd
                if worst_case is None and self.budget.limit is not None:
                    # Sent by a run with no cost limit, which priced nothing: priced now, as this run would have.
                    [(_, params, _)] = self.run.built(self.prepared, [index])
                    worst_case = self.run.worst_case(params)
                self.budget.reserve(index, worst_case)
                self._watch(index, asyncio.ensure_future(self.engine.outcome(self.keys[index])), batch=batch)

    def _stored(self, record: RequestRecord) -> Settled:
        """A final request's outcome as stored: its answer (held as its fields when it is text alone) or its error."""
        return stored_outcome(record)

    # Sending.

    async def _send(self, indexes: Sequence[int]) -> None:
        """Send `indexes` in groups, in order. Under a cost limit a group that does not fit waits for the batches out
        to settle at their real cost; then what fits is sent and the rest leads the next group. Only when not one
        request fits, with nothing out, is the rest not run."""
        position = {index: at for at, index in enumerate(indexes)}
        splitter = Splitter(
            ((entry, entry[2]) for entry in self.run.built(self.prepared, indexes)),
            max_requests=self.run.max_requests(),
            max_bytes=self.run.max_bytes(),
        )

        def and_after(group: list[int]) -> list[int]:
            """The group and every item after it: what is decided at once when none of them is to be sent."""
            return group + list(indexes[position[group[-1]] + 1 :])

        while taken := splitter.take():
            group = [index for (index, _, _), _ in taken]
            await self._capacity()
            if self.unreachable is not None:
                self._decide_unsent(and_after(group), ItemStatus.NOT_RUN, f"not sent: {self.unreachable}")
                return
            if self.time_up:
                self._decide_unsent(and_after(group), ItemStatus.FAILED, self._late_reason())
                return
            calls = [
                GroupCall(self.keys[i], params, size, self.run.worst_case(params), self.run.model_of(params))
                for (i, params, size), _ in taken
            ]
            fitting = await self._affordable(calls)
            if self.time_up:
                self._decide_unsent(and_after(group), ItemStatus.FAILED, self._late_reason())
                return
            if not fitting:
                self._decide_unsent(and_after(group), ItemStatus.NOT_RUN, self.budget.refusal(calls[0].worst_case_usd))
                return
            splitter.give_back(taken[fitting:])
            self.tally.planned = self.batches_after[position[group[fitting - 1]] + 1]
            await self._dispatch(calls[:fitting], group[:fitting])

    def _decide_unsent(self, indexes: Sequence[int], status: ItemStatus, reason: str) -> None:
        self.tally.planned = 0
        self._decide(indexes, status, reason)

    async def _dispatch(self, calls: list[GroupCall], indexes: list[int]) -> None:
        for call, index in zip(calls, indexes, strict=True):
            self.budget.reserve(index, call.worst_case_usd)
        futures = await self.engine.send_group(calls, actor=self.run.actor.name)
        self.batches_sent += 1
        batch = f"sent-{self.batches_sent}"
        self.tally.out_with(batch, len(indexes))
        for call, index in zip(calls, indexes, strict=True):
            self._watch(index, futures[call.key], batch=batch)
        self._report(now=True)

    async def _capacity(self) -> None:
        while self.tally.out >= self.run.max_parallel_batches and not self.time_up:
            await self._next_change()

    async def _affordable(self, calls: list[GroupCall]) -> int:
        """How many calls of a group fit the cost limit, after waiting for the batches out to settle if need be."""
        worst_cases = [call.worst_case_usd for call in calls]
        while not self.budget.fits(worst_cases) and self.tally.out > 0 and not self.time_up:
            await self._next_change()
        return self.budget.fitting(worst_cases)

    def _late_reason(self) -> str:
        return f"time limit of {self.run.time_limit:g}s passed before it was sent"

    async def _next_change(self) -> None:
        self.changed.clear()
        await self.changed.wait()

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
        batch_done = self.tally.settled(batch)
        self.changed.set()
        self._report(now=batch_done)

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
                self._answered(index, self._stored(record))
            else:
                self._set_unfinished(index, error, record.state, batch_record)
        finally:
            self.outstanding -= 1  # only now: the run waits for every item's word before it ends
            self._counted(batch)

    def _set_unfinished(self, index: int, error: ActorError, state: RequestState, batch: BatchRecord | None) -> None:
        """An item whose request is in a batch, not answered yet: waiting (the API has the batch) or pending."""
        api_batch = batch.provider_batch_id if batch is not None else None
        cause = f"{type(error).__name__}: {error}"
        if state is RequestState.WAITING and api_batch is not None:
            status = ItemStatus.WAITING
            reason = f"waits on batch {api_batch}, whose results were not collected ({cause})"
        else:
            status = ItemStatus.PENDING
            reason = f"its batch's create has an unknown outcome, reconciled before anything is resent ({cause})"
        result = ItemResult(
            index, self.run.jobs.id_of(index), self.keys[index], status, error=error, reason=reason, batch_id=api_batch
        )
        self._set(result)
        if self.directory is not None:
            self.directory.add([result])

    def _answered(self, index: int, outcome: Settled) -> None:
        result = self._outcome_result(index, outcome, None)
        if isinstance(result.error, StructuredOutputError):
            self.decisions.add([(index, ItemStatus.FAILED.value, str(result.error))])
        elif index in self.decided and result.status is ItemStatus.SUCCEEDED:
            self.decisions.add([(index, None, None)])
        self.budget.settle(index, result.cost_usd)
        self._set(result)
        if self.directory is not None:
            self.directory.add([result])

    def _outcome_result(self, index: int, outcome: Settled, row: ItemRow | None) -> ItemResult:
        item_id = self.run.jobs.id_of(index)
        key = self.keys[index]
        if isinstance(outcome, TextAnswer) and self.run.response_model is None:
            # Text alone has no citations: the answer is kept as it came, its response built only when read.
            return ItemResult(index, item_id, key, ItemStatus.SUCCEEDED, answer=outcome)
        if not isinstance(outcome, ActorError):
            response = response_of(outcome)
            if self.run.response_model is not None:
                try:
                    response = self.engine.backend.codec.parse(response, self.run.response_model)
                except StructuredOutputError as exc:
                    return ItemResult(index, item_id, key, ItemStatus.FAILED, answer=outcome, error=exc)
            citations, by_field = citations_json(response)
            return ItemResult(
                index, item_id, key, ItemStatus.SUCCEEDED, answer=response, citations=citations,
                field_citations=by_field,
            )  # fmt: skip
        reason = row.reason if row is not None else None
        if isinstance(outcome, BatchRequestCanceled):
            if self.time_up or (row is not None and row.status == ItemStatus.FAILED.value):
                return ItemResult(
                    index, item_id, key, ItemStatus.FAILED, error=outcome, reason=reason or self._cut_reason()
                )
            return ItemResult(index, item_id, key, ItemStatus.CANCELED, error=outcome)
        status = ItemStatus.EXPIRED if isinstance(outcome, BatchRequestExpired) else ItemStatus.FAILED
        return ItemResult(index, item_id, key, status, error=outcome, reason=reason)

    def _cut_reason(self) -> str:
        return f"time limit of {self.run.time_limit:g}s passed: its batch was canceled before it was answered"

    def _decide(self, indexes: Sequence[int], status: ItemStatus, reason: str) -> None:
        """Items the run settles without the API (not sent for the cost limit, or the time limit)."""
        undecided = [i for i in indexes if self.results[i] is None]
        if not undecided:
            return
        self.decisions.add([(i, status.value, reason) for i in undecided])
        self.decided.update(undecided)
        decided = [ItemResult(i, self.run.jobs.id_of(i), self.keys[i], status, reason=reason) for i in undecided]
        for result in decided:
            self._set(result)
        if self.directory is not None:
            self.directory.add(decided)
        self._report()

    async def _wait_for_answers(self) -> None:
        while self.outstanding > 0:
            if self.time_up:
                # The canceled batches' answers have `cancel_grace` to arrive; then the rest is reported failed.
                grace_ends = self.clock.now() + self.run.cancel_grace
                while self.outstanding > 0 and self.clock.now() < grace_ends:
                    await self._cancel_outstanding()
                    await self._change_or_tick(grace_ends)
                # A batch whose create was on its way is canceled too: nothing is left running once the run gives up.
                await self.engine.dispatched()
                await self._cancel_outstanding()
                left = [i for i, r in enumerate(self.results) if r is None]
                self._decide(left, ItemStatus.FAILED, self._cut_reason())
                return
            await self._next_change()

    async def _change_or_tick(self, until: float) -> None:
        """Wait for an answer, or a tick of the clock (never past `until`), whichever comes first."""
        change = asyncio.ensure_future(self._next_change())
        tick = asyncio.ensure_future(self.clock.sleep(min(self._tick(), max(0.0, until - self.clock.now()))))
        await asyncio.wait({change, tick}, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (change, tick):
            waiter.cancel()

    def _tick(self) -> float:
        """How often limits are looked at: as often as batches are polled, and at least every 5 seconds."""
        return max(0.01, min(self.run.actor.configuration.batch.poll_interval, 5.0))

    async def _time_limit(self) -> None:
        assert self.run.time_limit is not None
        deadline = self.started + self.run.time_limit
        while (left := deadline - self.clock.now()) > 0:
            await self.clock.sleep(min(left, self._tick()))
        self.time_up = True
        log.warning("Run %s: time limit of %gs passed; canceling its outstanding batches.", self.run_id,
                    self.run.time_limit)  # fmt: skip
        await self._cancel_outstanding()
        pending = [i for i, r in enumerate(self.results) if r is None]
        self.decided.update(pending)
        await self.decisions.decide([(i, ItemStatus.FAILED.value, self._cut_reason()) for i in pending])
        self.changed.set()

    async def _cancel_outstanding(self) -> None:
        """Cancel the run's batches that are out, once each: those created since the last look too (a create in
        flight when the time limit passed comes back after it)."""
        for batch_id in await self.engine.ledger.run_store.outstanding_batches(self.run_id):
            batch = await self.engine.ledger.batch(batch_id)
            if batch is None or batch.provider_batch_id is None or batch.provider_batch_id in self.canceled:
                continue
            self.canceled.add(batch.provider_batch_id)
            try:
                await self.engine.backend.cancel(batch.provider_batch_id)
            except ActorError as exc:
                log.warning("Run %s: could not cancel batch %s: %s", self.run_id, batch.provider_batch_id, exc)

    # Reporting.

    def _raw(self, batch_id: str, provider_batch_id: str, lines: Sequence[ResultLine | UnreadableLine]) -> None:
        del batch_id
        if self.directory is not None:
            self.directory.add_raw(provider_batch_id, lines)

    def _set(self, result: ItemResult) -> None:
        """Record an item's result, keeping the counts progress reports (a snapshot must not walk every item)."""
        previous = self.results[result.index]
        if previous is None:
            self.done += 1
        else:
            self.counts[previous.status] -= 1
        self.counts[result.status] += 1
        self.results[result.index] = result

    def _snapshot(self) -> RunProgress:
        counts = self.counts
        return RunProgress(
            run_id=self.run_id,
            items_total=len(self.results),
            items_done=self.done,
            succeeded=counts[ItemStatus.SUCCEEDED],
            failed=counts[ItemStatus.FAILED],
            expired=counts[ItemStatus.EXPIRED],
            canceled=counts[ItemStatus.CANCELED],
            not_run=counts[ItemStatus.NOT_RUN],
            batches_total=self.tally.total,
            batches_done=self.tally.done,
            batches_in_flight=self.tally.out,
            cost_usd=self.budget.spent,
            cost_limit_usd=self.run.max_cost_usd,
            elapsed_seconds=self.clock.now() - self.started,
        )

    def _report(self, *, now: bool = False) -> None:
        """Tell the reporters, at most every `_REPORT_EVERY` real seconds unless `now` (a batch sent or done)."""
        moment = time.monotonic()
        if not now and moment - self.reported_at < _REPORT_EVERY:
            return
        self.reported_at = moment
        self.progress.update(self._snapshot())

    def _result(self) -> RunResult:
        items = [
            r if r is not None else ItemResult(i, self.run.jobs.id_of(i), self.keys[i], ItemStatus.PENDING)
            for i, r in enumerate(self.results)
        ]
        return RunResult(self.run_id, items, elapsed_seconds=self.clock.now() - self.started, batches=self.tally.total)

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task
