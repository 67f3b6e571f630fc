"""Where one go at a bulk run stands, batch or live: each item's status as it is decided (and its result, held or
not), the counts and the money its progress shows, the results directory written as items settle, and the end (the
run's report, its `RunResult` when held, its files, the last progress line).

A run that holds its results (`hold`: what `BulkRun.run` gives back, every `ItemResult` in input order) keeps each
one. One that does not (`BulkRun.run_to_files`, `lowtide run`) keeps a byte per item and the results that did not
succeed; the line of each item that succeeds in this go goes to a spool on disk (`LineSpool`), and at the end its
files are written in input order a chunk of items at a time: from the spool, else from the ledger (an item answered
in an earlier go, its result made again from its stored answer by `rebuild`), so that memory does not grow with the
run and no answer is decoded twice.

Both executions hold one (`RunState`) and add only what differs: the batch one its groups, batches out and waiting
items, the live one its workers, interrupts and post-processing. They tell it what they have out (`Underway`).
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import AsyncIterator, Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Protocol, TextIO

from lowtide.bulk.outputs.atomic import AtomicFile
from lowtide.bulk.outputs.citations import citations_json
from lowtide.bulk.outputs.results import (
    ItemResult,
    ItemStatus,
    ReportTally,
    ResultsDirectory,
    RunResult,
    item_line,
    tallied,
)
from lowtide.bulk.outputs.spool import LineSpool, spool_path
from lowtide.bulk.progress.reporters import ProgressReporter, reporter_for
from lowtide.bulk.running.budget import RunBudget
from lowtide.bulk.running.definition import Prepared, RunOutputs
from lowtide.core.clock import Clock
from lowtide.core.run_reports import RunProgress, RunReport
from lowtide.errors import ActorError
from lowtide.ledger.run_ledger import AsyncRunLedger
from lowtide.ledger.runs import ItemOutcome, ItemRow
from lowtide.ledger.store import BatchRecord, RequestRecord, RequestState
from lowtide.messages.answers import Answer
from lowtide.types import ActorResponse

__all__ = ["RunEnd", "RunState", "Underway"]

_REPORT_EVERY = 0.2
"""Progress reaches the reporters at most this often (seconds of the state's `moment`), unless told `now`."""
_RECORDS_AT_ONCE = 1000
"""Final requests read back this many at a time: each record holds its whole answer."""
_OUTCOMES_AT_ONCE = 1000
"""Items written at the end (a run not holding its results) this many at a time, read from the ledger together."""
_STATUSES = tuple(ItemStatus)
_CODE = {status: at + 1 for at, status in enumerate(_STATUSES)}
"""Each status's byte in `RunState._status` (0: no result yet)."""
_SUCCEEDED = _CODE[ItemStatus.SUCCEEDED]
_UNFINISHED = frozenset((0, _CODE[ItemStatus.WAITING], _CODE[ItemStatus.PENDING], _CODE[ItemStatus.NOT_RUN]))
"""The statuses the same run started again would go on from (a retry sends the failed and expired again, from a
spool of its own)."""


@dataclass(frozen=True, slots=True)
class Underway:
    """What an execution has out, as its progress shows it: batches (a batch run), or calls (a live run)."""

    batches_total: int = 0
    batches_done: int = 0
    batches_in_flight: int = 0
    calls_in_flight: int | None = None
    paced_eta_seconds: float | None = None
    """A batch run's ETA from its batches' pace (None: no batch has ended yet); a live run's comes from its items."""


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a go at a run ended: its report, and every item's result when the run held them."""

    report: RunReport
    result: RunResult | None


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
        hold: bool = True,
        runs: AsyncRunLedger | None = None,
        rebuild: Callable[[ItemOutcome], ItemResult] | None = None,
    ) -> None:
        assert hold or (runs is not None and rebuild is not None), "a run not holding its results reads them back"
        self.run = run
        self.run_id = prepared.run_id
        self.keys = prepared.keys
        self.clock: Clock = run.actor.clock
        self._status = bytearray(len(run.jobs))
        """Each item's status (`_CODE`), 0 while it has no result."""
        held: list[ItemResult | None] = [None] * len(run.jobs) if hold else []
        self.results: list[ItemResult | None] | None = held if hold else None
        """Every item's result, when the run holds them."""
        self._kept: dict[int, ItemResult] = {}
        """The results that did not succeed, when the run does not hold them (what its summary says why of)."""
        self._runs = runs
        self._rebuild = rebuild
        self.directory = ResultsDirectory(run.results_dir) if run.results_dir is not None else None
        self._spooled = ReportTally()
        """What the spooled lines' items add to the run's report, added as each is spooled."""
        self._spool = self._open_spool(run, len(run.jobs)) if not hold else None
        """The lines of the items that succeeded (in this go, and in earlier ones when the spool is kept), when the run
        does not hold its results."""
        self._spool_stale = False
        """Set if a spooled success was ever replaced (never expected): the end then makes every line again."""
        self.counts = dict.fromkeys(ItemStatus, 0)
        self.done = 0
        self.done_before = 0
        """Items done when this go began (the ETA counts the pace of this go alone); set by a live run."""
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

    def _open_spool(self, run: RunOutputs, count: int) -> LineSpool:
        """The run's spool: kept across goes beside its results (its results directory, else its `out` file), so
        that a run started again copies the lines of the items answered before; a temporary one when it writes
        neither (a stream alone)."""
        if run.results_dir is not None:
            path = spool_path(Path(run.results_dir), "results", self.run_id)
        elif run.out is not None:
            path = spool_path(Path(run.out).parent, Path(run.out).name, self.run_id)
        else:
            return LineSpool(count)
        keys = self.keys
        return LineSpool.kept(count, path, self.run_id, key_of=keys.__getitem__, found=self._spooled.count_success)

    def keep_spooled(self, succeeded: Callable[[int], bool]) -> None:
        """Keep the lines an earlier go spooled of the items that `succeeded` says the ledger has answered (an answer
        is final: any other is the spool's mistake, never expected); forget the others, made from the ledger."""
        spool = self._spool
        if spool is None:
            return
        for index in spool.earlier:
            if not succeeded(index):
                tally = spool.drop(index)
                if tally is not None:
                    self._spooled.count_success(tally, -1)
        spool.forget_earlier()

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
            batch_id=batch_id, file=self.run.jobs.file_of(index),
        )  # fmt: skip

    def succeeded(self, index: int, response: ActorResponse[object]) -> ItemResult:
        """Item `index` answered by `response`, with its citations."""
        citations, by_field = citations_json(response)
        return ItemResult(
            index, self.run.jobs.id_of(index), self.keys[index], ItemStatus.SUCCEEDED, answer=response,
            citations=citations, field_citations=by_field, file=self.run.jobs.file_of(index),
        )  # fmt: skip

    def set(self, result: ItemResult) -> None:
        """Record an item's result, keeping the counts progress reports (a snapshot must not walk every item)."""
        index = result.index
        self._count(index, result.status)
        if self.results is not None:
            self.results[index] = result
            return
        spool = self._spool
        assert spool is not None
        if spool.holds(index):  # a success replaced: its part of the report cannot be taken back
            spool.drop(index)
            self._spool_stale = True
        if result.status is ItemStatus.SUCCEEDED:
            self._kept.pop(index, None)
            spool.put(index, item_line(result), result.key, tallied(result))
            self._spooled.add(result)
        else:
            self._kept[index] = result

    def stored_success(self, index: int) -> None:
        """Item `index` succeeded earlier, its answer in the ledger: counted now, read back only at the end."""
        assert self.results is None, "a run holding its results reads them back"
        self._count(index, ItemStatus.SUCCEEDED)
        self._kept.pop(index, None)

    def _count(self, index: int, status: ItemStatus) -> None:
        previous = self._status[index]
        if previous == 0:
            self.done += 1
        else:
            self.counts[_STATUSES[previous - 1]] -= 1
        self.counts[status] += 1
        self._status[index] = _CODE[status]

    def has(self, index: int) -> bool:
        """Whether item `index` has a result."""
        return self._status[index] != 0

    def unfinished(self, index: int, error: ActorError, state: RequestState, batch: BatchRecord | None) -> None:
        """An item whose request is in a batch, not answered yet: waiting (the API has the batch) or pending."""
        api_batch = batch.provider_batch_id if batch is not None else None
        cause = f"{type(error).__name__}: {error}"
        if state is RequestState.WAITING and api_batch is not None:
            status = ItemStatus.WAITING
            reason = f"waits on batch {api_batch}, whose results were not collected ({cause})"
        else:
            status = ItemStatus.PENDING
            reason = f"its batch's create has an unknown outcome, reconciled before anything is resent ({cause})"
        self.settle([self.item(index, status, error=error, reason=reason, batch_id=api_batch)])

    def settle(self, results: Sequence[ItemResult]) -> None:
        """Record results and append their lines to the results directory."""
        for result in results:
            self.set(result)
        if self.directory is not None:
            self.directory.add(results)

    def undecided(self) -> list[int]:
        """The items with no result yet."""
        return [index for index, code in enumerate(self._status) if code == 0]

    def keep_unsent(self, rows: Sequence[ItemRow], sending: set[int]) -> None:
        """The items never sent that this go does not send either (a retry sends only what failed): they stay as the
        run left them (not run, unless it decided otherwise)."""
        for row in rows:
            if row.request_state is None and row.index not in sending:
                status = ItemStatus(row.status) if row.status is not None else ItemStatus.NOT_RUN
                jobs = self.run.jobs
                file = jobs.file_of(row.index)
                self.set(ItemResult(row.index, jobs.id_of(row.index), row.key, status, reason=row.reason, file=file))

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

    async def begin(self, leaving_out: Container[int] = ()) -> None:
        """The go begins: the results directory starts from the results found (but those `leaving_out`, which this
        go decides again), and the first progress is told."""
        directory = self.directory
        if directory is not None:
            if self.results is not None:
                directory.start([r for r in self.results if r is not None and r.index not in leaving_out])
            else:
                with directory.rewrite() as out:
                    async for chunk in self._every_line(settled_only=True):
                        out.write("".join(line for index, line, _ in chunk if index not in leaving_out))
                directory.append_from_now()
        self.report(now=True)

    def snapshot(self) -> RunProgress:
        counts, underway = self.counts, self._underway()
        return RunProgress(
            run_id=self.run_id,
            items_total=len(self._status),
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
            paced_eta_seconds=underway.paced_eta_seconds,
            paced=underway.calls_in_flight is None,
            cost_usd=self.budget.spent,
            cost_limit_usd=self.run.max_cost_usd,
            elapsed_seconds=self.clock.now() - self.started,
        )

    def report(self, *, now: bool = False) -> None:
        """Tell the reporters, at most every `_REPORT_EVERY` seconds unless `now` (a batch sent or done). The spool's
        lines are written out then too: a kill loses at most those of the moment since (made from the ledger)."""
        moment = self._moment()
        if not now and moment - self._reported_at < _REPORT_EVERY:
            return
        self._reported_at = moment
        if self._spool is not None:
            self._spool.flush()
        snapshot = self.snapshot()
        self.progress.update(snapshot)
        if self._on_report is not None:
            self._on_report(snapshot)

    # The end.

    async def conclude(
        self,
        *,
        batches: int | None = None,
        notes: Sequence[str] = (),
        mode: str = "batch",
        interrupted: str | None = None,
        stream: TextIO | None = None,
        cache_saving: Callable[[Mapping[str, int]], Decimal | None] | None = None,
    ) -> RunEnd:
        """The end: every item's line written, in input order, to `results.jsonl`, the `out` file (each replaced whole,
        atomically) and `stream`; the run's report folded from the same items; the last progress line."""
        spooled = self._spool is not None and not self._spool_stale
        tally = self._spooled if spooled else ReportTally()  # (the spooled lines' items are in it already)
        files: list[AtomicFile] = []
        try:
            if self.run.out is not None:
                files.append(AtomicFile(self.run.out))
            if self.directory is not None:
                files.append(self.directory.rewrite())
            async for chunk in self._every_line():
                if files or stream is not None:
                    text = "".join(line for _, line, _ in chunk)
                    for out in files:
                        out.write(text)
                    if stream is not None:
                        stream.write(text)
                for _, _, item in chunk:
                    if item is not None:
                        tally.add(item)
            for out in files:
                out.commit()
        finally:
            for out in files:
                out.discard()  # (nothing, once committed)
            if self._spool is not None:  # kept while the run has more to do: the next go copies its lines
                self._spool.close(keep=not self._spool_stale and not self._complete())
        elapsed = self.clock.now() - self.started
        report = tally.report(
            self.run_id, batches=batches, mode=mode, interrupted=interrupted, elapsed_seconds=elapsed, notes=notes
        )
        if cache_saving is not None:
            report.cache_saved_usd = cache_saving(report.usage)
        result = None
        if self.results is not None:
            items = [r if r is not None else self.item(i, ItemStatus.PENDING) for i, r in enumerate(self.results)]
            result = RunResult(
                self.run_id, items, elapsed_seconds=elapsed, notes=list(notes), batches=batches, mode=mode,
                interrupted=interrupted, cache_saved_usd=report.cache_saved_usd,
            )  # fmt: skip
        self.progress.close(self.snapshot())
        return RunEnd(report, result)

    def _complete(self) -> bool:
        """Whether every item has a result that the same run started again would not change (none waiting, pending,
        not run or missing): its spool is then removed."""
        return not any(code in _UNFINISHED for code in self._status)

    async def _every_line(
        self, *, settled_only: bool = False
    ) -> AsyncIterator[list[tuple[int, str, ItemResult | None]]]:
        """Every item's line in input order, a chunk at a time, with its result (None: a spooled line, whose item the
        report has already); an item with no result is pending (`settled_only`: left out). Held results are handed as
        they are; otherwise those that did not succeed are, a success of this go is its spooled line, and a success
        of an earlier go is made again from the answer the ledger stored, read a chunk of items at a time."""
        status, count = self._status, len(self._status)
        spool = self._spool if not self._spool_stale else None
        for start in range(0, count, _OUTCOMES_AT_ONCE):
            stop = min(count, start + _OUTCOMES_AT_ONCE)
            stored: dict[int, ItemOutcome] = {}
            missing = (
                [i for i in range(start, stop) if status[i] == _SUCCEEDED and (spool is None or not spool.holds(i))]
                if self.results is None
                else []
            )
            if missing:  # (read alone when the spool has the others: the lines of a moment before a kill, say)
                assert self._runs is not None
                only = missing if spool is not None else None
                outcomes = await self._runs.outcomes(self.run_id, start=start, stop=stop, only=only)
                stored = {o.index: o for o in outcomes}
            chunk: list[tuple[int, str, ItemResult | None]] = []
            lines = spool.lines(start, stop) if spool is not None else None
            for index in range(start, stop):
                if settled_only and status[index] == 0:
                    continue
                line = lines[index - start] if lines is not None else None
                if line is not None:
                    chunk.append((index, line, None))
                else:
                    item = self._result_of(index, stored)
                    chunk.append((index, item_line(item), item))
            yield chunk

    def _result_of(self, index: int, stored: dict[int, ItemOutcome]) -> ItemResult:
        """Item `index`'s result when its line is not spooled: held, kept, made again from the ledger, or pending."""
        if self.results is not None:
            held = self.results[index]
            return held if held is not None else self.item(index, ItemStatus.PENDING)
        kept = self._kept.get(index)
        if kept is not None:
            return kept
        outcome = stored.get(index)
        if self._status[index] == _SUCCEEDED and outcome is not None:
            assert self._rebuild is not None
            return self._rebuild(outcome)
        return self.item(index, ItemStatus.PENDING)
