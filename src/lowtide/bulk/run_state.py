"""Where one go at a bulk run stands, batch or live: each item's result as it is decided, the counts and the money its
progress shows, the results directory written as items settle, and the end (the `RunResult`, its files, the last
progress line).

Both executions hold one (`RunState`) and add only what differs: the batch one its groups, batches out and waiting
items, the live one its workers, interrupts and post-processing. They tell it what they have out (`Underway`).
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import AsyncIterator, Callable, Container, Sequence
from dataclasses import dataclass
from typing import Protocol

from lowtide.answers import Answer
from lowtide.bulk.budget import RunBudget
from lowtide.bulk.citations import citations_json
from lowtide.bulk.definition import Prepared, RunOutputs
from lowtide.bulk.progress import ProgressReporter, RunProgress, reporter_for
from lowtide.bulk.results import ItemResult, ItemStatus, ResultsDirectory, RunResult, write_lines
from lowtide.clock import Clock
from lowtide.errors import ActorError
from lowtide.ledger.runs import ItemRow
from lowtide.ledger.store import RequestRecord
from lowtide.types import ActorResponse

__all__ = ["RunState", "Underway"]

_REPORT_EVERY = 0.2
"""Progress reaches the reporters at most this often (seconds of the state's `moment`), unless told `now`."""
_RECORDS_AT_ONCE = 1000
"""Final requests read back this many at a time: each record holds its whole answer."""


@dataclass(frozen=True, slots=True)
class Underway:
    """What an execution has out, as its progress shows it: batches (a batch run), or calls (a live run)."""

    batches_total: int = 0
    batches_done: int = 0
    batches_in_flight: int = 0
    calls_in_flight: int | None = None


class _Records(Protocol):
    """What reading final requests back needs of a ledger (`AsyncLedgerStore` is one)."""

    async def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]: ...


class RunState:
    """One go at a run's items and reports. `underway` says what the execution has out; `moment` is the time that
    spaces progress reports (each execution says which); `on_report` hears every snapshot the reporters are given."""

    def __init__(
        self,
        run: RunOutputs,
        prepared: Prepared,
        *,
        underway: Callable[[], Underway],
        moment: Callable[[], float],
        on_report: Callable[[RunProgress], None] | None = None,
    ) -> None:
        self.run = run
        self.run_id = prepared.run_id
        self.keys = prepared.keys
        self.clock: Clock = run.actor.clock
        self.results: list[ItemResult | None] = [None] * len(run.jobs)
        self.counts = dict.fromkeys(ItemStatus, 0)
        self.done = 0
        self.done_before = 0
        """Items done when this go began (the ETA counts the pace of this go alone); set by a live run."""
        self.directory = ResultsDirectory(run.results_dir) if run.results_dir is not None else None
        self.budget = RunBudget(run.max_cost_usd, prepared.spent)
        self.changed = asyncio.Event()
        self.started = self.clock.now()
        self.progress: ProgressReporter = reporter_for(
            run.progress,
            run.progress_stream or sys.stderr,
            interval=run.progress_interval,
            clock=self.clock,
            on_progress=run.on_progress,
        )
        self._underway = underway
        self._moment = moment
        self._on_report = on_report
        self._reported_at = -math.inf

    # Items.

    def item(
        self,
        index: int,
        status: ItemStatus,
        *,
        answer: Answer | None = None,
        error: ActorError | None = None,
        reason: str | None = None,
        batch_id: str | None = None,
    ) -> ItemResult:
        """Item `index`'s result (its id and key filled in)."""
        return ItemResult(
            index, self.run.jobs.id_of(index), self.keys[index], status, answer=answer, error=error, reason=reason,
            batch_id=batch_id,
        )  # fmt: skip

    def succeeded(self, index: int, response: ActorResponse[object]) -> ItemResult:
        """Item `index` answered by `response`, with its citations."""
        citations, by_field = citations_json(response)
        return ItemResult(
            index, self.run.jobs.id_of(index), self.keys[index], ItemStatus.SUCCEEDED, answer=response,
            citations=citations, field_citations=by_field,
        )  # fmt: skip

    def set(self, result: ItemResult) -> None:
        """Record an item's result, keeping the counts progress reports (a snapshot must not walk every item)."""
        previous = self.results[result.index]
        if previous is None:
            self.done += 1
        else:
            self.counts[previous.status] -= 1
        self.counts[result.status] += 1
        self.results[result.index] = result

    def settle(self, results: Sequence[ItemResult]) -> None:
        """Record results and append their lines to the results directory."""
        for result in results:
            self.set(result)
        if self.directory is not None:
            self.directory.add(results)

    def undecided(self) -> list[int]:
        """The items with no result yet."""
        return [index for index, result in enumerate(self.results) if result is None]

    def keep_unsent(self, rows: Sequence[ItemRow], sending: set[int]) -> None:
        """The items never sent that this go does not send either (a retry sends only what failed): they stay as the
        run left them (not run, unless it decided otherwise)."""
        for row in rows:
            if row.request_state is None and row.index not in sending:
                status = ItemStatus(row.status) if row.status is not None else ItemStatus.NOT_RUN
                self.set(ItemResult(row.index, self.run.jobs.id_of(row.index), row.key, status, reason=row.reason))

    async def records(self, ledger: _Records, indexes: Sequence[int]) -> AsyncIterator[tuple[int, RequestRecord]]:
        """The final requests of `indexes`, read back a thousand at a time."""
        for start in range(0, len(indexes), _RECORDS_AT_ONCE):
            chunk = indexes[start : start + _RECORDS_AT_ONCE]
            records = {r.key: r for r in await ledger.requests_for([self.keys[i] for i in chunk])}
            for index in chunk:
                yield index, records[self.keys[index]]

    # Waiting.

    def change(self) -> None:
        """Wake whatever waits for the run to change (an answer in, a limit reached)."""
        self.changed.set()

    async def next_change(self) -> None:
        self.changed.clear()
        await self.changed.wait()

    # Reporting.

    def begin(self, leaving_out: Container[int] = ()) -> None:
        """The go begins: the results directory starts from the results found (but those `leaving_out`, which this
        go decides again), and the first progress is told."""
        if self.directory is not None:
            self.directory.start([r for r in self.results if r is not None and r.index not in leaving_out])
        self.report(now=True)

    def snapshot(self) -> RunProgress:
        counts, underway = self.counts, self._underway()
        return RunProgress(
            run_id=self.run_id,
            items_total=len(self.results),
            items_done=self.done,
            succeeded=counts[ItemStatus.SUCCEEDED],
            failed=counts[ItemStatus.FAILED],
            expired=counts[ItemStatus.EXPIRED],
            canceled=counts[ItemStatus.CANCELED],
            not_run=counts[ItemStatus.NOT_RUN],
            batches_total=underway.batches_total,
            batches_done=underway.batches_done,
            batches_in_flight=underway.batches_in_flight,
            calls_in_flight=underway.calls_in_flight,
            done_before=self.done_before,
            cost_usd=self.budget.spent,
            cost_limit_usd=self.run.max_cost_usd,
            elapsed_seconds=self.clock.now() - self.started,
        )

    def report(self, *, now: bool = False) -> None:
        """Tell the reporters, at most every `_REPORT_EVERY` seconds unless `now` (a batch sent or done)."""
        moment = self._moment()
        if not now and moment - self._reported_at < _REPORT_EVERY:
            return
        self._reported_at = moment
        snapshot = self.snapshot()
        self.progress.update(snapshot)
        if self._on_report is not None:
            self._on_report(snapshot)

    # The end.

    def result(self, *, batches: int | None = None, notes: Sequence[str] = (), mode: str = "batch") -> RunResult:
        """Every item's result in input order (an item with none is pending)."""
        items = [r if r is not None else self.item(i, ItemStatus.PENDING) for i, r in enumerate(self.results)]
        elapsed = self.clock.now() - self.started
        return RunResult(self.run_id, items, elapsed_seconds=elapsed, notes=list(notes), batches=batches, mode=mode)

    def finish(self, result: RunResult) -> None:
        """The results files written whole, in input order, and the last progress line."""
        if self.directory is not None:
            self.directory.finish(result.items)
        if self.run.out is not None:
            write_lines(self.run.out, (item.as_json() for item in result.items))
        self.progress.close(self.snapshot())
