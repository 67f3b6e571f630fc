"""One go at a bulk run in live mode: every item answered by a live call through the actor's `LiveCaller` (its
scope's quota, retries, middleware and observers), durably.

An answer (or an item's final error) is written to the ledger before the run hands it on, to the results, the
progress, or the post-processor, so a run killed and started again calls the API only for items with no stored
answer. Items never started when the run stops (its time limit, an abort, its cost limit, Ctrl-C or SIGTERM:
`interrupts.py`) are recorded `not-run` with the reason, and `retry` sends them; calls canceled in flight are
`failed` with the reason, and `retry` sends them too. A post-processor's failure fails its item but keeps the
stored answer: a retry runs the post-processor again on it, with no second call.
"""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from pydantic import BaseModel

from lowtide.arguments import check_seconds
from lowtide.batching.records import error_from_json, error_to_json, response_from_json
from lowtide.bulk.budget import RunBudget
from lowtide.bulk.citations import citations_json
from lowtide.bulk.execution import Prepared, RunActor
from lowtide.bulk.interrupts import on_interrupt
from lowtide.bulk.jobs import Job, Jobs
from lowtide.bulk.progress import ProgressCallback, ProgressReporter, ReporterMode, RunProgress, reporter_for
from lowtide.bulk.results import ItemResult, ItemStatus, ResultsDirectory, RunResult, write_lines
from lowtide.errors import ActorError, APIUnreachableError, ConfigurationError, StructuredOutputError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.interface import AsyncRunLedger
from lowtide.ledger.runs import LiveAnswer
from lowtide.ledger.store import RequestState
from lowtide.live.caller import LiveCaller
from lowtide.live.events import ItemFinished, RunProgressed
from lowtide.live.retries import ERROR_CLASSES, error_class
from lowtide.live.timing import finishing, within
from lowtide.spelling import argument
from lowtide.structured import parse_response
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["AbortMode", "LiveExecution", "LiveOptions", "LiveRunDefinition", "PostProcess", "check_live_options"]

log = logging.getLogger(__name__)

PostProcess = Callable[[ItemResult], Awaitable[object]]
"""Called with each successful item's result (its answer already stored); what it returns is not kept."""
AbortMode = Literal["drain", "cancel"]
_REPORT_EVERY = 0.2
_UNFINISHED = "post-processing did not finish (the run stopped first); `retry` runs it again on the stored answer"


@dataclass(frozen=True)
class LiveOptions:
    abort_on: frozenset[str]
    abort_mode: AbortMode


def check_live_options(
    mode: str,
    abort_on: Iterable[str] | str,
    abort_mode: str,
    post_process: PostProcess | None,
    post_process_timeout: float | None,
) -> LiveOptions | None:
    """A bulk run's mode and live options, checked: None for a batch run (which takes none of them)."""
    if mode not in ("batch", "live"):
        raise ConfigurationError(f"{argument('mode')} must be 'batch' or 'live', not {mode!r}.", field="mode")
    if isinstance(abort_on, str):
        abort_on = [part.strip() for part in abort_on.split(",") if part.strip()]
    aborting = frozenset(abort_on)
    if unknown := sorted(aborting - set(ERROR_CLASSES)):
        raise ConfigurationError(
            f"{argument('abort_on')}: unknown error class(es) {', '.join(unknown)}; choose from"
            f" {', '.join(ERROR_CLASSES)}.",
            field="abort_on",
        )
    if abort_mode not in ("drain", "cancel"):
        raise ConfigurationError(
            f"{argument('abort_mode')} must be 'drain' or 'cancel', not {abort_mode!r}.", field="abort_mode"
        )
    if post_process_timeout is not None:
        check_seconds("post_process_timeout", post_process_timeout)
    if mode == "batch":
        if aborting or post_process is not None or post_process_timeout is not None:
            raise ConfigurationError(
                f"{argument('abort_on')} and {argument('post_process')} are for live runs"
                f" ({argument('mode', 'live')}).",
                field="mode",
            )
        return None
    return LiveOptions(aborting, "cancel" if abort_mode == "cancel" else "drain")


class LiveRunDefinition(Protocol):
    """What a live execution needs of its run (`BulkRun` is one)."""

    actor: RunActor
    jobs: Jobs
    response_model: type[BaseModel] | None
    max_cost_usd: Decimal | None
    time_limit: float | None
    results_dir: Path | None
    out: Path | None
    on_progress: ProgressCallback | None
    progress: ReporterMode
    progress_stream: TextIO | None
    progress_interval: float
    abort_on: frozenset[str]
    abort_mode: AbortMode
    post_process: PostProcess | None
    post_process_timeout: float | None

    def live_request(self, index: int, key: str) -> ActorRequest: ...

    def live_worst_case(self, request: ActorRequest) -> Decimal | None: ...


@dataclass
class _Stop:
    not_started: str
    """The reason recorded for items not started."""
    in_flight: str | None
    """The reason recorded for calls canceled in flight; None: they are drained (answered and kept)."""


class LiveExecution:
    """One go at a live run: stored answers taken as they are, the rest called, at most `max_concurrency` at once."""

    def __init__(self, run: LiveRunDefinition, prepared: Prepared, *, only: set[int] | None = None) -> None:
        self.run = run
        self.prepared = prepared
        self.store = prepared.store
        self._runs: AsyncRunLedger | None = None
        self.run_id = prepared.run_id
        self.keys = prepared.keys
        self.only = only
        actor = run.actor
        self.clock = actor.clock
        self.results: list[ItemResult | None] = [None] * len(run.jobs)
        self.counts = dict.fromkeys(ItemStatus, 0)
        self.done = 0
        self.reported_at = -math.inf
        self.directory = ResultsDirectory(run.results_dir) if run.results_dir is not None else None
        self.budget = RunBudget(run.max_cost_usd, prepared.spent)
        self.in_flight: dict[int, asyncio.Future[ActorResponse[Any]]] = {}
        self.stop: _Stop | None = None
        self.done_before = 0
        self.restored: dict[int, ItemResult] = {}
        """Items answered earlier whose post-processing is to run again (no call)."""
        self.changed = asyncio.Event()
        self.caller: LiveCaller | None = None
        self.started = self.clock.now()
        self.progress: ProgressReporter = reporter_for(
            run.progress,
            run.progress_stream or sys.stderr,
            interval=run.progress_interval,
            clock=self.clock,
            on_progress=run.on_progress,
        )

    @property
    def runs(self) -> AsyncRunLedger:
        """The run's rows as the event loop writes them (its answers and decisions, awaited)."""
        if self._runs is None:
            self._runs = async_ledger(self.run.actor.ledger).run_store
        return self._runs

    async def go(self) -> RunResult:
        caller = self.caller = self.run.actor.live_caller()
        await self._load_finished()
        self.done_before = self.done - len(self.restored)
        if self.directory is not None:
            self.directory.start([r for r in self.results if r is not None and r.index not in self.restored])
        timer = asyncio.ensure_future(self._time_limit()) if self.run.time_limit is not None else None
        self._report(now=True)
        work = iter([*self.restored, *self.prepared.to_send])
        workers = max(1, min(self.run.actor.configuration.live.max_concurrency, len(self.prepared.to_send) or 1))
        try:
            with on_interrupt(self._interrupted, self._interrupted_again) as interrupted:
                await asyncio.gather(*(self._worker(work, caller.call) for _ in range(workers)))
        finally:
            if timer is not None:
                timer.cancel()
            for task in self.in_flight.values():
                task.cancel()
        result = self._result()
        result.interrupted = interrupted()
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
        for row in self.prepared.rows:
            if row.request_state is None and row.index not in sending:
                status = ItemStatus(row.status) if row.status is not None else ItemStatus.NOT_RUN
                self._set(ItemResult(row.index, self.run.jobs.id_of(row.index), row.key, status, reason=row.reason))
        finished = self.prepared.finished
        ledger = async_ledger(self.run.actor.ledger)  # (the run's own store, the same ledger's)
        for start in range(0, len(finished), 1000):
            chunk = finished[start : start + 1000]
            records = {r.key: r for r in await ledger.requests_for([self.keys[i] for i in chunk])}
            for index in chunk:
                record, row = records[self.keys[index]], rows[index]
                if record.state is RequestState.SUCCEEDED and record.response is not None:
                    result = self._success(index, response_from_json(record.response))
                    if result.ok and row.status == ItemStatus.FAILED.value and self._again(index):
                        self.restored[index] = result  # its post-processing failed or never finished: again
                        result = _failed(result, row.reason)
                    elif result.ok and row.status is not None:
                        result = _failed(result, row.reason)
                else:
                    error = error_from_json(record.error) if record.error is not None else ActorError("no answer")
                    result = self._failure(index, error, row.reason)
                self._set(result)

    def _again(self, index: int) -> bool:
        return self.run.post_process is not None and (self.only is None or index in self.only)

    # Calling.

    async def _worker(self, work: Iterator[int], call: Callable[[ActorRequest], Awaitable[ActorResponse[Any]]]) -> None:
        for index in work:  # shared by every worker: each takes the next item
            if self.stop is not None:
                await self._not_started(index)
                continue
            restored = self.restored.get(index)
            if restored is not None:
                await self._post_process(restored)
                continue
            request = self.run.live_request(index, self.keys[index])
            worst = self.run.live_worst_case(request)
            while not self.budget.fits([worst]) and self.in_flight and self.stop is None:
                await self._next_change()
            if self.stop is not None:
                await self._not_started(index)
                continue
            if not self.budget.fits([worst]):
                self.stop = _Stop(self.budget.refusal(worst), None)
                await self._not_started(index)
                continue
            self.budget.reserve(index, worst)
            task = self.in_flight[index] = asyncio.ensure_future(call(request))
            self._report()
            await asyncio.wait({task})
            del self.in_flight[index]
            if task.cancelled():
                self.budget.release(index)
                reason = self.stop.in_flight if self.stop is not None else None
                await self._decide(index, ItemStatus.FAILED, reason or "its call was canceled in flight")
            else:
                failure = task.exception()
                await self._answered(index, request, task.result() if failure is None else failure)
            self.changed.set()

    async def _answered(self, index: int, request: ActorRequest, outcome: ActorResponse[Any] | BaseException) -> None:
        """Store the outcome first; then hand it on (results, progress, post-processor)."""
        job = self.run.jobs[index]
        params = request.model_dump(mode="json", exclude={"response_model", "custom_id"}, exclude_none=True)

        async def store(state: RequestState, **fields: Any) -> None:
            answer = LiveAnswer(index, self.keys[index], self.run.actor.name, request.model, params, state, **fields)
            # Stored even if the run is canceled meanwhile: an answer paid for is never paid for again.
            await finishing(self.runs.record_live(self.run_id, [answer], now=self.clock.now()))

        response = outcome.response if isinstance(outcome, StructuredOutputError) else outcome
        if isinstance(response, ActorResponse):
            answer = response.model_dump(mode="json", exclude={"parsed"})
            cost = response.cost.total_usd if response.cost is not None else None
            result = self._success(index, response_from_json(answer))
            status, reason = (None, None) if result.ok else (ItemStatus.FAILED.value, result.reason)
            if result.ok and self.run.post_process is not None:
                status, reason = ItemStatus.FAILED.value, _UNFINISHED  # until the post-processor says otherwise
            await store(
                RequestState.SUCCEEDED, response=answer, error=None, cost_usd=cost, status=status, reason=reason
            )
            self.budget.settle(index, cost)
            if result.ok and self.run.post_process is not None:
                self._set(_failed(result, _UNFINISHED))
                await self._post_process(result)
            else:
                self._settled(result)
            return
        error = outcome if isinstance(outcome, ActorError) else ActorError(f"{type(outcome).__name__}: {outcome}")
        await store(RequestState.FAILED, response=None, error=error_to_json(error), cost_usd=None)
        self.budget.settle(index, None)
        self._settled(self._failure(index, error, None))
        kind = error_class(error)
        if kind in self.run.abort_on:
            why = f"the run aborted on an error of class {kind} (item {index}{_named(job)}: {error})"
            self._stop(why, cancel=self.run.abort_mode == "cancel")
        elif isinstance(error, APIUnreachableError):  # every call would fail the same way: start no more
            self._stop(f"the API could not be reached ({error})", cancel=False)

    async def _post_process(self, result: ItemResult) -> None:
        process = self.run.post_process
        assert process is not None
        seconds = self.run.post_process_timeout

        def late() -> Exception:
            return TimeoutError(f"post-processor did not finish within {seconds:g}s")

        try:
            await within(self.clock, seconds, process(result), late)
        except Exception as exc:
            reason = f"post-processor failed: {type(exc).__name__}: {exc}"
            if isinstance(exc, TimeoutError):
                reason = str(exc)
            reason += " (the answer is stored: `retry` runs the post-processor again, with no second call)"
            await self.runs.decide(self.run_id, [(result.index, ItemStatus.FAILED.value, reason)], now=self.clock.now())
            self._settled(_failed(result, reason))
            return
        await self.runs.decide(self.run_id, [(result.index, None, None)], now=self.clock.now())
        self._settled(result)

    # Stopping.

    def _stop(self, why: str, *, cancel: bool) -> None:
        if self.stop is not None:
            return
        self.stop = _Stop(f"not attempted: {why}", f"canceled in flight: {why}" if cancel else None)
        log.warning("Run %s: %s; %s.", self.run_id, why, "canceling the calls in flight" if cancel else "draining")
        if cancel:
            for task in self.in_flight.values():
                task.cancel()
        self.changed.set()

    def _interrupted(self, signum: int) -> None:
        name = signal.Signals(signum).name
        self._stop(f"interrupted by {name}", cancel=False)
        log.warning(
            "Run %s: finishing the %d call(s) in flight and storing their answers; %s again cancels them instead.",
            self.run_id,
            len(self.in_flight),
            name,
        )

    def _interrupted_again(self, signum: int) -> None:
        why = f"interrupted twice (by {signal.Signals(signum).name})"
        assert self.stop is not None
        if self.stop.in_flight is None:
            self.stop = _Stop(self.stop.not_started, f"canceled in flight: {why}")
            log.warning("Run %s: %s; canceling the %d call(s) in flight.", self.run_id, why, len(self.in_flight))
            for task in self.in_flight.values():
                task.cancel()

    async def _time_limit(self) -> None:
        assert self.run.time_limit is not None
        await self.clock.sleep(max(0.0, self.started + self.run.time_limit - self.clock.now()))
        self._stop(f"time limit of {self.run.time_limit:g}s passed", cancel=True)

    async def _not_started(self, index: int) -> None:
        if index in self.restored:
            return  # it keeps its stored answer, and the reason recorded before
        assert self.stop is not None
        await self._decide(index, ItemStatus.NOT_RUN, self.stop.not_started)

    async def _decide(self, index: int, status: ItemStatus, reason: str) -> None:
        await self.runs.decide(self.run_id, [(index, status.value, reason)], now=self.clock.now())
        self._settled(ItemResult(index, self.run.jobs.id_of(index), self.keys[index], status, reason=reason))

    async def _next_change(self) -> None:
        self.changed.clear()
        await self.changed.wait()

    # Results.

    def _success(self, index: int, response: ActorResponse[Any]) -> ItemResult:
        job, key = self.run.jobs[index], self.keys[index]
        if self.run.response_model is not None:
            try:
                response = parse_response(response, self.run.response_model)
            except StructuredOutputError as exc:
                return ItemResult(index, job.id, key, ItemStatus.FAILED, answer=response, error=exc, reason=str(exc))
        citations, by_field = citations_json(response)
        return ItemResult(
            index, job.id, key, ItemStatus.SUCCEEDED, answer=response, citations=citations, field_citations=by_field
        )

    def _failure(self, index: int, error: ActorError, reason: str | None) -> ItemResult:
        return ItemResult(index, self.run.jobs.id_of(index), self.keys[index], ItemStatus.FAILED, error=error,
                          reason=reason)  # fmt: skip

    def _settled(self, result: ItemResult) -> None:
        self._set(result)
        if self.directory is not None:
            self.directory.add([result])
        if self.caller is not None:
            event = ItemFinished(self.run_id, result.index, result.id, result.status.value, result.reason)
            self.caller.emit(event)
        self._report()

    def _set(self, result: ItemResult) -> None:
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
            batches_total=0,
            batches_done=0,
            batches_in_flight=0,
            calls_in_flight=len(self.in_flight),
            done_before=self.done_before,
            cost_usd=self.budget.spent,
            cost_limit_usd=self.run.max_cost_usd,
            elapsed_seconds=self.clock.now() - self.started,
        )

    def _report(self, *, now: bool = False) -> None:
        moment = self.clock.now()  # the run's clock: the tests' virtual one moves it as it moves the calls
        if not now and moment - self.reported_at < _REPORT_EVERY:
            return
        self.reported_at = moment
        snapshot = self._snapshot()
        self.progress.update(snapshot)
        if self.caller is not None:
            self.caller.emit(RunProgressed(snapshot))

    def _result(self) -> RunResult:
        items = [
            r if r is not None else ItemResult(i, self.run.jobs.id_of(i), self.keys[i], ItemStatus.PENDING)
            for i, r in enumerate(self.results)
        ]
        notes = [self.stop.not_started] if self.stop is not None else []
        return RunResult(self.run_id, items, elapsed_seconds=self.clock.now() - self.started, notes=notes, mode="live")


def _failed(result: ItemResult, reason: str | None) -> ItemResult:
    return ItemResult(
        result.index, result.id, result.key, ItemStatus.FAILED, answer=result.answer, error=result.error,
        reason=reason, citations=result.citations, field_citations=result.field_citations,
    )  # fmt: skip


def _named(job: Job) -> str:
    return f", {job.id}" if job.id else ""
