"""Vertex AI's batch prediction jobs (`/{version}/projects/{p}/locations/{l}/batchPredictionJobs`): create from a
JSONL file in Cloud Storage, get, list (paged, with a `create_time>=` or `display_name=` filter), cancel, delete. A
job is pending for the emulator's `processing_seconds`, then runs every line at once on the clock: each
`{"request": <GenerateContentRequest>}` line (any other field, such as `key`, kept) is answered by the Gemini
emulation's model (a job of `publishers/anthropic/models/...`: each `{"custom_id", "request": <Messages body>}` line
by a Claude model, `claude.py`), and the answers are written to
`<outputUriPrefix>/prediction-model-<time>/predictions.jsonl`, each line the input's fields, `response` and `status`
("" when answered; the error's message when not), as Vertex writes them. The emulator's reading where Vertex's
reference is silent: jobs are listed newest first; a row's error is its `status` text alone."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from typing import cast

from starlette.requests import Request

from lowtide.emulator.anthropic.backend import AnthropicBackend
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.errors import ERROR_STATUS, ApiError
from lowtide.emulator.core.http import Answer, read_json
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.gemini.catalogue import served
from lowtide.emulator.gemini.errors import GeminiError, invalid_argument, not_found, status_error
from lowtide.emulator.gemini.model import generate
from lowtide.emulator.gemini.request import read_call
from lowtide.emulator.vertex.claude import PUBLISHER, claude_answer, model_of
from lowtide.emulator.vertex.models import VERSIONS
from lowtide.emulator.vertex.storage import ObjectStore

__all__ = ["Job", "VertexJobs", "job_routes"]

_PLACE = "/{version}/projects/{project}/locations/{location}/batchPredictionJobs"
_ENDED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_PARTIALLY_SUCCEEDED"})
_PAGE = 100


def _time(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC).isoformat().replace("+00:00", "Z")


def _epoch(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _gs(uri: str) -> tuple[str, str]:
    """`gs://bucket/name` as (bucket, name); a 400 otherwise."""
    if not uri.startswith("gs://") or "/" not in uri[5:]:
        raise invalid_argument(f"Invalid Cloud Storage URI: {uri!r}.")
    bucket, _, name = uri[5:].partition("/")
    return bucket, name


@dataclass
class Job:
    """One batch prediction job."""

    name: str
    display_name: str
    model: str
    source: str
    output_prefix: str
    created: float
    state: str = "JOB_STATE_PENDING"
    ended: float | None = None
    output_directory: str | None = None
    stats: dict[str, str] = field(default_factory=dict[str, str])
    error: JsonObject | None = None
    fail_with: str | None = None

    def body(self) -> JsonObject:
        body: JsonObject = {
            "name": self.name,
            "displayName": self.display_name,
            "model": self.model,
            "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": [self.source]}},
            "outputConfig": {"predictionsFormat": "jsonl", "gcsDestination": {"outputUriPrefix": self.output_prefix}},
            "state": self.state,
            "createTime": _time(self.created),
            "updateTime": _time(self.ended or self.created),
        }
        if self.ended is not None:
            body["endTime"] = _time(self.ended)
        if self.output_directory is not None:
            body["outputInfo"] = {"gcsOutputDirectory": self.output_directory}
        if self.stats:
            body["completionStats"] = dict(self.stats)
        if self.error is not None:
            body["error"] = self.error
        return body


class VertexJobs:
    """The project's jobs, run on the emulator's clock, their files in `store`."""

    def __init__(self, shared: Shared, store: ObjectStore, claude: AnthropicBackend) -> None:
        self._shared = shared
        self._store = store
        self._claude = claude
        """The Claude models a job of `publishers/anthropic/models/...` runs on (`claude.py`)."""
        self.jobs: dict[str, Job] = {}
        self.created_custom_ids: dict[str, int] = {}
        self.created_batches = 0
        self._failing: list[str] = []

    def fail_jobs(self, times: int, message: str | None = None) -> None:
        """The next `times` jobs created end `JOB_STATE_FAILED` (an internal error, or `message`)."""
        self._failing += [message or "Internal error occurred. Please retry."] * times

    def reset(self) -> None:
        self.jobs.clear()
        self.created_custom_ids.clear()
        self.created_batches = 0
        self._failing.clear()

    def create(self, parent: str, body: JsonObject) -> Job:
        model = str(body.get("model") or "")
        if model.startswith(PUBLISHER):
            if self._claude.models.serves(model_of(model.removeprefix(PUBLISHER))) is None:
                raise not_found(f"Publisher Model `{model}` was not found.")
        else:
            served(model.rpartition("/")[2], self._shared.settings.extra_models, "v1beta1", "batchPredictionJobs")
        source = as_object(body.get("inputConfig")) or {}
        uris = (as_object(source.get("gcsSource")) or {}).get("uris")
        if not isinstance(uris, list) or len(cast("list[object]", uris)) != 1:
            raise invalid_argument("inputConfig.gcsSource.uris must name one JSONL file.")
        uri = str(cast("list[object]", uris)[0])
        bucket, name = _gs(uri)
        lines = self._lines(bucket, name)
        output = as_object(body.get("outputConfig")) or {}
        prefix = str((as_object(output.get("gcsDestination")) or {}).get("outputUriPrefix") or "")
        _gs(prefix.rstrip("/") + "/x")
        now = self._shared.clock.now()
        self.created_batches += 1
        job_id = str(1_000_000_000_000 + self.created_batches)
        job = Job(f"{parent}/batchPredictionJobs/{job_id}", str(body.get("displayName") or ""), model, uri, prefix, now)
        if self._failing:
            job.fail_with = self._failing.pop(0)
        for line in lines:
            key = _key(line)
            if isinstance(key, str):
                self.created_custom_ids[key] = self.created_custom_ids.get(key, 0) + 1
        self.jobs[job.name] = job
        return job

    def _lines(self, bucket: str, name: str) -> list[JsonObject]:
        try:
            data = self._store.get(bucket, name).data
        except GeminiError:
            raise GeminiError(400, f"Failed to read input file gs://{bucket}/{name}: it does not exist.") from None
        lines: list[JsonObject] = []
        for raw in data.splitlines():
            if raw.strip():
                line = as_object(json.loads(raw))
                if line is None or as_object(line.get("request")) is None:
                    raise invalid_argument("Each line of a batch's input is an object holding `request`.")
                lines.append(line)
        return lines

    def get(self, name: str) -> Job:
        job = self.jobs.get(name)
        if job is None:
            raise not_found(f"The BatchPredictionJob does not exist: {name}")
        self._advance(job)
        return job

    def listed(self, parent: str, filter_text: str) -> list[Job]:
        jobs = [self.get(name) for name in self.jobs if name.startswith(parent + "/")]
        jobs.sort(key=lambda job: job.created, reverse=True)
        return [job for job in jobs if _matches(job, filter_text)]

    def cancel(self, name: str) -> None:
        job = self.get(name)
        if job.state in _ENDED:
            raise GeminiError(400, f"The BatchPredictionJob {name} has already ended ({job.state}).")
        job.state = "JOB_STATE_CANCELLED"
        job.ended = self._shared.clock.now()
        job.stats = {"incompleteCount": str(self._count(job))}

    def delete(self, name: str) -> None:
        self.get(name)
        del self.jobs[name]

    def _count(self, job: Job) -> int:
        bucket, name = _gs(job.source)
        return len(self._lines(bucket, name))

    def _advance(self, job: Job) -> None:
        """Run a pending job whose time has come: every line at once."""
        now = self._shared.clock.now()
        if job.state in _ENDED or now < job.created + self._shared.settings.processing_seconds:
            return
        job.ended = now
        if job.fail_with is not None:
            job.state = "JOB_STATE_FAILED"
            job.error = {"code": 13, "message": job.fail_with}
            return
        bucket, name = _gs(job.source)
        rows: list[bytes] = []
        answered = failed = 0
        faults = self._shared.faults
        for index, line in enumerate(self._lines(bucket, name)):
            row = dict(line)
            key = _key(line)
            outcome = faults.outcome_for(key) if isinstance(key, str) else None
            try:
                if outcome is not None:  # a fault armed by key: the request fails as its kind says
                    code = ERROR_STATUS[outcome.error_type] if outcome.kind == "errored" else 504
                    raise status_error(code, outcome.message)
                row["response"] = self._answer(job, line, index, now)
                row["status"] = ""
                answered += 1
            except GeminiError as error:
                row["status"] = error.message
                failed += 1
            except ApiError as error:  # a Claude model's refusal, in the Anthropic emulation's terms
                row["status"] = error.message
                failed += 1
            row["processed_time"] = _time(now)
            rows.append(json.dumps(row, separators=(",", ":")).encode())
        out_bucket, out_prefix = _gs(job.output_prefix.rstrip("/") + "/x")
        folder = f"{out_prefix[:-1]}prediction-model-{_time(now).replace(':', '-')}"
        self._store.put(out_bucket, f"{folder}/predictions.jsonl", b"\n".join(rows) + b"\n", now=now)
        job.output_directory = f"gs://{out_bucket}/{folder}"
        job.stats = {"successfulCount": str(answered), "failedCount": str(failed)}
        job.state = "JOB_STATE_SUCCEEDED" if not failed else "JOB_STATE_PARTIALLY_SUCCEEDED"

    def _answer(self, job: Job, line: JsonObject, index: int, now: float) -> JsonObject:
        """A line's answer by the job's model: a Claude model's message, or a Gemini model's response."""
        if job.model.startswith(PUBLISHER):
            return claude_answer(self._claude, line["request"], job.model.removeprefix(PUBLISHER))
        model = served(job.model.rpartition("/")[2], self._shared.settings.extra_models, "v1", "generateContent")
        call = read_call(line["request"], model)
        answer = generate(call, f"{job.name.rpartition('/')[2]}-{index}", cache=self._shared.cache, now=now)
        return cast(JsonObject, answer)


def _key(line: JsonObject) -> object:
    """What names a line: Gemini's `key`, or a Claude line's `custom_id`."""
    return line.get("key", line.get("custom_id"))


def _matches(job: Job, filter_text: str) -> bool:
    """The filters lowtide and the SDK's users write: `display_name="..."`, `create_time>="..."` (ANDed)."""
    for clause in filter(None, (part.strip() for part in filter_text.split(" AND "))):
        if clause.startswith("display_name="):
            if job.display_name != clause.partition("=")[2].strip('"'):
                return False
        elif clause.startswith("create_time>="):
            if job.created < _epoch(clause.partition(">=")[2].strip('"')):
                return False
        else:
            raise invalid_argument(f"The emulator does not read the filter {clause!r}.")
    return True


def job_routes(jobs: VertexJobs) -> list[RouteRow]:
    """The job routes under each version, named `vertex.batches.*`."""
    api = _Jobs(jobs)
    rows: list[RouteRow] = []
    for version in VERSIONS:
        place = _PLACE.replace("{version}", version)
        rows += [
            (place, "POST", "vertex.batches.create", api.create),
            (place, "GET", "vertex.batches.list", api.list),
            (f"{place}/{{job_id}}:cancel", "POST", "vertex.batches.cancel", api.cancel),
            (f"{place}/{{job_id}}", "GET", "vertex.batches.get", api.get),
            (f"{place}/{{job_id}}", "DELETE", "vertex.batches.delete", api.delete),
        ]
    return rows


def _parent(request: Request) -> str:
    params = request.path_params
    return f"projects/{params['project']}/locations/{params['location']}"


def _name(request: Request) -> str:
    return f"{_parent(request)}/batchPredictionJobs/{request.path_params['job_id']}"


class _Jobs:
    def __init__(self, jobs: VertexJobs) -> None:
        self._jobs = jobs

    async def create(self, request: Request) -> Answer:
        body = as_object(await read_json(request, 1024 * 1024)) or {}
        return self._jobs.create(_parent(request), body).body()

    async def list(self, request: Request) -> Answer:
        query = request.query_params
        jobs = self._jobs.listed(_parent(request), query.get("filter", ""))
        size = min(max(int(query.get("pageSize") or _PAGE), 1), _PAGE)
        token = query.get("pageToken")
        start = int(token) if token and token.isdigit() else 0
        page: JsonObject = {"batchPredictionJobs": [job.body() for job in jobs[start : start + size]]}
        if start + size < len(jobs):
            page["nextPageToken"] = str(start + size)
        return page

    async def get(self, request: Request) -> Answer:
        return self._jobs.get(_name(request)).body()

    async def cancel(self, request: Request) -> Answer:
        self._jobs.cancel(_name(request))
        return {}

    async def delete(self, request: Request) -> Answer:
        self._jobs.delete(_name(request))
        return {"name": _name(request), "done": True}
