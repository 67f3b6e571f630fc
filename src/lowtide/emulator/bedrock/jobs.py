"""Bedrock batch inference jobs (`ModelInvocationJob`): their life cycle, derived from the emulator's clock at every
read, their idempotent create (`clientRequestToken`), and the output they write to S3 when they end.

A job is `Submitted` for the first 5% of its `processing_seconds`, `Validating` to 10%, `Scheduled` to 20%, then
`InProgress` (its records finishing evenly spread, in order), then `Completed`, or `PartiallyCompleted` when a record
failed: so with `processing_seconds=0` it is done at once. A job whose input cannot be read (no such object, a line
that is not a record), holds fewer records than the account's minimum or more than its maximum, or was armed to fail
(`fail_jobs`) ends `Failed` when its validation ends, with its `message`. A stop makes it `Stopping`, then
`Stopped` `cancel_seconds` later. A job not done `timeoutDurationInHours` (24 by default) after its submission is
`Expired`. A job that completed, stopped or expired writes `<output>/<job id>/<input file>.out` (a line for each
record it processed, `modelOutput` or `error`) and `manifest.json.out`; a failed one writes nothing."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Literal

from lowtide.emulator.bedrock.converse import converse
from lowtide.emulator.bedrock.errors import AwsError, conflict, not_found, validation
from lowtide.emulator.bedrock.s3 import ObjectStore
from lowtide.emulator.core.faults import Faults, garbled_line
from lowtide.emulator.core.jsonutil import JsonObject, as_object, canonical, compact, jsonl_objects

__all__ = ["MAX_RECORDS", "MIN_RECORDS", "BedrockJob", "JobStatus", "JobStore", "Record", "iso", "render_job"]

MIN_RECORDS = 100
"""The account's default minimum of records per batch inference job (a service quota)."""
MAX_RECORDS = 50_000
"""The account's default maximum of records per batch inference job (a service quota)."""
_ACCOUNT = "123456789012"

JobStatus = Literal[
    "Submitted",
    "Validating",
    "Scheduled",
    "InProgress",
    "Completed",
    "PartiallyCompleted",
    "Failed",
    "Stopping",
    "Stopped",
    "Expired",
]


def iso(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _s3_parts(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


def _uri(body: JsonObject, outer: str, inner: str) -> str:
    config = as_object(as_object(body.get(outer)) or {})
    location = as_object((config or {}).get(inner)) or {}
    uri = location.get("s3Uri")
    return uri if isinstance(uri, str) else ""


@dataclass(frozen=True)
class Record:
    record_id: str
    model_input: JsonObject


@dataclass(frozen=True)
class Row:
    """How one record came out: answered (`output`), failed (`error`), or lost by a fault (neither)."""

    output: JsonObject | None = None
    error: JsonObject | None = None


@dataclass(eq=False)
class BedrockJob:
    job_id: str
    arn: str
    name: str
    model_id: str
    token: str
    fingerprint: str
    role_arn: str
    input_uri: str
    output_uri: str
    invocation_type: str
    timeout_hours: int
    created_at: float
    processing_seconds: float
    cancel_seconds: float
    records: list[Record] = field(default_factory=list[Record])
    failure: str | None = None
    cancel_at: float | None = None
    written: bool = False
    rows: list[Row] | None = None

    @property
    def validated_at(self) -> float:
        return self.created_at + 0.1 * self.processing_seconds

    @property
    def started_at(self) -> float:
        return self.created_at + 0.2 * self.processing_seconds

    @property
    def processed_at(self) -> float:
        return self.created_at + self.processing_seconds

    @property
    def expires_at(self) -> float:
        return self.created_at + self.timeout_hours * 3600.0

    def final_status(self) -> JobStatus:
        if self.failure is not None:
            return "Failed"
        if self.cancel_at is not None:
            return "Stopped"
        if self.processed_at > self.expires_at:
            return "Expired"
        return "PartiallyCompleted" if any(row.error is not None for row in self.rows or ()) else "Completed"

    @property
    def ended_at(self) -> float:
        if self.failure is not None:
            return self.validated_at
        if self.cancel_at is not None:
            return min(self.cancel_at + self.cancel_seconds, self.expires_at)
        return min(self.processed_at, self.expires_at)

    def status(self, now: float) -> JobStatus:
        if now >= self.ended_at:
            return self.final_status()
        if self.cancel_at is not None and now >= self.cancel_at:
            return "Stopping"
        if now < self.created_at + 0.05 * self.processing_seconds:
            return "Submitted"
        if now < self.validated_at:
            return "Validating"
        return "Scheduled" if now < self.started_at else "InProgress"

    def processed(self, now: float) -> int:
        """How many records, in order, have finished by `now` (none past a stop or the expiry)."""
        if self.failure is not None:
            return 0
        total = len(self.records)
        cutoff = min(now, self.cancel_at if self.cancel_at is not None else math.inf, self.expires_at)
        window = self.processed_at - self.started_at
        if window <= 0:
            return total if cutoff >= self.processed_at else 0
        return max(0, min(total, math.floor((cutoff - self.started_at) * total / window)))


class JobStore:
    """The account's jobs by id, in creation order, and what their creates' tokens made."""

    def __init__(self, objects: ObjectStore, faults: Faults) -> None:
        self._objects = objects
        self._faults = faults
        self.jobs: dict[str, BedrockJob] = {}
        self.tokens: dict[str, str] = {}
        self.failing: list[str] = []
        self.min_records = MIN_RECORDS
        self.max_records = MAX_RECORDS
        self.created_jobs = 0
        self.created_records: dict[str, int] = {}

    def reset(self) -> None:
        self.jobs.clear()
        self.tokens.clear()
        self.failing.clear()
        self.created_jobs = 0
        self.created_records.clear()

    def find(self, identifier: str) -> BedrockJob:
        job_id = identifier.rsplit("/", 1)[-1]
        job = self.jobs.get(job_id)
        if job is None or (identifier.startswith("arn:") and identifier != job.arn):
            raise not_found(f"The specified job {identifier} does not exist.")
        return job

    def create(
        self,
        body: JsonObject,
        *,
        region: str,
        now: float,
        processing: float,
        cancel: float,
        token: str,
        known_model: bool,
    ) -> BedrockJob:
        """The job `body` asks for; the one made before when `token` was used with the same parameters."""
        fingerprint = hashlib.sha256(
            canonical({k: v for k, v in body.items() if k != "clientRequestToken"}).encode()
        ).hexdigest()
        earlier = self.tokens.get(token)
        if earlier is not None:
            job = self.jobs[earlier]
            if job.fingerprint != fingerprint:
                raise conflict("The client request token was used by an earlier request with different parameters.")
            return job
        name, model, role = body.get("jobName"), body.get("modelId"), body.get("roleArn")
        input_uri = _uri(body, "inputDataConfig", "s3InputDataConfig")
        output_uri = _uri(body, "outputDataConfig", "s3OutputDataConfig")
        if not isinstance(name, str) or not name:
            raise validation("1 validation error detected: Value null at 'jobName' failed to satisfy constraint.")
        if not isinstance(role, str) or not role.startswith("arn:aws:iam::"):
            raise validation(f"The role ARN {role!r} is not valid.")
        if not isinstance(model, str) or not known_model:
            raise validation(f"The provided model identifier {model!r} is invalid or does not support batch inference.")
        for where, uri in (("inputDataConfig", input_uri), ("outputDataConfig", output_uri)):
            if not uri.startswith("s3://") or not _s3_parts(uri)[0]:
                raise validation(f"{where}.s3Uri: {uri!r} is not an S3 URI (s3://bucket/key).")
        if any(job.name == name for job in self.jobs.values()):
            raise conflict(f"A batch inference job named {name} already exists.")
        timeout = body.get("timeoutDurationInHours", 24)
        if not isinstance(timeout, int) or not 24 <= timeout <= 168:
            raise validation("timeoutDurationInHours must be between 24 and 168.")
        job_id = hashlib.blake2b(f"{token}\x1f{now}".encode(), digest_size=6).hexdigest()
        job = BedrockJob(
            job_id=job_id,
            arn=f"arn:aws:bedrock:{region}:{_ACCOUNT}:model-invocation-job/{job_id}",
            name=name,
            model_id=model,
            token=token,
            fingerprint=fingerprint,
            role_arn=role,
            input_uri=input_uri,
            output_uri=output_uri,
            invocation_type=str(body.get("modelInvocationType") or "InvokeModel"),
            timeout_hours=timeout,
            created_at=now,
            processing_seconds=processing,
            cancel_seconds=cancel,
        )
        self._read_input(job)
        if self.failing and job.failure is None:
            job.failure = self.failing.pop(0)
        self.jobs[job_id] = job
        self.tokens[token] = job_id
        self.created_jobs += 1
        for record in job.records:
            self.created_records[record.record_id] = self.created_records.get(record.record_id, 0) + 1
        return job

    def _read_input(self, job: BedrockJob) -> None:
        bucket, key = _s3_parts(job.input_uri)
        found = self._objects.find(bucket, key)
        if found is None:
            job.failure = f"The input {job.input_uri} could not be read: no such object."
            return
        for number, line in jsonl_objects(found.data):
            model_input = as_object(line.get("modelInput")) if line is not None else None
            if line is None or model_input is None:
                job.failure = f"Line {number} of {job.input_uri} is not a record (recordId, modelInput)."
                job.records = []
                return
            record_id = line.get("recordId")
            job.records.append(Record(str(record_id) if record_id else f"{number:011d}", model_input))
        count = len(job.records)
        if count < self.min_records:
            job.failure = (
                f"The input holds {count} record(s), fewer than the minimum of {self.min_records} records "
                "per batch inference job."
            )
        elif count > self.max_records:
            job.failure = (
                f"The input holds {count} records, more than the maximum of {self.max_records} records "
                "per batch inference job."
            )

    def stop(self, identifier: str, now: float) -> None:
        job = self.find(identifier)
        if job.status(now) not in ("Submitted", "Validating", "Scheduled", "InProgress"):
            raise validation(f"The job {job.arn} is {job.status(now)}: it cannot be stopped.")
        job.cancel_at = now

    def rows(self, job: BedrockJob) -> list[Row]:
        if job.rows is None:
            job.rows = [self._row(job, index, record) for index, record in enumerate(job.records)]
        return job.rows

    def _row(self, job: BedrockJob, index: int, record: Record) -> Row:
        if self._faults.is_lost(record.record_id):
            return Row()
        outcome = self._faults.outcome_for(record.record_id)
        if outcome is not None:
            code = 500 if outcome.kind != "errored" else {"rate_limit_error": 429}.get(outcome.error_type, 400)
            return Row(error={"errorCode": code, "errorMessage": outcome.error_message})
        try:
            response_id = hashlib.blake2b(f"{job.job_id}\x1f{index}".encode(), digest_size=12).hexdigest()
            return Row(output=converse(record.model_input, response_id))
        except AwsError as error:
            return Row(error={"errorCode": error.status, "errorMessage": error.message})

    def counts(self, job: BedrockJob, now: float) -> tuple[int, int, int]:
        """(processed, succeeded, errored) as of `now`."""
        done = job.processed(min(now, job.ended_at))
        if done == 0:
            return 0, 0, 0
        finished = self.rows(job)[:done]
        errored = sum(row.error is not None for row in finished)
        return done, done - errored, errored

    def settle(self, now: float) -> None:
        """Write the output of every job that has ended and not written it yet."""
        for job in self.jobs.values():
            if job.written or now < job.ended_at:
                continue
            job.written = True
            if job.failure is not None:
                continue
            self._write(job, now)

    def _write(self, job: BedrockJob, now: float) -> None:
        bucket, prefix = _s3_parts(job.output_uri)
        if bucket not in self._objects.buckets:
            return
        base = f"{prefix.rstrip('/')}/{job.job_id}/" if prefix.strip("/") else f"{job.job_id}/"
        done = job.processed(job.ended_at)
        rows = self.rows(job)
        lines: list[bytes] = []
        input_tokens = output_tokens = 0
        for record, row in zip(job.records[:done], rows[:done], strict=True):
            if row.output is None and row.error is None:
                continue
            line: JsonObject = {"recordId": record.record_id, "modelInput": record.model_input}
            if row.output is not None:
                line["modelOutput"] = row.output
                usage = as_object(row.output.get("usage")) or {}
                input_tokens += int(usage.get("inputTokens") or 0)
                output_tokens += int(usage.get("outputTokens") or 0)
            else:
                line["error"] = row.error
            encoded = (compact(line) + "\n").encode()
            garbled = self._faults.garbled(record.record_id)
            if garbled is not None:
                unknown = compact({"recordId": record.record_id, "outcome": "teleported"}) + "\n"
                encoded = garbled_line(encoded, garbled, unknown_shape=unknown.encode())
            lines.append(encoded)
        input_name = _s3_parts(job.input_uri)[1].rsplit("/", 1)[-1]
        self._objects.put(bucket, f"{base}{input_name}.out", b"".join(lines), now)
        errored = sum(row.error is not None for row in rows[:done])
        manifest = {
            "totalRecordCount": len(job.records),
            "processedRecordCount": done,
            "successRecordCount": done - errored,
            "errorRecordCount": errored,
            "inputTokenCount": input_tokens,
            "outputTokenCount": output_tokens,
        }
        self._objects.put(bucket, f"{base}manifest.json.out", json.dumps(manifest).encode(), now)


def render_job(job: BedrockJob, store: JobStore, now: float, *, summary: bool = False) -> JsonObject:
    """The job as GetModelInvocationJob (or, `summary`, ListModelInvocationJobs) answers it, as of `now`."""
    status = job.status(now)
    ended = now >= job.ended_at
    processed, succeeded, errored = store.counts(job, now)
    rendered: JsonObject = {
        "jobArn": job.arn,
        "jobName": job.name,
        "modelId": job.model_id,
        "clientRequestToken": job.token,
        "roleArn": job.role_arn,
        "status": status,
        "submitTime": iso(job.created_at),
        "lastModifiedTime": iso(job.ended_at if ended else max(job.created_at, min(now, job.started_at))),
        "inputDataConfig": {"s3InputDataConfig": {"s3Uri": job.input_uri, "s3InputFormat": "JSONL"}},
        "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": job.output_uri}},
        "timeoutDurationInHours": job.timeout_hours,
        "jobExpirationTime": iso(job.expires_at),
        "modelInvocationType": job.invocation_type,
        "totalRecordCount": len(job.records),
        "processedRecordCount": processed,
        "successRecordCount": succeeded,
        "errorRecordCount": errored,
    }
    if ended:
        rendered["endTime"] = iso(job.ended_at)
    if status == "Failed" and job.failure is not None:
        rendered["message"] = job.failure
    elif status == "Expired":
        rendered["message"] = f"The job did not finish within {job.timeout_hours} hours."
    return rendered
