"""Mistral's files and batch jobs, one method per route and free of HTTP, on the emulator's clock, settings and
faults. Raises `MistralError`.

`created_custom_ids` counts, for every job created whose input could be read, one per request custom id in it (a
request sent in two jobs counts 2): the exactly-once evidence, as the other emulations keep it; `created_batches`
counts every job created. `fail_jobs(n)` makes the next `n` jobs created end `FAILED` when their queued time ends."""

from __future__ import annotations

import datetime
import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping

from lowtide.emulator.core.account import AccountBackend
from lowtide.emulator.core.emulation import Shared
from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.faults import garbled_line
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, compact, is_int, jsonl_objects
from lowtide.emulator.core.order import unrelated_order
from lowtide.emulator.mistral.catalogue import served
from lowtide.emulator.mistral.chat import complete, outcome_of, read_chat
from lowtide.emulator.mistral.errors import MistralError, invalid, not_found, validation
from lowtide.emulator.mistral.files import MistralFile, MistralFileStore, render_file
from lowtide.emulator.mistral.jobs import MistralJob, Row, render_job

__all__ = ["ENDPOINT", "MAX_FILE_BYTES", "MAX_JOB_REQUESTS", "MistralBackend", "number"]

ENDPOINT = "/v1/chat/completions"
MAX_JOB_REQUESTS = 100_000
MAX_FILE_BYTES = 512 * 1024 * 1024
_MAX_TIMEOUT_HOURS = 168
_PURPOSES = ("batch", "fine-tune", "ocr", "audio")
_LIST_KEYS = frozenset(
    {"page", "page_size", "model", "agent_id", "metadata", "created_after", "created_by_me", "status", "order_by"}
)
_ENDED = ("SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED")


class MistralBackend(AccountBackend):
    largest_file = MAX_FILE_BYTES

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.files = MistralFileStore()
        self.jobs: dict[str, MistralJob] = {}
        self._failing: list[str] = []

    def reset(self) -> None:
        super().reset()
        self.files.clear()
        self.jobs.clear()
        self._failing.clear()

    def fail_jobs(self, times: int = 1, message: str = "Internal error while processing the batch job.") -> None:
        self._failing.extend([message] * times)

    # -- chat ----------------------------------------------------------------------------------------------------

    def chat(self, body: object, request_id: str) -> JsonObject:
        call = read_chat(body, self._shared.settings.extra_models)
        return complete(call, f"cmpl-{request_id[-24:]}", self.now())

    # -- files ---------------------------------------------------------------------------------------------------

    def upload(self, filename: str, content: bytes, purpose: str | None) -> JsonObject:
        if purpose not in _PURPOSES:
            raise validation(["purpose"], f"Input should be {', '.join(repr(name) for name in _PURPOSES)}")
        stored = MistralFile(str(uuid.uuid4()), filename, purpose, self.now(), content=content)
        self.files.add(stored)
        return render_file(stored)

    def list_files(self, page: int, page_size: int, purpose: str | None) -> JsonObject:
        self._settle_ended()
        chosen = [stored for stored in reversed(self.files.oldest_first()) if purpose in (None, stored.purpose)]
        shown = chosen[page * page_size : (page + 1) * page_size]
        return {"object": "list", "data": [render_file(stored) for stored in shown], "total": len(chosen)}

    def get_file(self, file_id: str) -> JsonObject:
        self._settle_ended()
        return render_file(self.files.find(file_id))

    def delete_file(self, file_id: str) -> JsonObject:
        self._settle_ended()
        self.files.delete(file_id)
        return {"id": file_id, "object": "file", "deleted": True}

    def download(self, file_id: str) -> Iterator[bytes]:
        self._settle_ended()
        return self.files.find(file_id).pieces()

    # -- jobs ----------------------------------------------------------------------------------------------------

    def create_job(self, body: object) -> JsonObject:
        spec = as_object(body)
        if spec is None:
            raise validation([], "Input should be a valid dictionary")
        unknown = sorted(set(spec) - {"input_files", "requests", "endpoint", "model", "agent_id", "metadata",
                                       "timeout_hours"})  # fmt: skip
        if unknown:
            raise validation([unknown[0]], "Extra inputs are not permitted", "extra_forbidden")
        if spec.get("endpoint") != ENDPOINT:
            raise invalid(f"The emulator runs batch jobs of {ENDPOINT} only, not {spec.get('endpoint')!r}.")
        served(spec.get("model"), self._shared.settings.extra_models)
        metadata = _metadata(spec.get("metadata"))
        hours = spec.get("timeout_hours", 24)
        if not is_int(hours) or not 1 <= hours <= _MAX_TIMEOUT_HOURS:
            raise validation(["timeout_hours"], f"timeout_hours must be from 1 to {_MAX_TIMEOUT_HOURS}")
        files = spec.get("input_files")
        inline = spec.get("requests")
        if (files is None) == (inline is None):
            raise invalid("Give either input_files or requests, not both nor neither.")
        errors: list[JsonObject] = []
        requests: list[tuple[str, JsonObject]] = []
        if inline is not None:
            requests = _inline(inline)
            input_files: list[str] = []
        else:
            input_files = [str(name) for name in as_array(files) or []]
            if not input_files:
                raise validation(["input_files"], "List should have at least 1 item")
            for file_id in input_files:
                stored = self.files.get(file_id)
                if stored is None:
                    raise not_found(f"File {file_id} not found")
                read, failure = _read_file(b"".join(stored.pieces()))
                requests.extend(read)
                if failure is not None:
                    errors.append({"message": failure, "count": 1})
        if len(requests) > MAX_JOB_REQUESTS:
            raise invalid(f"A batch job holds at most {MAX_JOB_REQUESTS} requests; this one has {len(requests)}.")
        if not errors and len({custom_id for custom_id, _ in requests}) < len(requests):
            errors.append({"message": "Duplicate custom_id in the batch input.", "count": 1})
        if not errors and self._failing:
            errors.append({"message": self._failing.pop(0), "count": 1})
        settings = self._shared.settings
        job = MistralJob(
            id=str(uuid.uuid4()),
            created_at=self.now(),
            model=str(spec.get("model")),
            endpoint=ENDPOINT,
            metadata=metadata,
            requests=requests,
            input_files=input_files,
            inline=inline is not None,
            timeout_hours=hours,
            processing_seconds=settings.processing_seconds,
            cancel_seconds=settings.cancel_seconds,
            errors=errors,
        )
        self.jobs[job.id] = job
        self.created_batches += 1
        if not errors:
            self.created_custom_ids.update(custom_id for custom_id, _ in requests)
        # The create's answer shows the job queued even when it is due to end at once, as the API's does.
        return render_job(job, job.created_at, rows=None, files=(None, None), status="QUEUED")

    def get_job(self, job_id: str) -> JsonObject:
        return self._render(self._job(job_id))

    def list_jobs(self, query: Mapping[str, str], statuses: list[str]) -> JsonObject:
        page = number(query.get("page"), 0, "page")
        size = number(query.get("page_size"), 100, "page_size")
        wanted = {key: value for key, value in query.items() if key not in _LIST_KEYS}
        if "metadata" in query:
            try:
                given = as_object(json.loads(query["metadata"]))
            except ValueError:
                given = None
            if given is None:
                raise validation(["metadata"], "Input should be a valid dictionary")
            wanted.update({str(k): str(v) for k, v in given.items()})
        since = _moment(query.get("created_after"))
        model = query.get("model")
        chosen: list[MistralJob] = []
        for job in sorted(self.jobs.values(), key=lambda held: held.created_at, reverse=True):
            if since is not None and job.created_at < since:
                continue
            if model is not None and job.model != model:
                continue
            if any((job.metadata or {}).get(key) != value for key, value in wanted.items()):
                continue
            if statuses and job.status(self.now()) not in statuses:
                continue
            chosen.append(job)
        if query.get("order_by") == "created":
            chosen.reverse()
        shown = chosen[page * size : (page + 1) * size]
        return {"object": "list", "data": [self._render(job) for job in shown], "total": len(chosen)}

    def cancel_job(self, job_id: str) -> JsonObject:
        job = self._job(job_id)
        job.cancel(self.now(), self._shared.settings.cancel_seconds)
        return self._render(job)

    def delete_job(self, job_id: str) -> JsonObject:
        self._job(job_id)
        del self.jobs[job_id]
        return {"id": job_id, "object": "batch", "deleted": True}

    # -- internals -----------------------------------------------------------------------------------------------

    def _job(self, job_id: str) -> MistralJob:
        job = self.jobs.get(job_id)
        if job is None:
            raise not_found(f"Batch job {job_id} not found")
        return job

    def rows(self, job: MistralJob) -> list[Row]:
        if job.rows is None:
            job.rows = [self._row(job, index) for index in range(len(job.requests))]
        return job.rows

    def _row(self, job: MistralJob, index: int) -> Row:
        custom_id, body = job.requests[index]
        faults = self._shared.faults
        if faults.is_lost(custom_id):
            return Row()
        try:
            call = read_chat(body, self._shared.settings.extra_models, model=job.model, in_batch=True)
            outcome = faults.outcome_for(custom_id) or outcome_of(call)
            if outcome is not None and outcome.kind == "canceled":
                return Row(error={"message": "The request was cancelled.", "code": "cancelled"})
            if outcome is not None and outcome.kind == "expired":
                return Row(error={"message": "The request timed out.", "code": "timeout"})
            if outcome is not None:
                raise MistralError(ERROR_STATUS[outcome.error_type], outcome.error_message)
            digest = hashlib.blake2b(f"{job.id}\x1f{index}".encode(), digest_size=12).hexdigest()
            return Row(status=200, body=complete(call, f"cmpl-{digest}", job.created_at))
        except MistralError as error:
            return Row(status=error.status, body=error.body(f"req-{job.id[:8]}-{index}"))

    def _files_of(self, job: MistralJob, now: float) -> tuple[str | None, str | None]:
        if job.status(now) not in _ENDED or job.errors:
            return None, None
        rows = self.rows(job)
        done = job.processed_count(job.ended_at)
        answered = [index for index in range(done) if rows[index].status == 200]
        failed = [index for index in range(done) if rows[index].status not in (200, None) or rows[index].error]
        names: list[str | None] = []
        for which, chosen in (("output", answered), ("error", failed)):
            if not chosen:
                names.append(None)
                continue
            file_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"mistral-job:{job.id}:{which}"))
            if self.files.get(file_id) is None and file_id not in self.files.deleted:
                self.files.add(
                    MistralFile(
                        file_id,
                        f"{job.id}_{which}.jsonl",
                        "batch",
                        job.ended_at,
                        lines=lambda job=job, chosen=chosen: self._lines(job, chosen),
                    )
                )
            names.append(file_id)
        return names[0], names[1]

    def _lines(self, job: MistralJob, chosen: list[int]) -> Iterator[bytes]:
        """The lines of an output or error file, in an order unrelated to the requests' and never theirs when there
        are two or more (readers join on `custom_id`; a scenario checking that must not pass by chance)."""
        rows = self.rows(job)
        faults = self._shared.faults

        for index in unrelated_order(chosen, lambda index: f"{job.id}\x1f{job.requests[index][0]}"):
            custom_id = job.requests[index][0]
            row = rows[index]
            line: JsonObject = {"id": f"batch-{job.id[:8]}-{index}", "custom_id": custom_id}
            if row.error is not None:
                line["response"] = None
                line["error"] = row.error
            else:
                line["response"] = {"status_code": row.status, "body": row.body}
                line["error"] = None
            encoded = (compact(line) + "\n").encode()
            garbled = faults.garbled(custom_id)
            if garbled is not None:
                unknown = compact({"custom_id": custom_id, "outcome": "teleported"}) + "\n"
                encoded = garbled_line(encoded, garbled, unknown_shape=unknown.encode())
            yield encoded

    def _render(self, job: MistralJob) -> JsonObject:
        now = self.now()
        started = now >= job.started_at and not job.errors
        rows = self.rows(job) if started else None
        return render_job(job, now, rows=rows, files=self._files_of(job, now))

    def _settle_ended(self) -> None:
        """Give every ended job its output and error files, for the Files routes."""
        now = self.now()
        for job in list(self.jobs.values()):
            self._files_of(job, now)


def _metadata(value: object) -> dict[str, str] | None:
    if value is None:
        return None
    held = as_object(value)
    if held is None or not all(isinstance(item, str) for item in held.values()):
        raise validation(["metadata"], "Input should be a valid dictionary of strings")
    return {key: str(item) for key, item in held.items()}


def _inline(value: object) -> list[tuple[str, JsonObject]]:
    items = as_array(value)
    if not items:
        raise validation(["requests"], "List should have at least 1 item")
    requests: list[tuple[str, JsonObject]] = []
    for index, item in enumerate(items):
        held = as_object(item) or {}
        body = as_object(held.get("body"))
        if body is None:
            raise validation(["requests", index, "body"], "Field required")
        custom_id = held.get("custom_id")
        requests.append((str(custom_id) if custom_id is not None else str(index), body))
    return requests


def _read_file(content: bytes) -> tuple[list[tuple[str, JsonObject]], str | None]:
    """The requests of a JSONL input file, or the reason it cannot be run (a line that is not a request)."""
    requests: list[tuple[str, JsonObject]] = []
    for number, line in jsonl_objects(content):
        body = as_object(line.get("body")) if line is not None else None
        if line is None or body is None:
            return requests, f"Line {number} of the input file is not a request (custom_id and body)."
        custom_id = line.get("custom_id")
        requests.append((str(custom_id) if custom_id is not None else str(number - 1), body))
    if not requests:
        return requests, "The input file holds no request."
    return requests, None


def number(raw: str | None, default: int, name: str) -> int:
    """A whole number of a query parameter (`page`, `page_size`), or Mistral's 422."""
    if raw is None:
        return default
    if not raw.isdigit():
        raise validation([name], "Input should be a valid integer")
    return int(raw)


def _moment(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise validation(["created_after"], "Input should be a valid datetime") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()
