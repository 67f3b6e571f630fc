"""Bedrock batch inference as a `BatchBackend`, through boto3 (S3 and the Bedrock control plane): the input written
to S3, a job created from it (`CreateModelInvocationJob`, `modelInvocationType: Converse`), polled, its output read
back from S3 and joined on `recordId`, stopped. Every shape, status name and id rule of it stays here.

The create is exactly once by AWS's own idempotency key: the job's `clientRequestToken` is made from the intent id,
so a create whose outcome is unknown is simply made again (`idempotent_create`) and AWS answers with the job the first
create made, if it made one. The input object's URI and the model are recorded as steps of the create before it is
sent (`CreateSteps`): a crash after the upload reuses the object (`resume`) rather than writing it again. The job's
name carries the intent id and the record count too (`lowtide-<hex>-<count>`), so a job is lowtide's and its counts
are known before its output is read.

Bedrock refuses a job of fewer records than the account's minimum (100 by default; `provider_options.bedrock.
min_records`): such a batch is refused here, before anything is written or sent, with an error saying so.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

import orjson

from lowtide import (
    APIConnectionError,
    APIError,
    BatchSettings,
    Clock,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
)
from lowtide.providers import (
    Counts,
    CreateSteps,
    EndedAs,
    Phase,
    RemoteBatch,
    ResultLine,
    SdkBatchBackend,
    UnreadableLine,
    ended_counts,
    read_exactly,
    read_line,
)
from lowtide.providers.bedrock.batch_codec import (
    EXPIRED_CODE,
    FAILED_CODE,
    STOPPED_CODE,
    BedrockBatchCodec,
    error_line,
)
from lowtide.providers.bedrock.batch_reads import first_record_id, job_inputs
from lowtide.providers.bedrock.client import AwsClients, call
from lowtide.providers.bedrock.errors import translate_errors
from lowtide.providers.bedrock.options import BedrockOptions

__all__ = ["INPUT_STEP", "MODEL_STEP", "BedrockBatchBackend", "client_token", "job_name", "remote_batch"]

log = logging.getLogger(__name__)

INPUT_STEP = "input_uri"
MODEL_STEP = "model"
_NAME = re.compile(r"^lowtide-([0-9a-f]+)-(\d+)$")
_PHASES = {
    "Stopping": Phase.CANCELING,
    "Completed": Phase.ENDED,
    "PartiallyCompleted": Phase.ENDED,
    "Failed": Phase.ENDED,
    "Stopped": Phase.ENDED,
    "Expired": Phase.ENDED,
}
"""Every other status (Submitted, Validating, Scheduled, InProgress) is running."""
_ENDED_AS: dict[str, EndedAs] = {"Stopped": "canceled", "Expired": "expired", "Failed": "failed"}
"""How a job of an ended status ended; `Completed` and `PartiallyCompleted` succeeded."""
_RECORD_IN_LINE = re.compile(rb'"recordId"\s*:\s*"([A-Za-z0-9_:\-]{1,128})"')
"""The record id a line names, read from its bytes when the line cannot be read as JSON (custom ids are plain)."""
Job = Mapping[str, Any]


def _hex(intent_id: str) -> str:
    return intent_id.removeprefix("lt_")


def client_token(intent_id: str) -> str:
    """The create's idempotency key: the intent id, in the letters and dashes AWS takes."""
    return f"lowtide-{_hex(intent_id)}"


def job_name(intent_id: str, count: int) -> str:
    """The name a job of lowtide's carries: its intent id and how many records it holds."""
    return f"lowtide-{_hex(intent_id)}-{count}"


def _epoch(moment: object) -> float | None:
    return moment.timestamp() if isinstance(moment, datetime.datetime) else None


def _int(job: Job, name: str) -> int:
    value = job.get(name)
    return value if isinstance(value, int) else 0


def remote_batch(job: Job, *, count: int | None = None) -> RemoteBatch:
    """The neutral record of a job, from GetModelInvocationJob's (or a listing's) fields."""
    status = str(job.get("status") or "Submitted")
    phase = _PHASES.get(status, Phase.RUNNING)
    matched = _NAME.match(str(job.get("jobName") or ""))
    total = _int(job, "totalRecordCount") or (int(matched.group(2)) if matched else count or 0)
    succeeded, errored = _int(job, "successRecordCount"), _int(job, "errorRecordCount")
    rest = max(0, total - succeeded - errored)
    if phase is not Phase.ENDED:
        counts = Counts(processing=total)
    else:
        counts = ended_counts(_ENDED_AS.get(status, "succeeded"), succeeded=succeeded, errored=errored, rest=rest)
    ended = _epoch(job.get("endTime")) or _epoch(job.get("lastModifiedTime"))
    return RemoteBatch(
        id=str(job.get("jobArn") or ""),
        phase=phase,
        status=status,
        created_at=_epoch(job.get("submitTime")) or 0.0,
        counts=counts,
        ended_at=ended if phase is Phase.ENDED else None,
        cancel_requested=status in ("Stopping", "Stopped"),
        intent_id=f"lt_{matched.group(1)}" if matched else None,
        handle=job,
    )


async def _whole(answer: Awaitable[Job]) -> Job:
    """A job's answer, which names its ARN: one that does not came back cut short (its connection closed after the
    status line, which botocore reads as an empty body), and its outcome is unknown."""
    job = await answer
    if not job.get("jobArn"):
        raise APIConnectionError("AWS's answer came back without its body: the connection closed part way.")
    return job


def _known(handle: object) -> Job | None:
    """A job as the backend handed it to the engine (`RemoteBatch.handle`)."""
    return cast("Job", handle) if isinstance(handle, dict) else None


def _uri_of(job: Job, config: str, location: str) -> str:
    """An S3 URI a job names (`inputDataConfig.s3InputDataConfig.s3Uri`, say); "" when it names none."""
    outer: object = job.get(config)
    inner: object = cast("Mapping[str, object]", outer).get(location) if isinstance(outer, dict) else None
    uri: object = cast("Mapping[str, object]", inner).get("s3Uri") if isinstance(inner, dict) else None
    return uri if isinstance(uri, str) else ""


def _s3_parts(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


class BedrockBatchBackend(SdkBatchBackend):
    """Bedrock batch inference through one set of boto3 clients (which never retry: lowtide decides)."""

    idempotent_create = True

    input_step = INPUT_STEP
    model_step = MODEL_STEP

    def __init__(self, clients: AwsClients, options: BedrockOptions, *, clock: Clock, settings: BatchSettings) -> None:
        super().__init__(endpoint=clients.endpoint, credential=clients.credential, clock=clock, settings=settings)
        self._clients = clients
        self._options = options
        self.codec = BedrockBatchCodec(options.max_records)

    def _where(self) -> tuple[str, str]:
        """The bucket and role batch mode needs: a `ConfigurationError`-like refusal before anything is sent."""
        bucket, role = self._options.s3_bucket, self._options.role_arn
        if not bucket or not role:
            missing = " and ".join(name for name, value in (("s3_bucket", bucket), ("role_arn", role)) if not value)
            raise InvalidRequestError(
                f"Bedrock batch inference needs provider_options.bedrock.{missing}: the S3 bucket its input and output "
                "go to, and the service role Bedrock reads and writes them with. Nothing was sent."
            )
        return bucket, role

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Write the input to S3 (recorded as the create's steps), then create the job from it."""
        bucket, _ = self._where()
        minimum = self._options.min_records
        if count < minimum:
            raise InvalidRequestError(
                f"A Bedrock batch inference job takes at least {minimum} records (the account's quota); this batch "
                f"holds {count}. Nothing was sent: send {minimum} or more requests together (a bulk run, or a "
                "longer batch.coalesce_window), run these live (batch_processing: live), or, if AWS changed your "
                "quota, set provider_options.bedrock.min_records."
            )
        model, records = _records(body)
        key = f"{self._options.key_prefix}input/{_hex(intent_id)}.jsonl"
        await self._retrying(
            lambda: call(
                self._clients.s3.put_object, Bucket=bucket, Key=key, Body=records, ContentType="application/jsonl"
            )
        )
        uri = f"s3://{bucket}/{key}"
        await steps.done(MODEL_STEP, model)
        await steps.done(INPUT_STEP, uri)
        return await self._create(uri, model, count, intent_id=intent_id)

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The create made again from the input the intent wrote (same token: AWS answers with the job the first
        create made, if it made one). When the input object is gone (a bucket's lifecycle rule, a person), the job
        its create may have made is looked for by its name; None when there is none (its requests are sent anew)."""
        bucket, key = _s3_parts(done[INPUT_STEP])
        try:
            await self._retrying(lambda: call(self._clients.s3.head_object, Bucket=bucket, Key=key))
        except NotFoundError:
            return await self._named(job_name(intent_id, count))
        return await self._create(done[INPUT_STEP], done[MODEL_STEP], count, intent_id=intent_id)

    async def _named(self, name: str) -> RemoteBatch | None:
        """The job named `name` (a name carries its intent id: at most one), through the list's `nameContains`."""
        page = await self._retrying(
            lambda: call(self._clients.control.list_model_invocation_jobs, nameContains=name, maxResults=100)
        )
        for job in cast("list[Job]", page.get("invocationJobSummaries") or []):
            if job.get("jobName") == name:
                log.info("Bedrock job %s found by its name %s.", job.get("jobArn"), name)
                return remote_batch(job)
        return None

    async def _create(self, uri: str, model: str, count: int, *, intent_id: str) -> RemoteBatch:
        bucket, role = self._where()
        output = f"s3://{bucket}/{self._options.key_prefix}output/"
        arguments: dict[str, object] = {
            "jobName": job_name(intent_id, count),
            "roleArn": role,
            "clientRequestToken": client_token(intent_id),
            "modelId": model,
            "modelInvocationType": "Converse",
            "inputDataConfig": {"s3InputDataConfig": {"s3Uri": uri, "s3InputFormat": "JSONL"}},
            "outputDataConfig": {"s3OutputDataConfig": {"s3Uri": output}},
        }
        now = self._clock.now()
        # Retried only when refused outright (a rate limit, a quota of jobs): a create on doubt is reconciled by
        # making it again under the same token, never blindly resent.
        try:
            answer = await self._retrying(
                lambda: _whole(call(self._clients.control.create_model_invocation_job, **arguments)),
                retry_on=(RateLimitError,),
            )
        except APIError as exc:
            # A job of this name exists, but the token did not find it: AWS forgot the token (its memory of one is
            # not forever). The name carries the intent id: that job is this intent's.
            found = await self._named(str(arguments["jobName"])) if exc.status_code == 409 else None
            if found is None:
                raise
            return found
        arn = str(answer["jobArn"])
        log.info("Submitted Bedrock batch inference job %s with %d record(s).", arn, count)
        job: dict[str, Any] = {
            "jobArn": arn,
            "jobName": arguments["jobName"],
            "status": "Submitted",
            "modelId": model,
            "submitTime": datetime.datetime.fromtimestamp(now, datetime.UTC),
        }
        return remote_batch(job, count=count)

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        """The jobs submitted after `created_after`, page after page."""
        found: list[RemoteBatch] = []
        after = datetime.datetime.fromtimestamp(created_after, datetime.UTC)

        async def listing() -> None:
            found.clear()
            token: str | None = None
            while True:
                arguments: dict[str, object] = {
                    "submitTimeAfter": after,
                    "maxResults": self.list_page,
                    "sortOrder": "Descending",
                }
                if token:
                    arguments["nextToken"] = token
                page = await call(self._clients.control.list_model_invocation_jobs, **arguments)
                found.extend(remote_batch(job) for job in cast("list[Job]", page.get("invocationJobSummaries") or []))
                token = cast("str | None", page.get("nextToken"))
                if not token:
                    return

        await self._retrying(listing)
        return found

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._job(batch_id))

    # What a rebuild reads (`lowtide ledger rebuild`).

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job the account lists, newest first, page after page."""
        for batch in await self.recent(created_after=0.0):
            yield batch

    async def inputs(self, batch: RemoteBatch, handle: Callable[[str, Mapping[str, Any]], None]) -> bool:
        """The records of the job's input object, while it is in the bucket (deleted once the answers are stored)."""
        job = await self._detailed(batch)
        uri = _uri_of(job, "inputDataConfig", "s3InputDataConfig")
        return await job_inputs(self._read, self.codec, uri, str(job.get("modelId") or ""), handle)

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        bucket, output_key, _ = self._output_keys(await self._ended(batch))
        return await first_record_id(self._read, self.codec, bucket, output_key)

    async def _detailed(self, batch: RemoteBatch) -> Job:
        """The job as GetModelInvocationJob gives it (a listing's summary names no input)."""
        known = _known(batch.handle)
        return known if known is not None and "inputDataConfig" in known else await self._job(batch.id)

    async def _job(self, batch_id: str) -> Job:
        return await self._retrying(
            lambda: call(self._clients.control.get_model_invocation_job, jobIdentifier=batch_id)
        )

    def _output_keys(self, job: Job) -> tuple[str, str, str]:
        """The bucket, the output file's key and the manifest's key of a job."""
        bucket, prefix = _s3_parts(_uri_of(job, "outputDataConfig", "s3OutputDataConfig"))
        input_name = _s3_parts(_uri_of(job, "inputDataConfig", "s3InputDataConfig"))[1].rsplit("/", 1)[-1]
        job_id = str(job.get("jobArn") or "").rsplit("/", 1)[-1]
        base = f"{prefix.rstrip('/')}/{job_id}/" if prefix.strip("/") else f"{job_id}/"
        return bucket, f"{base}{input_name}.out", f"{base}manifest.json.out"

    async def _ended(self, batch: RemoteBatch) -> Job:
        known = _known(batch.handle)
        if known is None or "outputDataConfig" not in known or _PHASES.get(str(known.get("status"))) is not Phase.ENDED:
            known = await self._job(batch.id)
        return known

    async def _read(self, bucket: str, key: str) -> bytes | None:
        """An object's bytes, read whole in a worker thread; None when there is no such object."""

        def read() -> bytes:
            answer = self._clients.s3.get_object(Bucket=bucket, Key=key)
            return cast("bytes", answer["Body"].read())

        try:
            return await self._retrying(lambda: call(read))
        except NotFoundError:
            return None

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The job's output records, each with the job's `modelId` added; a download broken off is fetched again.
        A job that wrote no output (failed, or stopped before any record ran) has none."""
        job = await self._ended(batch)
        bucket, output_key, manifest_key = self._output_keys(job)
        data = await self._read(bucket, output_key)
        if data is None:
            return
        model = str(job.get("modelId") or "")
        lines = 0
        for raw in data.splitlines():
            if not raw.strip():
                continue
            line = read_line(raw)
            if isinstance(line, dict):  # read just now, held by nothing else: the job's model added in place
                line["modelId"] = model
            elif not isinstance(line, UnreadableLine):
                line = {**line, "modelId": model}
            elif line.custom_id is None and (named := _RECORD_IN_LINE.search(raw)) is not None:
                # The line names its request by `recordId`, not `custom_id`: its request fails alone, the line kept.
                line = UnreadableLine(line.raw, line.reason, named.group(1).decode("ascii"))
            handle(line)
            lines += 1
        manifest = await self._read(bucket, manifest_key)
        with contextlib.suppress(ValueError, AttributeError):
            processed = json.loads(manifest or b"{}").get("processedRecordCount")
            if isinstance(processed, int) and processed != lines:
                log.warning(
                    "Bedrock job %s processed %d record(s) but its output holds %d line(s).", batch.id, processed, lines
                )

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A stopped or expired job leaves the records it never ran unanswered; a failed one ran none. A job that
        completed answers every record: a missing one was lost."""
        if batch.status == "Stopped":
            return error_line(custom_id, STOPPED_CODE, "The batch inference job was stopped.")
        if batch.status == "Expired":
            return error_line(custom_id, EXPIRED_CODE, "The batch inference job expired.")
        if batch.status == "Failed":
            job = _known(batch.handle) or {}
            message = str(job.get("message") or "") or f"Batch inference job {batch.id} failed as a whole."
            return error_line(custom_id, FAILED_CODE, message)
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        await self._retrying(lambda: call(self._clients.control.stop_model_invocation_job, jobIdentifier=batch_id))
        batch = await self.retrieve(batch_id)
        log.info("Stop of Bedrock job %s requested (%s).", batch_id, batch.status)
        return batch

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the job's input object (unless `batch.keep_uploads`): the answers are stored. Its output stays in
        the bucket, the account's own record."""
        if self.settings.keep_uploads:
            return
        await self._delete_input(_uri_of(await self._ended(batch), "inputDataConfig", "s3InputDataConfig"))

    async def _delete_input(self, uploaded: str) -> None:
        bucket, key = _s3_parts(uploaded)
        with contextlib.suppress(NotFoundError):
            await self._retrying(lambda: call(self._clients.s3.delete_object, Bucket=bucket, Key=key))

    def _translate(self) -> AbstractContextManager[None]:
        return translate_errors()


def _records(body: bytes) -> tuple[str, bytes]:
    """The model of lowtide's JSONL, and the job's input: each record's `modelInput` without its `modelId`."""
    model = ""
    out: list[bytes] = []
    for raw in body.splitlines():  # the codec's own JSONL: a record a line
        record_model, record = _without_model(raw)
        model = model or record_model
        out.append(record)
    return model, b"".join(out)


def _without_model(raw: bytes) -> tuple[str, bytes]:
    """A record of lowtide's JSONL without its `modelInput.modelId`, and that model. Read and written again by orjson
    (several times faster than `json`, which this runs once a request), unless orjson cannot read the record exactly
    (`read_exactly`): then by `json`. Either way the record's JSON is the same, only its spelling may differ (`1e-7`
    for `1e-07`)."""
    read, by_orjson = read_exactly(raw)
    line = cast("dict[str, Any]", read)
    model = _model_taken(line)
    if by_orjson:
        return model, orjson.dumps(line) + b"\n"
    return model, json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _model_taken(line: dict[str, Any]) -> str:
    model_input = cast("dict[str, Any]", line["modelInput"])
    return str(model_input.pop("modelId", ""))
