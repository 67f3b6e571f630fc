"""A bulk run as the ledger knows it (`RunRecording`, the half of `BulkRun` that records it): every job checked
before anything is sent (a run the ledger holds of the same input and settings: only the jobs it still has to send),
the run found or recorded with all its items under its id, and its items sorted into final, out in a batch, and to
send (`Prepared`). `BulkRun` (`runner`) gives it its options and jobs, and runs what it prepared."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from lowtide.batching.backend import BatchBackend
from lowtide.bulk.inputs.files import FileInfo
from lowtide.bulk.inputs.jobs import Jobs
from lowtide.bulk.inputs.parser import check_jobs, refuse_held
from lowtide.bulk.outputs.destinations import check_outputs
from lowtide.bulk.planning.checks import (
    Checked,
    check_batch_jobs,
    check_jobs_to_send,
    check_live_jobs,
    fingerprint_of,
)
from lowtide.bulk.planning.requests import RunRequests
from lowtide.bulk.planning.route_plan import DEADLINE_OPTION, deadline_option
from lowtide.bulk.recorded.conversions import CONVERSIONS_OPTION, conversions_option, recall_conversions, resumed_run
from lowtide.bulk.recorded.identity import INPUT_OPTION, fingerprint_settings, input_key, known_run, qualified
from lowtide.bulk.recorded.items import NewItems
from lowtide.bulk.recorded.sorting import sized_for, sort_items
from lowtide.bulk.running.definition import Prepared
from lowtide.bulk.running.live_options import AbortMode
from lowtide.errors import ConfigurationError, LedgerError
from lowtide.ledger.runs import RunRecord
from lowtide.routing.deadlines import Deadline

__all__ = ["RunMode", "RunRecording"]

RunMode = Literal["batch", "live"]


class RunRecording(RunRequests):
    """How a bulk run is checked, found or recorded in the ledger, and sorted: the settings it records are `BulkRun`'s,
    set by its constructor."""

    run_id: str | None
    mode: RunMode
    max_parallel_batches: int
    time_limit: float | None
    cancel_grace: float
    results_dir: Path | None
    out: Path | None
    sources: list[tuple[Path, str]]
    """The files the run reads (with what each is, in the user's words): never written over."""
    abort_on: frozenset[str]
    abort_mode: AbortMode
    post_process_timeout: float | None
    deadline: Deadline | None
    _files: Mapping[Path, FileInfo]
    """The run's files as its last check found them (a dry run names those it converts)."""
    _held: dict[int, list[str]]
    """A resumed run's file problems by job index (`check_jobs`), refused for the jobs it still has to send."""
    _read: tuple[Jobs, int, str] | None
    """The jobs `add_jobs` read from one input, how many, and the input's digest: while they are still the run's jobs,
    the run is known by it (`_input_key`)."""

    def _check(self, *, write: bool, known: bool = True) -> Checked:
        """Check every job (nothing is sent before all pass): its file, its params, its cost and size. A run the ledger
        holds of the same input and settings (`known`: looked for) has only its jobs still to send checked, once
        `_prepare` has found them (`Checked.to_send`): the others were checked before they were sent."""
        resumed = self._resumed() if write else None
        ledger = self.actor.existing_ledger() if resumed is not None else None
        if ledger is not None:  # a resume's converted texts read back: no file already sent is converted again
            recall_conversions(ledger, resumed)
        # Files there and of a kind the API takes, ids unique: before anything is sent. A resume's file problems are
        # held until its jobs still to send are known (`_prepare`): a file sent before is in the ledger already.
        self._held = {}
        files = check_jobs(self.jobs, held=self._held if write else None)
        if self._held and resumed is None and self._resumed(derive=True) is None:
            refuse_held(self._held, sorted(self._held), self.jobs)
        self._files = files
        backend: BatchBackend | None = None
        if write:  # a dry run needs no client (nor a key), and writes nothing: it sends nothing
            sent = ((path, "a file a job sends") for path in files)
            check_outputs(out=self.out, results_dir=self.results_dir, inputs=[*self.sources, *sent])
            _ = self.actor.ledger  # opened (made, if new) now: a ledger that cannot be is said before any call
            if self.mode == "batch":
                backend = self.actor.batch_backend("bulk runs (durable batch mode)")
        if self.mode == "live":
            return check_live_jobs(self, files, write=write)
        plain = self._plain = self._plain_jobs()
        record = self._known_run() if write and known else None
        if record is not None:
            fingerprint = record.fingerprint
            return Checked(
                backend, fingerprint, [], None, [], [],
                to_send=lambda indexes: check_jobs_to_send(
                    self, files, plain, indexes, backend=backend, fingerprint=fingerprint
                ),
            )  # fmt: skip
        return check_batch_jobs(self, files, plain, backend=backend, write=write)

    def _resumed(self, *, derive: bool = False) -> RunRecord | None:
        """The ledger's run these jobs resume, if any (`conversions.resumed_run`; a ledger that cannot be opened knows
        none here: it says why when the run opens it, after the input's check)."""
        try:
            ledger = self.actor.existing_ledger()
            if ledger is None:
                return None
            key = self._input_key()
            return resumed_run(ledger, self.run_id, key, self.jobs, lambda: fingerprint_of(self), derive=derive)
        except (ConfigurationError, LedgerError):
            return None

    def _known_run(self) -> RunRecord | None:
        """The run the ledger holds of this input and these settings, known by their digest (`_input_key`), if any."""
        key = self._input_key()
        if key is None:
            return None
        return known_run(self.actor.ledger.run_store, self.run_id, key, len(self.jobs))

    def _input_key(self) -> str | None:
        """The digest of the run's input (as `add_jobs` was given it) and of its settings, while its jobs are still
        those read from it."""
        read = self._read
        if read is None or read[0] is not self.jobs or read[1] != len(self.jobs):
            return None
        return input_key(self.fingerprint_settings(), read[2])

    def _recorded(self, checked: Checked) -> bool:
        """Whether the ledger holds this run already, made of these jobs and settings."""
        record = self.actor.ledger.run_store.run(self._run_id(checked))
        return record is not None and record.fingerprint == checked.fingerprint

    def _prepare(self, checked: Checked, *, write: bool, hold: bool = True) -> Prepared:
        """Find or record the run of checked jobs, and sort its items (`hold`: the go holds its results)."""
        if checked.unpriced is not None:
            raise checked.unpriced
        backend, fingerprint, sizes = checked.backend, checked.fingerprint, checked.sizes
        run_id = self._run_id(checked)
        ledger = self.actor.ledger
        store = ledger.run_store
        record = store.run(run_id)
        if record is not None and record.fingerprint != fingerprint:
            raise ConfigurationError(
                f"Run {run_id!r} in {ledger.location} was made with other inputs or actor settings; resume it with the"
                " same ones, or give this run a new id.",
                field="run_id",
            )
        if record is None and checked.to_send is not None:  # known a moment ago, no longer: every job checked
            return self._prepare(self._check(write=write, known=False), write=write, hold=hold)
        created = False
        if record is None and write:
            now = self.actor.clock.now()
            created = store.create(
                run_id,
                actor=self.actor.name,
                configuration=self.actor.configuration.model_dump(mode="json"),
                options=self._options(),
                fingerprint=fingerprint,
                items=NewItems(run_id, checked.jobs_json, self.jobs.id_of),  # made a chunk at a time
                now=now,
            )
            checked.jobs_json.clear()  # in the ledger now: 100,000 strings need not stay for the run's length
            record = store.run(run_id)
        # A run recorded just now has nothing final or out yet: its rows are not read back.
        read = record is not None and not created
        found = sort_items(store, run_id, len(self.jobs), read=read, rows_of_successes=self.mode == "live" or hold)
        refuse_held(self._held, found.to_send, self.jobs)  # a file still to send, gone or damaged since: refused
        keys = found.keys
        if checked.to_send is not None:  # the jobs still to send checked now, as they would have been first
            checked = checked.to_send(found.to_send)
            if checked.unpriced is not None:
                raise checked.unpriced
            sizes = checked.sizes
        # With the run id known, each size counts the job's own custom id instead of the stand-in.
        identity = ledger.identity()
        if self.mode == "batch":
            sizes = sized_for(sizes, keys, found.to_send, lambda key: self.codec.custom_id_for(key, identity))
        return Prepared(
            run_id, store, backend, keys, found.rows, found.finished, found.attach, found.to_send, found.spent, sizes,
            identity, stored=found.stored,
        )  # fmt: skip

    def _run_id(self, checked: Checked) -> str:
        """The run's id: the one given, else derived from its settings and jobs."""
        return self.run_id or f"run-{checked.fingerprint[:16]}"

    def fingerprint_settings(self) -> dict[str, Any]:
        """The run's settings that make it what it is (with its jobs, its fingerprint)."""
        return fingerprint_settings(
            self.actor.name,
            self.actor.configuration.model_dump(mode="json"),
            defaults=self.defaults,
            response_model=self.response_model,
            citations=self.citations,
            live=self.mode == "live",
        )

    def _options(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "response_model": qualified(self.response_model),
            "citations": self.citations,
            "items_per_batch": self.items_per_batch,
            "max_parallel_batches": self.max_parallel_batches,
            "max_cost_usd": str(self.max_cost_usd) if self.max_cost_usd is not None else None,
            "time_limit": self.time_limit,
            "cancel_grace": self.cancel_grace,
            "results_dir": str(self.results_dir.absolute()) if self.results_dir is not None else None,
            "out": str(self.out.absolute()) if self.out is not None else None,
            "mode": self.mode,
            "abort_on": sorted(self.abort_on),
            "abort_mode": self.abort_mode,
            "post_process_timeout": self.post_process_timeout,
            INPUT_OPTION: self._input_key(),
            CONVERSIONS_OPTION: conversions_option(self.jobs, self._files),
            DEADLINE_OPTION: deadline_option(self.deadline),
        }
