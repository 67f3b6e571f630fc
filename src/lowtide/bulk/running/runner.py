"""Bulk runs: many inputs for one actor, through batches the run splits itself, durable and resumable.

A run is recorded in the ledger with all its items before anything is sent, under an id (given, or derived from
the actor's settings and the inputs). Each item is a request of the ledger under the key `<run id>-<index>`, so a
run started again with the same id attaches to what is there: stored answers come back at once, batches still out
are waited on, and only what was never sent is sent. `retry` sends failed and expired items again under new keys.

Sending: items are built (files read, content blocks made) as their batch is sent, not before; batches are split
by count and bytes; at most `max_parallel_batches` are out at once. With a cost limit, a batch is sent only if the
run's real cost so far, plus the worst case of what is out, plus its own worst case stays within the limit (a batch
that does not fit waits for those out to settle at their real cost, then sends what fits, and the rest leads the
next batch); only when not one request fits with nothing out is the rest `not-run`. With a time limit, when it
passes the run's outstanding batches are canceled, answers already in are kept, and every item without one is
`failed` with the reason.

This module is the run's face: its options, its jobs added, and its goes; how it is checked, recorded and sorted
before a go is `recording.RunRecording`, the requests of its jobs `planning.requests.RunRequests`.
"""

from __future__ import annotations

import asyncio
import re
from array import array
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO, cast

from pydantic import BaseModel

from lowtide.batching.backend import BatchCodec
from lowtide.bulk.inputs.csv_rows import CsvInput
from lowtide.bulk.inputs.digest import InputDigest
from lowtide.bulk.inputs.files import FileInfo
from lowtide.bulk.inputs.jobs import Job, Jobs, described, job_from, job_input
from lowtide.bulk.inputs.reading import JsonlLines, LineJobs
from lowtide.bulk.outputs.destinations import check_owned
from lowtide.bulk.outputs.results import RunResult
from lowtide.bulk.planning.batches import API_MAX_BATCH_REQUESTS, RunPlan, batch_plan
from lowtide.bulk.planning.checks import preflight
from lowtide.bulk.planning.converted import converted_files
from lowtide.bulk.planning.dry_checks import dry_checks
from lowtide.bulk.planning.live_plan import LivePlan, live_plan
from lowtide.bulk.planning.plain_jobs import PlainJobs
from lowtide.bulk.planning.route_plan import check_deadline, kept_deadline, run_route
from lowtide.bulk.progress.reporters import ProgressCallback, ReporterMode
from lowtide.bulk.recorded.identity import input_key, known_run
from lowtide.bulk.running.batch_execution import Execution
from lowtide.bulk.running.definition import RunActor
from lowtide.bulk.running.live_execution import LiveExecution
from lowtide.bulk.running.live_options import AbortMode, PostProcess, check_live_options
from lowtide.bulk.running.recording import RunMode, RunRecording
from lowtide.bulk.running.state import RunEnd
from lowtide.calls.arguments import check_budget, check_count, check_seconds
from lowtide.core.modes import BatchProcessingMode
from lowtide.core.run_reports import RunReport
from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError, LedgerError
from lowtide.ledger.inline import async_ledger
from lowtide.routing.deadlines import Deadline, DeadlineInput
from lowtide.routing.routes import Route
from lowtide.telemetry.switch import tracing
from lowtide.webhooks.notify import notifier_for, run_notice

__all__ = ["BulkRun", "JobInput", "RunActor", "RunMode"]


JobInput = Job | str | Mapping[str, Any]
DEFAULT_PARALLEL_BATCHES = 4
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$")


class BulkRun(RunRecording):
    """A run over many inputs for one actor: add jobs, then `await run()` (or `plan()` for a dry run).

    Options: `run_id` (default: derived from the actor's settings and the inputs, so the same run started again
    resumes), `defaults` (Messages parameters for every job; a job's own win), `response_model`, `citations`
    (the default for jobs with a file), `items_per_batch`, `max_parallel_batches` (default 4), `max_cost_usd`,
    `time_limit` (seconds), `cancel_grace` (seconds to wait for canceled batches' answers after the time limit),
    `results_dir`, `out` (a JSONL file written at the end), `sources` (the files the run was read from, never to be
    written over; the files its jobs send are never either), `on_progress`, `progress` ("auto", "rich", "plain",
    "none") with `progress_stream` and `progress_interval`.

    Nothing a user gave is written over: before anything is recorded or sent, an `out` or `results_dir` that would
    write over one of the run's inputs is refused, and so is an existing results file (`out`, `results.jsonl` in
    `results_dir`) that holds anything but this run's own results (it is replaced when the run resumes or retries).

    A bulk run is a batch run whatever the actor's `batch_processing` (bulk work is what batch APIs are for);
    `mode="live"` answers each item by a live call instead (the actor's live caller: its quota, retries, deadlines,
    middleware and observers), each answer stored in the ledger before it is handed on; `time_limit` is then the
    whole run's deadline, and `items_per_batch` and `max_parallel_batches` are refused. Live only: `abort_on`
    (error classes, `lowtide.live.retries.ERROR_CLASSES`, that stop the run), `abort_mode` ("drain": let the calls
    in flight finish; "cancel": cancel them), and `post_process` (an async callable given each successful
    `ItemResult`) with `post_process_timeout` (seconds).

    `deadline` (batch runs; a clock time "06:00", a duration "2h", an ISO time, a `datetime` or `timedelta`): the run
    goes by the cheapest route expected to answer it in time, and a batch that will be late is canceled in time for
    the items it did not answer to go live (docs/bulk.md, "Deadlines").
    """

    def __init__(
        self,
        actor: RunActor,
        *,
        run_id: str | None = None,
        defaults: Mapping[str, Any] | None = None,
        response_model: type[BaseModel] | None = None,
        citations: bool = False,
        items_per_batch: int | None = None,
        max_parallel_batches: int | None = None,
        max_cost_usd: float | Decimal | None = None,
        time_limit: float | None = None,
        cancel_grace: float = 60.0,
        results_dir: str | Path | None = None,
        out: str | Path | None = None,
        sources: Iterable[str | Path | tuple[str | Path, str]] = (),
        on_progress: ProgressCallback | None = None,
        progress: ReporterMode = "none",
        progress_stream: TextIO | None = None,
        progress_interval: float = 30.0,
        mode: RunMode | str = "batch",
        abort_on: Iterable[str] = (),
        abort_mode: AbortMode | str = "drain",
        post_process: PostProcess | None = None,
        post_process_timeout: float | None = None,
        deadline: DeadlineInput | Deadline | None = None,
    ) -> None:
        live = check_live_options(mode, abort_on, abort_mode, post_process, post_process_timeout)
        self.deadline = check_deadline(deadline, actor.clock.now(), live=live is not None, time_limit=time_limit)
        self.route: Route | None = None
        """The deadline's route, once a run or a dry run has chosen it."""
        if live is not None and (items_per_batch is not None or max_parallel_batches is not None):
            raise ConfigurationError(
                f"{argument('items_per_batch')} and {argument('max_parallel_batches')} are for batch runs; a live"
                " run's concurrency is the actor's live settings (live.max_concurrency).",
                field="items_per_batch" if items_per_batch is not None else "max_parallel_batches",
            )
        if run_id is not None and not RUN_ID_PATTERN.fullmatch(run_id):
            raise ConfigurationError(
                f"Run id {run_id!r} must be 1 to 48 letters, digits, '-' or '_', starting with a letter or digit.",
                field="run_id",
            )
        if items_per_batch is not None:
            check_count("items_per_batch", items_per_batch, most=API_MAX_BATCH_REQUESTS)
        if max_parallel_batches is None:
            max_parallel_batches = DEFAULT_PARALLEL_BATCHES
        check_count("max_parallel_batches", max_parallel_batches)
        budget = check_budget(max_cost_usd) if max_cost_usd is not None else None
        if time_limit is not None:
            check_seconds("time_limit", time_limit)
        check_seconds("cancel_grace", cancel_grace, zero=True)
        check_seconds("progress_interval", progress_interval, zero=True)
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
        self.sources = [
            (Path(given[0]), given[1]) if isinstance(given, tuple) else (Path(given), "a file the run reads")
            for given in sources
        ]
        self.on_progress = on_progress
        self.progress: ReporterMode = progress
        self.progress_stream = progress_stream
        self.progress_interval = progress_interval
        self.mode: RunMode = "live" if live is not None else "batch"
        self.abort_on = live.abort_on if live is not None else frozenset[str]()
        self.abort_mode: AbortMode = live.abort_mode if live is not None else "drain"
        self.post_process = post_process
        self.post_process_timeout = post_process_timeout
        self._codec: BatchCodec | None = None
        self._plain: PlainJobs | None = None
        self._files: Mapping[Path, FileInfo] = {}
        self._held: dict[int, list[str]] = {}
        self.jobs = Jobs()
        self._read: tuple[Jobs, int, str] | None = None

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
        self._growable()
        self.jobs.append(job_from(data, where=f"job {len(self.jobs)}"))
        return self

    def add_jobs(self, inputs: Iterable[JobInput], *, digest: InputDigest | None = None) -> BulkRun:
        """Add jobs: `Job`s, prompts, or mappings shaped like a line of a JSONL input. Anything else (None, a number,
        bytes, an empty prompt or mapping, a key no job has) is a `ConfigurationError` naming its index in `inputs`,
        before anything is recorded or sent.

        `digest`: the `InputDigest` a loader fed as it read `inputs` (`jsonl_inputs(path, digest=...)`), read whole
        once they are added. When they are all the run's jobs, the run is recorded with the digest of its input and
        settings, by which a resume of the same bytes and settings knows it without checking every job again: only
        the jobs it still has to send are checked."""
        fresh = not self.jobs
        given = cast("object", inputs)  # whatever a caller passed, typed or not
        if isinstance(given, str | bytes) or not isinstance(given, Iterable):
            hint = " (one prompt: put it in a list)" if isinstance(given, str) else ""
            raise ConfigurationError(
                f"inputs must be a list of prompts, Jobs or mappings, not {described(given)}{hint}.", field="inputs"
            )
        self._growable()
        for index, value in enumerate(cast("Iterable[object]", inputs)):
            self.jobs.append(job_input(value, where=f"inputs[{index}]"))
        self._read = (self.jobs, len(self.jobs), digest.hexdigest()) if digest is not None and fresh else None
        return self

    def add_input(self, lines: JsonlLines | CsvInput) -> BulkRun:
        """Add the jobs of a JSONL or CSV input file, read as bytes (`JsonlLines`, `CsvInput`). When they are the run's
        only jobs and the ledger holds a batch run of these very bytes and settings (every line checked when it was
        recorded), a JSONL line is parsed when its job is first asked for (a resume parses the lines of the jobs it
        still has to send), and a CSV's files are left to the run's check, which reads the ledger first. Otherwise
        every line is parsed and checked now, as `add_jobs(jsonl_inputs(...))` or `load_csv` does, with the same
        errors."""
        count = lines.read()
        # A CSV's rows are parsed whole either way: a live run known takes them with their files unchecked, as batch.
        lazy = self.mode == "batch" or isinstance(lines, CsvInput)
        if not self.jobs and lazy and self._knows(lines.digest.hexdigest(), count):
            self.jobs = lines.jobs()
            self._read = (self.jobs, len(self.jobs), lines.digest.hexdigest())
            return self
        return self.add_jobs(lines.parsed(), digest=lines.digest)

    def _knows(self, digest: str, count: int) -> bool:
        """Whether the ledger holds a run of `count` jobs read from the input of `digest`, with these settings (a
        ledger that cannot be opened knows none here: it says why when the run opens it, after the input's check; a
        ledger not made yet is not made here, so that an input refused leaves none behind)."""
        try:
            ledger = self.actor.existing_ledger()
            if ledger is None:
                return False
            return (
                known_run(ledger.run_store, self.run_id, input_key(self.fingerprint_settings(), digest), count)
                is not None
            )
        except (ConfigurationError, LedgerError):
            return False

    def _growable(self) -> None:
        """The run's jobs as a list more can be added to: those of an input known by its bytes, parsed whole."""
        if isinstance(self.jobs, LineJobs):
            self.jobs = Jobs(self.jobs)

    # Running.

    async def plan(self) -> RunPlan:
        """The dry run: the batches this run would send, their sizes and cost range, and a deadline's route (its
        venue, price and expected time). Nothing is sent or written; what it can tell offline a run would refuse is
        refused (`dry_checks`), and what it could not check is noted."""
        checked = self._check(write=False)
        unchecked = dry_checks(self.jobs, checked, self.actor.configuration.provider)
        prepared = self._prepare(checked, write=False)
        plan = batch_plan(self, prepared)
        plan.converted, plan.unchecked = converted_files(self._files), unchecked
        if self.deadline is not None:
            plan.route, plan.planned_at = await run_route(self, prepared, self.deadline), self.actor.clock.now()
        return plan

    async def live_plan(self) -> LivePlan:
        """A live run's dry run: items, estimated tokens, cost range at live prices, and the time the configured
        limits make it take. Nothing is sent or written; checked offline as `plan`'s is."""
        checked = self._check(write=False)
        unchecked = dry_checks(self.jobs, checked, self.actor.configuration.provider)
        plan = live_plan(self, self._prepare(checked, write=False))
        plan.converted, plan.unchecked = converted_files(self._files), unchecked
        return plan

    async def run(self, *, only: Iterable[int] | None = None) -> RunResult:
        """Run (or resume) the run; every input gets a result, in input order.

        `only` limits what is sent to those item indexes (what `retry` does); the others report where they stand.
        """
        end = await self._run(only, hold=True, stream=None)
        assert end.result is not None
        return end.result

    async def run_to_files(self, *, only: Iterable[int] | None = None, stream: TextIO | None = None) -> RunReport:
        """Run (or resume) the run as `run` does, holding no answer in memory: its results go to its files (`out`,
        `results_dir`) and `stream`, written at the end from the ledger a chunk of items at a time, in input order.
        Gives the run's report (counts, cost, usage, why items did not succeed), not its items: what `lowtide run`
        does, so that a run of millions of items needs no more memory than its batches out (a live run still holds
        its results)."""
        return (await self._run(only, hold=False, stream=stream)).report

    async def _run(self, only: Iterable[int] | None, *, hold: bool, stream: TextIO | None) -> RunEnd:
        await self.actor.ready(self._mode())
        checked = self._check(write=True)
        check_owned(self._run_id(checked), out=self.out, results_dir=self.results_dir)
        if not self._recorded(checked):
            # A run recorded before was checked then, as a key the ledger knows is: resumed, it asks nothing.
            await preflight(self, checked, self.actor.provider(self._mode()))
            if self.deadline is not None:  # a deadline no route meets: refused before the run is recorded
                await run_route(self, self._prepare(checked, write=False), self.deadline)
        prepared = self._prepare(checked, write=True, hold=hold)
        self.deadline = self.deadline or kept_deadline(self, prepared.run_id)  # resumed or retried: as recorded
        wanted = set(only) if only is not None else None
        if wanted is not None:
            prepared.to_send = array("q", (index for index in prepared.to_send if index in wanted))
        if self.deadline is not None:  # chosen before anything is sent; none that meets it is refused
            self.route = await run_route(self, prepared, self.deadline)

        async def go() -> RunEnd:
            if self.mode == "live":
                return await LiveExecution(self, prepared, only=wanted, stream=stream).go()
            return await Execution(self, prepared, hold=hold, stream=stream).go()

        if tracing():
            from lowtide.telemetry.runs import traced_run

            end = await traced_run(
                prepared.run_id,
                actor=self.actor.name,
                provider=self.actor.configuration.provider,
                gen_ai_provider=self.actor.provider(self._mode()).telemetry_name(),
                mode=self.mode,
                items=len(prepared.to_send),
                go=go,
            )
        else:
            end = await go()
        notifier = notifier_for(
            self.actor.configuration.batch.notify, self.actor.clock, outbox=async_ledger(self.actor.ledger)
        )
        if notifier is not None:  # each go's end its own notice
            subject = f"{prepared.run_id}@{self.actor.clock.now()}"
            await notifier.send("run.ended", run_notice(end.report, self.actor.name), subject=subject)
        return end

    def _mode(self) -> BatchProcessingMode:
        return BatchProcessingMode.LIVE if self.mode == "live" else BatchProcessingMode.BATCH

    def record(self) -> str:
        """Record the run and all its items in the ledger, as `run()` does first, and return its id.

        Nothing is sent: a program can hand the id on (to `lowtide status`, to a later `run`) before running it.
        """
        checked = self._check(write=True)
        check_owned(self._run_id(checked), out=self.out, results_dir=self.results_dir)
        return self._prepare(checked, write=True).run_id

    def run_sync(self) -> RunResult:
        """`run` for scripts without an event loop."""
        return asyncio.run(self.run())
