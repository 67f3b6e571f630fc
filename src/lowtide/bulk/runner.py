"""Bulk runs: many inputs for one actor, through batches the run splits itself, durable and resumable.

A run is recorded in the ledger with all its items before anything is sent, under an id (given, or derived from
the actor's settings and the inputs). Each item is a request of the ledger under the key `<run id>-<index>`, so a
run started again with the same id attaches to what is there: stored answers come back at once, batches still out
are waited on, and only what was never sent is sent. `retry` sends failed and expired items again under new keys.

Sending: items are built (files read, content blocks made) as their batch is sent, not before; batches are split
by count and bytes; at most `max_parallel_batches` are out at once. With a cost limit, a batch is sent only if the
run's cost so far, plus the worst case of the batches out, plus its own worst case stays within the limit (a batch
that does not fit waits for those out to settle at their real cost, then shrinks to what fits); what is left is
`not-run`. With a time limit, when it passes the run's outstanding batches are canceled, answers already in are
kept, and every item without one is `failed` with the reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel

from lowtide.arguments import check_budget
from lowtide.batching.engine import BatchEngine, GroupCall, owner_id
from lowtide.bulk.jobs import FileInfo, Job, check_jobs, job_messages
from lowtide.bulk.plan import API_MAX_BATCH_REQUESTS, PlannedBatch, RunPlan, cost_range, request_size, split
from lowtide.bulk.progress import ProgressCallback, ProgressReporter, ReporterMode, RunProgress, reporter_for
from lowtide.bulk.results import ItemResult, ItemStatus, ResultsDirectory, RunResult, write_lines
from lowtide.config import BatchProcessingMode
from lowtide.errors import (
    ActorError,
    BatchRequestCanceled,
    BatchRequestExpired,
    ConfigurationError,
    ProviderCapabilityError,
    StructuredOutputError,
)
from lowtide.ledger.runs import ItemRow, NewItem, RunStore
from lowtide.ledger.store import RequestRecord, RequestState
from lowtide.pricing import worst_case_cost
from lowtide.providers.anthropic.batch import ClaudeBatchProvider
from lowtide.providers.anthropic.mapping import custom_id_for, parse_response, to_message_params
from lowtide.providers.base import Outcome
from lowtide.types import ActorRequest, ActorResponse

if TYPE_CHECKING:
    from lowtide.actor import Actor

__all__ = ["BulkRun", "JobInput", "item_status", "load_run", "retry_run"]

log = logging.getLogger(__name__)

# Progress reaches the reporters at most this often (real seconds), besides every batch sent or finished.
_REPORT_EVERY = 0.2

JobInput = Job | str | Mapping[str, Any]
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$")
# The settings that shape what is sent; the others (polling, ledger, endpoint, key variable) do not make a new run.
_SENT_SETTINGS = (
    "model",
    "system_prompt",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "thinking",
    "tool_choice",
    "output_config",
    "cache_control",
    "extra_params",
)


class BulkRun:
    """A run over many inputs for one actor: add jobs, then `await run()` (or `plan()` for a dry run).

    Options: `run_id` (default: derived from the actor's settings and the inputs, so the same run started again
    resumes), `defaults` (Messages parameters for every job; a job's own win), `response_model`, `citations`
    (the default for jobs with a file), `items_per_batch`, `max_parallel_batches`, `max_cost_usd`, `time_limit`
    (seconds), `cancel_grace` (seconds to wait for canceled batches' answers after the time limit),
    `results_dir`, `out` (a JSONL file written at the end), `on_progress`, `progress` ("auto", "rich", "plain",
    "none") with `progress_stream` and `progress_interval`.
    """

    def __init__(
        self,
        actor: Actor,
        *,
        run_id: str | None = None,
        defaults: Mapping[str, Any] | None = None,
        response_model: type[BaseModel] | None = None,
        citations: bool = False,
        items_per_batch: int | None = None,
        max_parallel_batches: int = 4,
        max_cost_usd: float | Decimal | None = None,
        time_limit: float | None = None,
        cancel_grace: float = 60.0,
        results_dir: str | Path | None = None,
        out: str | Path | None = None,
        on_progress: ProgressCallback | None = None,
        progress: ReporterMode = "none",
        progress_stream: TextIO | None = None,
        progress_interval: float = 30.0,
    ) -> None:
        if run_id is not None and not RUN_ID_PATTERN.fullmatch(run_id):
            raise ConfigurationError(
                f"Run id {run_id!r} must be 1 to 48 letters, digits, '-' or '_', starting with a letter or digit.",
                field="run_id",
            )
        if items_per_batch is not None and not 1 <= items_per_batch <= API_MAX_BATCH_REQUESTS:
            raise ConfigurationError(
                f"items_per_batch must be between 1 and {API_MAX_BATCH_REQUESTS:,}, not {items_per_batch}.",
                field="items_per_batch",
            )
        if max_parallel_batches < 1:
            raise ConfigurationError("max_parallel_batches must be at least 1.", field="max_parallel_batches")
        budget = check_budget(max_cost_usd) if max_cost_usd is not None else None
        if time_limit is not None and time_limit <= 0:
            raise ConfigurationError("time_limit must be more than 0 seconds.", field="time_limit")
        self.actor = actor
        self.run_id = run_id
        self.defaults = dict(defaults or {})
        self.response_model = response_model
        self.citations = citations
        self.items_per_batch = items_per_batch
        self.max_parallel_batches = max_parallel_batches
        self.max_cost_usd = budget
        self.time_limit = time_limit
        self.cancel_grace = cancel_grace
        self.results_dir = Path(results_dir) if results_dir is not None else None
        self.out = Path(out) if out is not None else None
        self.on_progress = on_progress
        self.progress: ReporterMode = progress
        self.progress_stream = progress_stream
        self.progress_interval = progress_interval
        self.jobs: list[Job] = []

    # Adding jobs.

    def add(
        self,
        prompt: str | None = None,
        *,
        file: str | Path | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        id: str | None = None,
        citations: bool | None = None,
        **overrides: Any,
    ) -> BulkRun:
        """Add one job: a prompt, a file with a prompt, or messages; keyword arguments override Messages params."""
        data: dict[str, Any] = {"prompt": prompt, "messages": messages, "id": id, "citations": citations}
        if file is not None:
            data["file"] = Path(file).expanduser().absolute()
        data["overrides"] = overrides
        self.jobs.append(_job(data, where=f"job {len(self.jobs)}"))
        return self

    def add_jobs(self, inputs: Iterable[JobInput]) -> BulkRun:
        """Add jobs: `Job`s, prompts, or mappings shaped like a line of a JSONL input."""
        for value in inputs:
            if isinstance(value, Job):
                self.jobs.append(value)
            elif isinstance(value, str):
                self.jobs.append(Job(prompt=value))
            else:
                self.jobs.append(_job(_split_overrides(value), where=f"job {len(self.jobs)}"))
        return self

    # Running.

    async def plan(self) -> RunPlan:
        """The dry run: the batches this run would send, their sizes and cost range. Nothing is sent or written."""
        prepared = self._prepare(self._check(write=False), write=False)
        plan = RunPlan(
            run_id=prepared.run_id,
            items_total=len(self.jobs),
            already_final=len(self.jobs) - len(prepared.to_send),
            cost_limit_usd=self.max_cost_usd,
        )
        spent = prepared.spent
        over_limit = False
        built = self.built(prepared, prepared.to_send)
        for group in split(
            ((entry, entry[2]) for entry in built), max_requests=self.max_requests(), max_bytes=self.max_bytes()
        ):
            batch = PlannedBatch()
            for _, params, size in group:
                estimate = cost_range(params)
                if estimate is None:
                    plan.unpriced_model = str(params.get("model"))
                    batch.priced = False
                    estimate = (Decimal(0), Decimal(0))
                if over_limit or (self.max_cost_usd is not None and spent + estimate[1] > self.max_cost_usd):
                    over_limit = True
                    plan.not_run += 1
                    continue
                spent += estimate[1]
                batch.requests += 1
                batch.bytes += size
                batch.cost_low_usd += estimate[0]
                batch.cost_high_usd += estimate[1]
            if batch.requests:
                plan.batches.append(batch)
        return plan

    async def run(self, *, only: Iterable[int] | None = None) -> RunResult:
        """Run (or resume) the run; every input gets a result, in input order.

        `only` limits what is sent to those item indexes (what `retry` does); the others report where they stand.
        """
        checked = self._check(write=True)
        await self._preflight(checked)
        prepared = self._prepare(checked, write=True)
        if only is not None:
            wanted = set(only)
            prepared.to_send = [index for index in prepared.to_send if index in wanted]
        return await _Execution(self, prepared).go()

    def record(self) -> str:
        """Record the run and all its items in the ledger, as `run()` does first, and return its id.

        Nothing is sent: a program can hand the id on (to `lowtide status`, to a later `run`) before running it.
        """
        return self._prepare(self._check(write=True), write=True).run_id

    def run_sync(self) -> RunResult:
        """`run` for scripts without an event loop."""
        return asyncio.run(self.run())

    # Inside.

    def max_requests(self) -> int:
        settings = self.actor.configuration.batch
        return min(self.items_per_batch or API_MAX_BATCH_REQUESTS, settings.max_batch_requests)

    def max_bytes(self) -> int:
        return self.actor.configuration.batch.max_batch_bytes

    def _request_params(self, job: Job, *, with_content: bool = True) -> dict[str, Any]:
        return to_message_params(self._request(job, with_content=with_content))

    def _request(self, job: Job, *, with_content: bool = True) -> ActorRequest:
        """The request of a job; without content, a stand-in text (to check a job without reading files)."""
        citations = job.citations if job.citations is not None else self.citations
        if with_content:
            messages: list[Any] = job_messages(job, citations=citations)
        elif job.messages is not None:
            messages = [message.model_dump() for message in job.messages]
        else:
            messages = [{"role": "user", "content": job.prompt or "-"}]
        return self.actor.request(
            messages=messages, response_model=self.response_model, **{**self.defaults, **job.overrides}
        )

    def built(self, prepared: _Prepared, indexes: Sequence[int]) -> Iterator[tuple[int, dict[str, Any], int]]:
        """(index, params, size) for `indexes`, built one at a time as they are consumed."""
        for index in indexes:
            params = self._request_params(self.jobs[index])
            yield index, params, request_size(custom_id_for(prepared.keys[index]), params)

    def _check(self, *, write: bool) -> _Checked:
        """Check every job (nothing is sent before all pass): its file, its params, its cost and size."""
        files = check_jobs(self.jobs)  # files there and of a kind the API takes, ids unique: before anything is sent
        provider: ClaudeBatchProvider | None = None
        if write:  # a dry run needs no client (nor a key): it sends nothing
            built = self.actor.provider(BatchProcessingMode.BATCH)
            if not isinstance(built, ClaudeBatchProvider):
                raise ProviderCapabilityError(self.actor.configuration.provider, "bulk runs (durable batch mode)")
            provider = built
        digest = hashlib.sha256()
        digest.update(_canonical(self._settings()).encode())
        probes: dict[str, tuple[int, ActorRequest]] = {}
        unpriced: ConfigurationError | None = None
        for index, job in enumerate(self.jobs):
            try:
                request = self._request(job, with_content=False)
                params = to_message_params(request)
            except ConfigurationError as exc:
                raise ConfigurationError(f"Job {index}{_named(job)}: {exc}", field=exc.field) from None
            # What the provider checks (model, max_tokens, tools) once per distinct combination, not per job.
            probe = _canonical({name: params.get(name) for name in ("model", "max_tokens", "tools")})
            probes.setdefault(probe, (index, request))
            priceless = self.max_cost_usd is not None and unpriced is None
            if priceless and worst_case_cost(params, mode=BatchProcessingMode.BATCH) is None:
                # Raised once the provider has checked the model: a misspelt one is better told as such.
                unpriced = ConfigurationError(
                    f"Job {index}{_named(job)}: no price is known for model {params.get('model')!r}, so the cost"
                    " limit cannot be kept.",
                    field="max_cost_usd",
                )
            size = _estimated_size(params, files[job.file] if job.file is not None else None)
            if size > self.max_bytes():
                raise ConfigurationError(
                    f"Job {index}{_named(job)} is about {size:,} bytes as a batch request, more than a batch may hold"
                    f" ({self.max_bytes():,}).",
                    field="inputs",
                )
            digest.update(b"\x00" + _canonical(job.model_dump(mode="json")).encode())
        return _Checked(provider, digest.hexdigest(), list(probes.values()), unpriced)

    async def _preflight(self, checked: _Checked) -> None:
        """The provider's pre-send checks (which may ask its API), before the run is recorded."""
        assert checked.provider is not None, "checked for a dry run"
        for index, request in checked.probes:
            try:
                await checked.provider.preflight(request)
            except ConfigurationError as exc:
                raise ConfigurationError(f"Job {index}{_named(self.jobs[index])}: {exc}", field=exc.field) from None

    def _prepare(self, checked: _Checked, *, write: bool) -> _Prepared:
        """Find or record the run of checked jobs, and sort its items."""
        if checked.unpriced is not None:
            raise checked.unpriced
        provider, fingerprint = checked.provider, checked.fingerprint
        run_id = self.run_id or f"run-{fingerprint[:16]}"
        ledger = self.actor.ledger
        store = RunStore(ledger)
        record = store.run(run_id)
        if record is not None and record.fingerprint != fingerprint:
            raise ConfigurationError(
                f"Run {run_id!r} in {ledger.path} was made with other inputs or actor settings; resume it with the"
                " same ones, or give this run a new id.",
                field="run_id",
            )
        if record is None and write:
            now = self.actor.clock.now()
            store.create(
                run_id,
                actor=self.actor.name,
                configuration=self.actor.configuration.model_dump(mode="json"),
                options=self._options(),
                fingerprint=fingerprint,
                items=[
                    NewItem(index, job.id, job.model_dump(mode="json"), _key(run_id, index, 1))
                    for index, job in enumerate(self.jobs)
                ],
                now=now,
            )
            record = store.run(run_id)
        rows = store.items(run_id, with_jobs=False) if record is not None else []
        keys = [row.key for row in rows] or [_key(run_id, index, 1) for index in range(len(self.jobs))]
        finished = [row.index for row in rows if row.request_state is not None and row.request_state.final]
        spent = sum((row.cost_usd or Decimal(0) for row in rows), Decimal(0))
        done = set(finished)
        # Pending: claimed, never in a batch (a run stopped in between). They are sent again in the run's own groups.
        attach = [
            r.index
            for r in rows
            if r.request_state is not None and not r.request_state.final and r.request_state is not RequestState.PENDING
        ]
        waiting = set(attach)
        to_send = [index for index in range(len(self.jobs)) if index not in done and index not in waiting]
        return _Prepared(run_id, store, provider, keys, rows, finished, attach, to_send, spent)

    def _settings(self) -> dict[str, Any]:
        configuration = self.actor.configuration.model_dump(mode="json")
        return {
            "actor": self.actor.name,
            "settings": {name: configuration.get(name) for name in _SENT_SETTINGS},
            "defaults": self.defaults,
            "response_model": _qualified(self.response_model),
            "citations": self.citations,
        }

    def _options(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "response_model": _qualified(self.response_model),
            "citations": self.citations,
            "items_per_batch": self.items_per_batch,
            "max_parallel_batches": self.max_parallel_batches,
            "max_cost_usd": str(self.max_cost_usd) if self.max_cost_usd is not None else None,
            "time_limit": self.time_limit,
            "cancel_grace": self.cancel_grace,
            "results_dir": str(self.results_dir.absolute()) if self.results_dir is not None else None,
            "out": str(self.out.absolute()) if self.out is not None else None,
        }


@dataclass
class _Checked:
    """Jobs that passed every check: the provider to send them with, the run's fingerprint, and one request for
    each distinct model, max_tokens and tools among them (with the index of its first job)."""

    provider: ClaudeBatchProvider | None
    fingerprint: str
    probes: list[tuple[int, ActorRequest]]
    unpriced: ConfigurationError | None
    """A cost limit with a job of unknown price: raised once the jobs' models are checked."""


@dataclass
class _Prepared:
    """A run as `_prepare` found it: its keys, and which items are final, out in a batch, or to send."""

    run_id: str
    store: RunStore
    provider: ClaudeBatchProvider | None
    keys: list[str]
    rows: list[ItemRow]
    finished: list[int]
    attach: list[int]
    to_send: list[int]
    spent: Decimal


class _Execution:
    """One go at a run: attach to what is out, send what is not, keep the limits, report progress."""

    def __init__(self, run: BulkRun, prepared: _Prepared) -> None:
        self.run = run
        self.prepared = prepared
        self.store = prepared.store
        self.run_id = prepared.run_id
        self.keys = prepared.keys
        actor = run.actor
        self.clock = actor.clock
        provider = prepared.provider
        assert provider is not None, "prepared for a dry run"
        self.engine = BatchEngine(
            provider,
            actor.ledger,
            endpoint=provider.endpoint,
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
        self.spent = prepared.spent
        self.reserved = Decimal(0)
        self.worst: dict[int, Decimal] = {}
        self.outstanding = 0
        self.batches_done = 0
        self.batches_out = 0
        self.batches_sent = 0
        self.time_up = False
        self.decided: set[int] = set()
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
            for batch_id in self.store.outstanding_batches(self.run_id):
                batch = self.engine.ledger.batch(batch_id)
                if batch is not None:
                    self.engine.settle_stored(batch)  # results stored before a stop: nothing left to fetch
            self._load_finished()
            if self.directory is not None:
                self.directory.start([r for r in self.results if r is not None])
            for index in self.prepared.attach:
                self._watch(index, asyncio.ensure_future(self.engine.outcome(self.keys[index])))
            timer = self._spawn(self._time_limit()) if self.run.time_limit is not None else None
            self._report(now=True)
            await self._send(self.prepared.to_send)
            await self._wait_for_answers()
            if timer is not None:
                timer.cancel()
            result = self._result()
        finally:
            for task in self.tasks:
                task.cancel()
            await self.engine.aclose()
        if self.directory is not None:
            self.directory.finish(result.items)
        if self.run.out is not None:
            write_lines(self.run.out, (item.as_json() for item in result.items))
        self.progress.close(self._snapshot())
        return result

    # What is there already.

    def _load_finished(self) -> None:
        rows = {row.index: row for row in self.prepared.rows}
        sending = set(self.prepared.to_send)
        again = sending | set(self.prepared.attach)
        cleared = [(i, None, None) for i in again if i in rows and rows[i].status is not None]
        if cleared:
            self.store.decide(self.run_id, cleared, now=self.clock.now())
        for row in self.prepared.rows:
            if row.request_state is None and row.index not in sending:
                # Not sent this time (a retry sends only what failed): it stays as the run left it.
                status = ItemStatus(row.status) if row.status is not None else ItemStatus.NOT_RUN
                job_id = self.run.jobs[row.index].id
                self._set(ItemResult(row.index, job_id, row.key, status, reason=row.reason))
        finished = self.prepared.finished
        for start in range(0, len(finished), 1000):  # a thousand records at a time: each holds its whole answer
            chunk = finished[start : start + 1000]
            records = {r.key: r for r in self.engine.ledger.requests_for([self.keys[i] for i in chunk])}
            for index in chunk:
                record = records[self.keys[index]]
                self._set(self._outcome_result(index, self._stored(record), rows[index]))

    def _stored(self, record: RequestRecord) -> Outcome:
        try:
            return self.engine.result_of(record, None)
        except ActorError as exc:
            return exc

    # Sending.

    async def _send(self, indexes: Sequence[int]) -> None:
        position = {index: at for at, index in enumerate(indexes)}
        groups = split(
            ((entry, entry[2]) for entry in self.run.built(self.prepared, indexes)),
            max_requests=self.run.max_requests(),
            max_bytes=self.run.max_bytes(),
        )
        for group in groups:
            rest = list(indexes[position[group[-1][0]] + 1 :])
            await self._capacity()
            if self.time_up:
                self._decide([i for i, _, _ in group] + rest, ItemStatus.FAILED, self._late_reason())
                return
            calls = [
                GroupCall(self.keys[i], params, size, worst_case_cost(params, mode=BatchProcessingMode.BATCH))
                for i, params, size in group
            ]
            if self.run.max_cost_usd is not None:
                fitting = await self._affordable(calls)
                if self.time_up:
                    self._decide([i for i, _, _ in group] + rest, ItemStatus.FAILED, self._late_reason())
                    return
                if len(fitting) < len(calls):
                    skipped = [i for i, _, _ in group[len(fitting) :]] + rest
                    self._decide(skipped, ItemStatus.NOT_RUN, self._over_limit_reason(calls[len(fitting)]))
                    if fitting:
                        await self._dispatch(fitting, [i for i, _, _ in group[: len(fitting)]])
                    return
            await self._dispatch(calls, [i for i, _, _ in group])

    async def _dispatch(self, calls: list[GroupCall], indexes: list[int]) -> None:
        for call, index in zip(calls, indexes, strict=True):
            self.worst[index] = call.worst_case_usd or Decimal(0)
            self.reserved += self.worst[index]
        futures = await self.engine.send_group(calls, actor=self.run.actor.name)
        self.batches_out += 1
        self.batches_sent += 1
        remaining = {"n": len(indexes)}

        def one_done() -> None:
            remaining["n"] -= 1
            if remaining["n"] == 0:
                self.batches_out -= 1
                self.batches_done += 1
                self._report(now=True)

        for call, index in zip(calls, indexes, strict=True):
            self._watch(index, futures[call.key], on_done=one_done)
        self._report(now=True)

    async def _capacity(self) -> None:
        while self.batches_out >= self.run.max_parallel_batches and not self.time_up:
            await self._next_change()

    async def _affordable(self, calls: list[GroupCall]) -> list[GroupCall]:
        """The calls of a group that fit the cost limit, after waiting for batches out to settle if need be."""
        limit = self.run.max_cost_usd
        assert limit is not None
        need = sum((c.worst_case_usd or Decimal(0) for c in calls), Decimal(0))
        while self.spent + self.reserved + need > limit and self.batches_out > 0 and not self.time_up:
            await self._next_change()
        fitting: list[GroupCall] = []
        total = self.spent + self.reserved
        for call in calls:
            total += call.worst_case_usd or Decimal(0)
            if total > limit:
                break
            fitting.append(call)
        return fitting

    def _over_limit_reason(self, call: GroupCall) -> str:
        return (
            f"cost limit ${self.run.max_cost_usd}: the run has spent ${self.spent:.6f}, and the worst case of this"
            f" request (${call.worst_case_usd or 0:.6f}) would cross the limit"
        )

    def _late_reason(self) -> str:
        return f"time limit of {self.run.time_limit:g}s passed before it was sent"

    async def _next_change(self) -> None:
        self.changed.clear()
        await self.changed.wait()

    # Answers.

    def _watch(self, index: int, future: asyncio.Future[Outcome], *, on_done: Callable[[], None] | None = None) -> None:
        self.outstanding += 1

        def settled(done: asyncio.Future[Outcome]) -> None:
            self.outstanding -= 1
            if done.cancelled():
                return
            failure = done.exception()
            if failure is None:
                outcome: Outcome = done.result()
            elif isinstance(failure, ActorError):
                outcome = failure
            else:
                outcome = ActorError(f"{type(failure).__name__}: {failure}")
            self._answered(index, outcome)
            if on_done is not None:
                on_done()
            self.changed.set()
            self._report()

        future.add_done_callback(settled)

    def _answered(self, index: int, outcome: Outcome) -> None:
        self.reserved -= self.worst.pop(index, Decimal(0))
        result = self._outcome_result(index, outcome, None)
        if isinstance(result.error, StructuredOutputError):
            self.store.decide(self.run_id, [(index, ItemStatus.FAILED.value, str(result.error))], now=self.clock.now())
        elif index in self.decided and result.status is ItemStatus.SUCCEEDED:
            self.store.decide(self.run_id, [(index, None, None)], now=self.clock.now())
        self.spent += result.cost_usd or Decimal(0)
        self._set(result)
        if self.directory is not None:
            self.directory.add([result])

    def _outcome_result(self, index: int, outcome: Outcome, row: ItemRow | None) -> ItemResult:
        job = self.run.jobs[index]
        key = self.keys[index]
        if isinstance(outcome, ActorResponse):
            response: ActorResponse[Any] = outcome
            if self.run.response_model is not None:
                try:
                    response = parse_response(outcome, self.run.response_model)
                except StructuredOutputError as exc:
                    return ItemResult(index, job.id, key, ItemStatus.FAILED, response=outcome, error=exc)
            citations, by_field = _citations(response)
            return ItemResult(
                index, job.id, key, ItemStatus.SUCCEEDED, response=response, citations=citations,
                field_citations=by_field,
            )  # fmt: skip
        reason = row.reason if row is not None else None
        if isinstance(outcome, BatchRequestCanceled):
            if self.time_up or (row is not None and row.status == ItemStatus.FAILED.value):
                return ItemResult(
                    index, job.id, key, ItemStatus.FAILED, error=outcome, reason=reason or self._cut_reason()
                )
            return ItemResult(index, job.id, key, ItemStatus.CANCELED, error=outcome)
        status = ItemStatus.EXPIRED if isinstance(outcome, BatchRequestExpired) else ItemStatus.FAILED
        return ItemResult(index, job.id, key, status, error=outcome, reason=reason)

    def _cut_reason(self) -> str:
        return f"time limit of {self.run.time_limit:g}s passed: its batch was canceled before it was answered"

    def _decide(self, indexes: Sequence[int], status: ItemStatus, reason: str) -> None:
        """Items the run settles without the API (not sent for the cost limit, or the time limit)."""
        undecided = [i for i in indexes if self.results[i] is None]
        if not undecided:
            return
        self.store.decide(self.run_id, [(i, status.value, reason) for i in undecided], now=self.clock.now())
        self.decided.update(undecided)
        decided = [ItemResult(i, self.run.jobs[i].id, self.keys[i], status, reason=reason) for i in undecided]
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
                    await self._change_or_tick(grace_ends)
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
        for batch_id in self.store.outstanding_batches(self.run_id):
            batch = self.engine.ledger.batch(batch_id)
            if batch is None or batch.provider_batch_id is None:
                continue
            try:
                await self.engine.provider.cancel(batch.provider_batch_id)
            except ActorError as exc:
                log.warning("Run %s: could not cancel batch %s: %s", self.run_id, batch.provider_batch_id, exc)
        pending = [i for i, r in enumerate(self.results) if r is None]
        self.decided.update(pending)
        self.store.decide(self.run_id, [(i, ItemStatus.FAILED.value, self._cut_reason()) for i in pending],
                          now=self.clock.now())  # fmt: skip
        self.changed.set()

    # Reporting.

    def _raw(self, batch_id: str, provider_batch_id: str, lines: Sequence[Mapping[str, Any]]) -> None:
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
        unsent = max(0, len(self.results) - self.done - self.outstanding)
        return RunProgress(
            run_id=self.run_id,
            items_total=len(self.results),
            items_done=self.done,
            succeeded=counts[ItemStatus.SUCCEEDED],
            failed=counts[ItemStatus.FAILED] + counts[ItemStatus.EXPIRED],
            canceled=counts[ItemStatus.CANCELED],
            not_run=counts[ItemStatus.NOT_RUN],
            batches_total=self.batches_sent + -(-unsent // self.run.max_requests()),
            batches_done=self.batches_done,
            batches_in_flight=self.batches_out,
            cost_usd=self.spent,
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
            r if r is not None else ItemResult(i, self.run.jobs[i].id, self.keys[i], ItemStatus.PENDING)
            for i, r in enumerate(self.results)
        ]
        return RunResult(self.run_id, items, elapsed_seconds=self.clock.now() - self.started)

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task


# Resuming and retrying from the ledger alone.


def load_run(actor: Actor, run_id: str, **options: Any) -> BulkRun:
    """A `BulkRun` rebuilt from the ledger: the run's jobs and options, for `actor` (usually its own settings)."""
    store = RunStore(actor.ledger)
    record = store.run(run_id)
    if record is None:
        raise ConfigurationError(f"The ledger {actor.ledger.path} has no run {run_id!r}.", field="run_id")
    saved = dict(record.options)
    model = _import_model(saved.get("response_model"))
    kwargs: dict[str, Any] = {
        "run_id": run_id,
        "defaults": saved.get("defaults") or {},
        "response_model": model,
        "citations": bool(saved.get("citations")),
        "items_per_batch": saved.get("items_per_batch"),
        "max_parallel_batches": saved.get("max_parallel_batches") or 4,
        # Recorded as the string of a Decimal.
        "max_cost_usd": Decimal(saved["max_cost_usd"]) if saved.get("max_cost_usd") is not None else None,
        "time_limit": saved.get("time_limit"),
        "cancel_grace": saved.get("cancel_grace") or 60.0,
        "results_dir": saved.get("results_dir"),
        "out": saved.get("out"),
    }
    kwargs.update(options)
    run = BulkRun(actor, **kwargs)
    run.jobs = [Job.model_validate(row.job) for row in store.items(run_id)]
    return run


async def retry_run(actor: Actor, run_id: str, **options: Any) -> RunResult:
    """Send a run's failed and expired items again (new keys: their first answers stay on record); keep the rest."""
    run = load_run(actor, run_id, **options)
    store = RunStore(actor.ledger)
    again = [row for row in store.items(run_id, with_jobs=False) if _retryable(row)]
    store.new_attempts(run_id, [(row.index, _key(run_id, row.index, row.attempt + 1)) for row in again],
                       now=actor.clock.now())  # fmt: skip
    return await run.run(only=[row.index for row in again])


def _retryable(row: ItemRow) -> bool:
    return item_status(row) in (ItemStatus.FAILED, ItemStatus.EXPIRED)


def item_status(row: ItemRow) -> ItemStatus:
    """Where an item stands: what the run decided for it, else its latest request's state."""
    if row.status is not None:
        return ItemStatus(row.status)
    if row.request_state is None or not row.request_state.final:
        return ItemStatus.PENDING
    return ItemStatus(row.request_state.value)


# Helpers.


def _key(run_id: str, index: int, attempt: int) -> str:
    return f"{run_id}-{index}" if attempt == 1 else f"{run_id}-{index}-a{attempt}"


def _job(data: Mapping[str, Any], *, where: str) -> Job:
    try:
        return Job.model_validate(dict(data))
    except ValueError as exc:
        raise ConfigurationError(f"Invalid {where}: {exc}", field="inputs") from None


def _split_overrides(value: Mapping[str, Any]) -> dict[str, Any]:
    known = set(Job.model_fields) - {"overrides"}
    data = {k: v for k, v in value.items() if k in known}
    data["overrides"] = {**dict(value.get("overrides") or {}), **{k: v for k, v in value.items() if k not in known
                                                                 and k != "overrides"}}  # fmt: skip
    return data


def _estimated_size(params: Mapping[str, Any], file: FileInfo | None) -> int:
    """A job's size as a batch request before its file is read: PDFs and images travel as base64, a third larger."""
    size = request_size("x" * 64, params)
    if file is not None:
        size += file.size if file.kind == "text" else -(-file.size // 3) * 4
    return size


def _named(job: Job) -> str:
    return f" ({job.id})" if job.id else ""


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _qualified(model: type[BaseModel] | None) -> str | None:
    return f"{model.__module__}:{model.__qualname__}" if model is not None else None


def _import_model(path: object) -> type[BaseModel] | None:
    if not isinstance(path, str) or not path:
        return None
    from lowtide.bulk.models import import_model

    return import_model(path)


def _citations(
    response: ActorResponse[Any],
) -> tuple[list[dict[str, Any]] | None, dict[str, list[dict[str, Any]]] | None]:
    from lowtide.bulk.citations import citations_of, field_citations

    found = citations_of(response)
    if not found:
        return None, None
    listed = [c.model_dump(exclude_none=True) for c in found]
    parsed = response.parsed
    if not isinstance(parsed, BaseModel):
        return listed, None
    mapped = field_citations(response, parsed)
    return listed, {name: [c.model_dump(exclude_none=True) for c in cs] for name, cs in mapped.items()} or None
