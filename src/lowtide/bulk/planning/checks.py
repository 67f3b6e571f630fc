"""A bulk run's jobs checked before anything is sent: each job's request built (its file not read), its text valid
Unicode, its size as a batch request, its price where a cost limit needs it, the provider's pre-send checks noted
once per distinct model, max_tokens and tools (for a live run, per distinct settings: a live job's parameters are
not encoded here), and the run's fingerprint (the run's settings and every job's JSON), which says whether a run id
given again names the same run.

Prompt-only jobs are checked through the run's template (`PlainJobs`): one request built and encoded, each job
adding its prompt's JSON. Each job's size is kept, with the probe it belongs to: once the provider has given each
probe's limits (`Provider.input_limits`), every job is measured against them without asking the API
(`preflight`), and only one that may not fit is checked whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from array import array
from collections.abc import Callable, Generator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lowtide.batching.backend import BatchBackend, BatchCodec
from lowtide.bulk.inputs.jobs import FileInfo, Job, Jobs
from lowtide.bulk.planning.plain_jobs import PlainJobs, job_json
from lowtide.errors import ConfigurationError
from lowtide.ledger.store import stored_json
from lowtide.messages.limits import InputLimits, bounded_by_bytes
from lowtide.messages.unicode import check_text
from lowtide.types import ActorRequest

if TYPE_CHECKING:
    from lowtide.provider import Provider

__all__ = [
    "STAND_IN_ID",
    "Checked",
    "CheckedRun",
    "check_batch_jobs",
    "check_jobs_to_send",
    "check_live_jobs",
    "fingerprint_of",
    "named",
    "named_id",
    "params_text",
    "preflight",
]

STAND_IN_ID = "x" * 64
"""The longest custom id, standing in for a job's before the run id is known."""


@dataclass
class Checked:
    """Jobs that passed every check: the backend to send them with (None for a dry run), the run's fingerprint, one
    request for each distinct model, max_tokens and tools among them (with the index of its first job), and each
    job's estimated size."""

    backend: BatchBackend | None
    fingerprint: str
    probes: list[tuple[int, ActorRequest]]
    unpriced: ConfigurationError | None
    """A cost limit with a job of unknown price: raised once the jobs' models are checked."""
    sizes: MutableSequence[int]
    """Each job's estimated size as a batch request (`check_jobs_to_send`: of the jobs to send; the others' 0)."""
    jobs_json: list[str]
    """Each job's JSON, as the ledger keeps it (empty for a dry run, which writes nothing)."""
    probe_of: list[int] = field(default_factory=list[int])
    """For each job, the place in `probes` of the request whose limits it is measured against."""
    whole: list[int] = field(default_factory=list[int])
    """Jobs to check whole (`Provider.preflight`) whatever their size: their bytes do not bound their tokens."""
    bytes_only: list[int] = field(default_factory=list[int])
    """Jobs measured against the byte limit alone: a PDF's tokens are counted by the API when it is sent."""
    added: bool = False
    """Whether `sizes` are what each job adds to its probe's body (a live run's jobs, not encoded here) rather than
    whole request sizes."""
    to_send: Callable[[Sequence[int]], Checked] | None = None
    """A run the ledger holds, known again by the digest of its input and settings, its jobs not checked yet: given
    the jobs still to send, checks them (`check_jobs_to_send`). `sizes` and `probes` are empty till then."""


class CheckedRun(Protocol):
    """What the checks need of a run (`BulkRun`)."""

    jobs: Jobs
    max_cost_usd: Decimal | None

    @property
    def codec(self) -> BatchCodec: ...

    def max_bytes(self) -> int: ...

    def worst_case(self, params: Mapping[str, Any] | str) -> Decimal | None: ...

    def live_worst_case(self, request: ActorRequest) -> Decimal | None: ...

    def job_request(self, job: Job, *, with_content: bool = True) -> ActorRequest: ...

    def plain_prompt(self, index: int) -> str | None: ...

    def fingerprint_settings(self) -> dict[str, Any]: ...


def check_batch_jobs(
    run: CheckedRun,
    files: Mapping[Path, FileInfo],
    plain: PlainJobs | None,
    *,
    backend: BatchBackend | None,
    write: bool,
) -> Checked:
    """Every job of a batch run checked (`plain`: the template of its prompt-only jobs, if one could be made)."""
    checked = Checked(backend, "", [], None, [], [])
    kept = _Kept(run, checked, write=write)
    each = _BatchJob(run, files, plain, checked)
    for index in range(len(run.jobs)):
        size, job_text = each.check(index, text=True)
        kept.job(job_text, size)
    return kept.done()


def fingerprint_of(run: CheckedRun) -> str:
    """A batch run's fingerprint alone, as `check_batch_jobs` makes it (every job's JSON), nothing checked or sized."""
    kept = _Kept(run, Checked(None, "", [], None, [], []), write=False)
    for job in run.jobs:
        kept.job(job_json(job), 0)
    return kept.done().fingerprint


def check_jobs_to_send(
    run: CheckedRun,
    files: Mapping[Path, FileInfo],
    plain: PlainJobs | None,
    indexes: Sequence[int],
    *,
    backend: BatchBackend | None,
    fingerprint: str,
) -> Checked:
    """The jobs of `indexes` checked as `check_batch_jobs` checks each, the others not: a run the ledger holds already,
    known again by the digest of its input and settings (`fingerprint`, its recorded one), whose other jobs were sent
    (and checked before they were). The sizes of the others are 0, never asked for; no job's JSON is made."""
    checked = Checked(backend, fingerprint, [], None, array("q", bytes(8 * len(run.jobs))), [])
    each = _BatchJob(run, files, plain, checked)
    for index in indexes:
        checked.sizes[index], _ = each.check(index, text=False)
    return checked


class _BatchJob:
    """One job of a batch run checked: its prompt's text, its request (built through the run's template when it is a
    prompt alone), its price where a cost limit needs it, its size against a batch's; the provider's checks noted."""

    def __init__(
        self, run: CheckedRun, files: Mapping[Path, FileInfo], plain: PlainJobs | None, checked: Checked
    ) -> None:
        self._run, self._files, self._plain, self._checked = run, files, plain, checked
        self._probes = _Probes(checked)
        self._plain_probe = _probe(plain.params.with_prompt("-")) if plain is not None else ""
        self._max_bytes = run.max_bytes()

    def check(self, index: int, *, text: bool) -> tuple[int, str]:
        """Job `index`'s size as a batch request, and (`text`) its JSON as the ledger keeps it."""
        run, plain, checked = self._run, self._plain, self._checked
        item_id = run.jobs.id_of(index)
        prompt = run.plain_prompt(index) if plain is not None else None
        if plain is not None and prompt is not None:
            if not prompt.isascii():
                _check_prompt_text(prompt, index, item_id)
            # The run's template with this prompt: built, encoded and checked as a whole once.
            params_json = plain.params_json(prompt)
            self._probes.note(self._plain_probe, index, plain.params.request)
            if run.max_cost_usd is not None and checked.unpriced is None and run.worst_case(params_json) is None:
                checked.unpriced = _unpriced(index, item_id, plain.model)
            size = run.codec.request_size(STAND_IN_ID, params_json)
            job_text = plain.job_json(prompt, item_id) if text else ""
        else:
            job = run.jobs[index]
            size, job_text, unpriced_job = _check_job(
                run, index, job, self._files, self._probes, price=checked.unpriced is None
            )
            checked.unpriced = checked.unpriced or unpriced_job
        if size > self._max_bytes:
            raise ConfigurationError(
                f"Job {index}{named_id(item_id)} is about {size:,} bytes as a batch request, more than a batch may"
                f" hold ({self._max_bytes:,}).",
                field="inputs",
            )
        return size, job_text


def check_live_jobs(run: CheckedRun, files: Mapping[Path, FileInfo], *, write: bool) -> Checked:
    """A live run's jobs: each request built (its files read later, as it is sent) and priced for the limit. The
    provider's checks are noted once per distinct settings (everything but the conversation), and each job's size
    is what its JSON adds to its probe's."""
    checked = Checked(None, "", [], None, [], [], added=True)
    kept = _Kept(run, checked, write=write)
    probes = _Probes(checked)
    for index, job in enumerate(run.jobs):
        if job.prompt is not None and not job.prompt.isascii():
            _check_prompt_text(job.prompt, index, job.id)
        try:
            request = run.job_request(job, with_content=False)
        except ConfigurationError as exc:
            raise ConfigurationError(f"Job {index}{named(job)}: {exc}", field=exc.field) from None
        # Jobs differ in their settings only by their overrides (the rest is the run's): one probe for each.
        probes.note(stored_json(job.overrides) if job.overrides else "", index, request)
        if run.max_cost_usd is not None and checked.unpriced is None and run.live_worst_case(request) is None:
            checked.unpriced = _unpriced(index, job.id, request.model)
        job_text = job_json(job)
        file = files.get(job.file) if job.file is not None else None  # (none: a resume's job sent before)
        _note_content(checked, index, request, file)
        kept.job(job_text, len(job_text) + (_file_bytes(file) if file is not None else 0))
    return kept.done()


async def preflight(run: CheckedRun, checked: Checked, provider: Provider) -> None:
    """The provider's pre-send checks (which may ask its API), before the run is recorded: of each distinct request
    (`checked.probes`), then of each job against its probe's limits, measured without asking the API; only a job that
    may not fit (near its model's context window, or over the API's size) is checked whole."""
    limits: list[InputLimits] = []
    for index, request in checked.probes:
        with _job_named(run.jobs, index):
            await provider.preflight(request)
            limits.append(await provider.input_limits(request))
    whole = set(checked.whole)
    bytes_only = set(checked.bytes_only)
    for index, size in enumerate(checked.sizes):
        probe = limits[checked.probe_of[index]]
        if checked.added:
            size += probe.body_bytes
        if index in bytes_only:
            fits = probe.max_bytes is None or size <= probe.max_bytes
        else:
            fits = index not in whole and probe.fits(size)
        if not fits:
            with _job_named(run.jobs, index):
                await provider.preflight(run.job_request(run.jobs[index]))


@contextlib.contextmanager
def _job_named(jobs: Jobs, index: int) -> Generator[None]:
    """A `ConfigurationError` raised within, said of job `index`."""
    try:
        yield
    except ConfigurationError as exc:
        raise ConfigurationError(f"Job {index}{named(jobs[index])}: {exc}", field=exc.field) from None


class _Probes:
    """The distinct requests the provider checks, and which one each job is measured against."""

    def __init__(self, checked: Checked) -> None:
        self._checked = checked
        self._places: dict[str, int] = {}

    @property
    def checked(self) -> Checked:
        return self._checked

    def note(self, key: str, index: int, request: ActorRequest) -> None:
        place = self._places.get(key)
        if place is None:
            place = self._places[key] = len(self._checked.probes)
            self._checked.probes.append((index, request))
        self._checked.probe_of.append(place)


def _check_prompt_text(prompt: str, index: int, item_id: str | None) -> None:
    try:
        check_text(prompt, "prompt")
    except ConfigurationError as exc:
        raise ConfigurationError(f"Job {index}{named_id(item_id)}: {exc}", field=exc.field) from None


def _note_content(checked: Checked, index: int, request: ActorRequest, file: FileInfo | None) -> None:
    """Whether job `index` is measured as usual, checked whole, or by its bytes alone (a PDF's)."""
    if file is not None and file.kind == "pdf":
        checked.bytes_only.append(index)
    elif not bounded_by_bytes(request):
        checked.whole.append(index)


def _check_job(
    run: CheckedRun,
    index: int,
    job: Job,
    files: Mapping[Path, FileInfo],
    probes: _Probes,
    *,
    price: bool,
) -> tuple[int, str, ConfigurationError | None]:
    """A job the run's template does not make: its request built (files not read), the provider's checks noted once
    per model, max_tokens and tools; its estimated size, its JSON, and (`price`: looked for) why the cost limit cannot
    be kept."""
    if job.prompt is not None and not job.prompt.isascii():
        _check_prompt_text(job.prompt, index, job.id)
    try:
        request = run.job_request(job, with_content=False)
        params = run.codec.encode_request(request)
    except ConfigurationError as exc:
        raise ConfigurationError(f"Job {index}{named(job)}: {exc}", field=exc.field) from None
    # What the provider checks (model, max_tokens, tools) once per distinct combination, not per job.
    probes.note(_probe(params), index, request)
    file = files.get(job.file) if job.file is not None else None  # (none: a resume's job sent before)
    _note_content(probes.checked, index, request, file)
    unpriced = None
    if price and run.max_cost_usd is not None and run.worst_case(params) is None:
        # Raised once the provider has checked the model: a misspelt one is better told as such.
        unpriced = _unpriced(index, job.id, params.get("model"))
    size = _estimated_size(run.codec, params, file)
    return size, job_json(job), unpriced


class _Kept:
    """What the checks keep of each job: its size, its JSON (for the ledger; a dry run writes nothing), and the run's
    fingerprint, the digest of the run's settings and of every job's JSON."""

    def __init__(self, run: CheckedRun, checked: Checked, *, write: bool) -> None:
        self._digest = hashlib.sha256(stored_json(run.fingerprint_settings()).encode())
        self._checked = checked
        self._write = write

    def job(self, job_text: str, size: int) -> None:
        self._checked.sizes.append(size)
        self._digest.update(b"\x00" + job_text.encode())
        if self._write:
            self._checked.jobs_json.append(job_text)

    def done(self) -> Checked:
        self._checked.fingerprint = self._digest.hexdigest()
        return self._checked


def _estimated_size(codec: BatchCodec, params: Mapping[str, Any], file: FileInfo | None) -> int:
    """A job's size as a batch request before its file is read: PDFs and images travel as base64, a third larger."""
    size = codec.request_size(STAND_IN_ID, params_text(params))
    return size + _file_bytes(file) if file is not None else size


def _file_bytes(file: FileInfo) -> int:
    """What a file adds to a request: its text (a converted file's, its converted text), or its base64."""
    return file.size if file.kind in ("text", "converted") else -(-file.size // 3) * 4


def _probe(params: Mapping[str, Any]) -> str:
    """What the provider's pre-send checks look at in a request: they are made once per distinct one."""
    return stored_json({name: params.get(name) for name in ("model", "max_tokens", "tools")})


def _unpriced(index: int, item_id: str | None, model: object) -> ConfigurationError:
    return ConfigurationError(
        f"Job {index}{named_id(item_id)}: no price is known for model {model!r}, so the cost limit cannot be kept.",
        field="max_cost_usd",
    )


def named(job: Job) -> str:
    return named_id(job.id)


def named_id(item_id: str | None) -> str:
    return f" ({item_id})" if item_id else ""


def params_text(params: Mapping[str, Any]) -> str:
    """Params as JSON, to size them."""
    return json.dumps(params, separators=(",", ":"), ensure_ascii=False, default=str)
