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
import signal
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TextIO

from lowtide.batching.records import error_from_json, error_to_json, response_from_json
from lowtide.bulk.inputs.jobs import Job
from lowtide.bulk.outputs.results import ItemResult, ItemStatus
from lowtide.bulk.running.definition import LiveRunDefinition, Prepared
from lowtide.bulk.running.interrupts import on_interrupt
from lowtide.bulk.running.state import RunEnd, RunState, Underway
from lowtide.core.run_reports import RunProgress
from lowtide.errors import ActorError, APIUnreachableError, StructuredOutputError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.run_ledger import AsyncRunLedger
from lowtide.ledger.runs import LiveAnswer
from lowtide.ledger.store import RequestState
from lowtide.live.caller import LiveCaller
from lowtide.live.events import ItemFinished, RunProgressed
from lowtide.live.retries import error_class
from lowtide.live.timing import finishing, within
from lowtide.messages.structured import parse_response
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["LiveExecution"]

log = logging.getLogger(__name__)

_UNFINISHED = "post-processing did not finish (the run stopped first); `retry` runs it again on the stored answer"


@dataclass
class _Stop:
    not_started: str
    """The reason recorded for items not started."""
    in_flight: str | None
    """The reason recorded for calls canceled in flight; None: they are drained (answered and kept)."""


class LiveExecution:
    """One go at a live run: stored answers taken as they are, the rest called, at most `max_concurrency` at once."""

    def __init__(
        self, run: LiveRunDefinition, prepared: Prepared, *, only: set[int] | None = None, stream: TextIO | None = None
    ) -> None:
        self.run = run
        self.stream = stream
        self.prepared = prepared
        self._runs: AsyncRunLedger | None = None
        self.run_id = prepared.run_id
        self.keys = prepared.keys
        self.only = only
        self.clock = run.actor.clock
        self.in_flight: dict[int, asyncio.Future[ActorResponse[object]]] = {}
        self.stop: _Stop | None = None
        self.restored: dict[int, ItemResult] = {}
        """Items answered earlier whose post-processing is to run again (no call)."""
        self.caller: LiveCaller | None = None
        # Progress is spaced by the run's clock: the tests' virtual one moves it as it moves the calls.
        self.state = RunState(run, prepared, underway=self._underway, moment=self.clock.now, on_report=self._progressed)
        self.budget = self.state.budget

    @property
    def runs(self) -> AsyncRunLedger:
        """The run's rows as the event loop writes them (its answers and decisions, awaited)."""
        if self._runs is None:
            self._runs = async_ledger(self.run.actor.ledger).run_store
        return self._runs

    async def go(self) -> RunEnd:
        state = self.state
        caller = self.caller = self.run.actor.live_caller()
        await self._load_finished()
        state.done_before = state.done - len(self.restored)
        timer = asyncio.ensure_future(self._time_limit()) if self.run.time_limit is not None else None
        await state.begin(leaving_out=self.restored)
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
        notes = [self.stop.not_started] if self.stop is not None else []
        return await state.conclude(notes=notes, mode="live", interrupted=interrupted(), stream=self.stream)

    def _underway(self) -> Underway:
        return Underway(calls_in_flight=len(self.in_flight))

    def _progressed(self, snapshot: RunProgress) -> None:
        if self.caller is not None:
            self.caller.emit(RunProgressed(snapshot))

    # What is there already.

    async def _load_finished(self) -> None:
        rows = self.prepared.row_of
        self.state.keep_unsent(self.prepared.rows, set(self.prepared.to_send))
        ledger = async_ledger(self.run.actor.ledger)  # (the run's own store, the same ledger's)
        async for index, record in self.state.records(ledger, self.prepared.finished):
            row = rows[index]
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
            self.state.set(result)

    def _again(self, index: int) -> bool:
        return self.run.post_process is not None and (self.only is None or index in self.only)

    # Calling.

    async def _worker(
        self, work: Iterator[int], call: Callable[[ActorRequest], Awaitable[ActorResponse[object]]]
    ) -> None:
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
                await self.state.next_change()
            if self.stop is not None:
                await self._not_started(index)
                continue
            if not self.budget.fits([worst]):
                self.stop = _Stop(self.budget.refusal(worst), None)
                await self._not_started(index)
                continue
            self.budget.reserve(index, worst)
            task = self.in_flight[index] = asyncio.ensure_future(call(request))
            self.state.report()
            await asyncio.wait({task})
            del self.in_flight[index]
            if task.cancelled():
                self.budget.release(index)
                reason = self.stop.in_flight if self.stop is not None else None
                await self._decide(index, ItemStatus.FAILED, reason or "its call was canceled in flight")
            else:
                failure = task.exception()
                await self._answered(index, request, task.result() if failure is None else failure)
            self.state.change()

    async def _answered(
        self, index: int, request: ActorRequest, outcome: ActorResponse[object] | BaseException
    ) -> None:
        """Store the outcome first; then hand it on (results, progress, post-processor)."""
        job = self.run.jobs[index]
        params = request.model_dump(mode="json", exclude={"response_model", "custom_id"}, exclude_none=True)

        async def store(
            state: RequestState, response: dict[str, Any] | None, error: dict[str, Any] | None, cost: Decimal | None,
            status: str | None = None, reason: str | None = None,
        ) -> None:  # fmt: skip
            key, actor = self.keys[index], self.run.actor.name
            answer = LiveAnswer(index, key, actor, request.model, params, state, response, error, cost, status, reason)
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
            await store(RequestState.SUCCEEDED, answer, None, cost, status, reason)
            self.budget.settle(index, cost)
            if result.ok and self.run.post_process is not None:
                self.state.set(_failed(result, _UNFINISHED))
                await self._post_process(result)
            else:
                self._settled(result)
            return
        error = outcome if isinstance(outcome, ActorError) else ActorError(f"{type(outcome).__name__}: {outcome}")
        await store(RequestState.FAILED, None, error_to_json(error), None)
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
        self.state.change()

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
        await self.clock.sleep(max(0.0, self.state.started + self.run.time_limit - self.clock.now()))
        self._stop(f"time limit of {self.run.time_limit:g}s passed", cancel=True)

    async def _not_started(self, index: int) -> None:
        if index in self.restored:
            return  # it keeps its stored answer, and the reason recorded before
        assert self.stop is not None
        await self._decide(index, ItemStatus.NOT_RUN, self.stop.not_started)

    async def _decide(self, index: int, status: ItemStatus, reason: str) -> None:
        await self.runs.decide(self.run_id, [(index, status.value, reason)], now=self.clock.now())
        self._settled(self.state.item(index, status, reason=reason))

    # Results.

    def _success(self, index: int, response: ActorResponse[object]) -> ItemResult:
        if self.run.response_model is not None:
            try:
                response = parse_response(response, self.run.response_model)
            except StructuredOutputError as exc:
                return self.state.item(index, ItemStatus.FAILED, answer=response, error=exc, reason=str(exc))
        return self.state.succeeded(index, response)

    def _failure(self, index: int, error: ActorError, reason: str | None) -> ItemResult:
        return self.state.item(index, ItemStatus.FAILED, error=error, reason=reason)

    def _settled(self, result: ItemResult) -> None:
        self.state.settle([result])
        if self.caller is not None:
            event = ItemFinished(self.run_id, result.index, result.id, result.status.value, result.reason)
            self.caller.emit(event)
        self.state.report()


def _failed(result: ItemResult, reason: str | None) -> ItemResult:
    return ItemResult(
        result.index, result.id, result.key, ItemStatus.FAILED, answer=result.answer, error=result.error,
        reason=reason, citations=result.citations, field_citations=result.field_citations, file=result.file,
    )  # fmt: skip


def _named(job: Job) -> str:
    return f", {job.id}" if job.id else ""
