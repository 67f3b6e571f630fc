"""Mistral's Batch API as a `BatchBackend`, through the mistralai SDK (`client.batch.jobs`, `client.files`): create a
job from inline requests or an uploaded JSONL file, poll it, read its output and error files, cancel it. Every shape,
status name and id rule of it stays here.

A batch whose JSONL is at most `inline_bytes` (`INLINE_BYTES`, 8 MiB) goes inline (the create's `requests`); a larger
one is uploaded (`purpose="batch"`), and the file's id and the model are recorded as steps of the create
(`CreateSteps`), so that a crash before the create reuses the file (`resume`) rather than uploading it again.

The job carries the intent id in its `metadata` (`lowtide_intent`): a create whose outcome is unknown is reconciled
exactly by listing jobs created since the intent (`created_after`, the metadata as the list's filter, and each job's
own metadata checked), never guessed at by size.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

from mistralai.client import Mistral, models

from lowtide import (
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
    JSONObject,
    Phase,
    RemoteBatch,
    ResultLine,
    SdkBatchBackend,
    UnreadableLine,
    ended_counts,
    feed_lines,
    input_lines,
    read_exactly,
)
from lowtide.providers.mistral.batch_codec import (
    CANCELED_CODE,
    EXPIRED_CODE,
    FAILED_CODE,
    MistralBatchCodec,
    error_line,
)
from lowtide.providers.mistral.errors import translate_errors
from lowtide.providers.mistral.requests import CHAT_URL

__all__ = [
    "INLINE_BYTES",
    "INPUT_FILE_STEP",
    "INTENT_KEY",
    "MAX_TIMEOUT_HOURS",
    "MODEL_STEP",
    "MistralBatchBackend",
    "remote_batch",
    "timeout_hours",
]

log = logging.getLogger(__name__)

INTENT_KEY = "lowtide_intent"
"""The job metadata key that carries lowtide's intent id."""
INLINE_BYTES = 8 * 1024 * 1024
"""The largest JSONL input sent inline in the create's body; a larger one is uploaded as a file."""
INPUT_FILE_STEP = "input_file"
MODEL_STEP = "model"
MAX_TIMEOUT_HOURS = 168
"""The longest `timeout_hours` lowtide asks a job for (a week)."""

_PHASES = {
    "QUEUED": Phase.RUNNING,
    "RUNNING": Phase.RUNNING,
    "CANCELLATION_REQUESTED": Phase.CANCELING,
    "SUCCESS": Phase.ENDED,
    "FAILED": Phase.ENDED,
    "TIMEOUT_EXCEEDED": Phase.ENDED,
    "CANCELLED": Phase.ENDED,
}
"""Every status Mistral names; one it adds later is taken as running until it ends as one of these."""
_ENDED_AS: dict[str, EndedAs] = {"TIMEOUT_EXCEEDED": "expired", "CANCELLED": "canceled", "FAILED": "failed"}
"""How a job of an ended status ended; `SUCCESS` succeeded."""


def timeout_hours(settings: BatchSettings) -> int:
    """The `timeout_hours` a job is created with: the whole hours of the actor's `batch.max_wait`, from 1 to 168."""
    return max(1, min(MAX_TIMEOUT_HOURS, math.floor(settings.max_wait / 3600)))


def remote_batch(job: models.BatchJob) -> RemoteBatch:
    """The neutral record of a Mistral batch job. Requests an ended job did not finish are counted as it ended
    them: canceled, timed out (expired), or (a job that failed as a whole) errored."""
    status = str(job.status)
    phase = _PHASES.get(status, Phase.RUNNING)
    total = job.total_requests
    succeeded = job.succeeded_requests
    failed = job.failed_requests
    rest = max(0, total - succeeded - failed)
    if phase is not Phase.ENDED:
        counts = Counts(processing=rest, succeeded=succeeded, errored=failed)
    else:
        counts = ended_counts(_ENDED_AS.get(status, "succeeded"), succeeded=succeeded, errored=failed, rest=rest)
    metadata = job.metadata if isinstance(job.metadata, dict) else {}
    intent = metadata.get(INTENT_KEY)
    completed = job.completed_at if isinstance(job.completed_at, int) else None
    return RemoteBatch(
        id=job.id,
        phase=phase,
        status=status.lower(),
        created_at=float(job.created_at),
        counts=counts,
        ended_at=float(completed if completed is not None else job.created_at) if phase is Phase.ENDED else None,
        cancel_requested=status in ("CANCELLATION_REQUESTED", "CANCELLED"),
        intent_id=intent if isinstance(intent, str) else None,
        handle=job,
    )


class MistralBatchBackend(SdkBatchBackend):
    """Mistral's Batch API through one mistralai client (which never retries: lowtide decides)."""

    codec = MistralBatchCodec()
    finds_by_intent = True
    input_step = INPUT_FILE_STEP
    model_step = MODEL_STEP

    def __init__(
        self, client: Mistral, *, endpoint: str, credential: str, clock: Clock, settings: BatchSettings
    ) -> None:
        super().__init__(endpoint=endpoint, credential=credential, clock=clock, settings=settings)
        self._client = client
        self.inline_bytes = INLINE_BYTES
        """The largest input sent inline; an actor's `provider_options.mistral.batch_inline_bytes` sets another."""

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Create the job from inline requests, or from the uploaded input file (recorded as steps first)."""
        first = cast("JSONObject", json.loads(body.split(b"\n", 1)[0]))
        model = str(cast("JSONObject", first.get("body") or {}).get("model") or "")
        if len(body) <= self.inline_bytes:
            # Read once a request: by orjson where it reads the line exactly (`read_exactly`), else by `json`.
            lines = [
                cast("models.BatchRequestTypedDict", read_exactly(raw)[0]) for raw in body.splitlines() if raw.strip()
            ]
            return await self._create(lines, model, count, intent_id=intent_id)
        file_id = await self._upload(body, intent_id)
        await steps.done(MODEL_STEP, model)
        await steps.done(INPUT_FILE_STEP, file_id)
        return await self._create(file_id, model, count, intent_id=intent_id)

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The job created from the file the intent uploaded before a crash, not uploaded again; None when that file
        is gone."""
        file_id = done[INPUT_FILE_STEP]
        try:
            await self._retrying(lambda: self._client.files.retrieve_async(file_id=file_id))
        except NotFoundError:
            return None
        return await self._create(file_id, done[MODEL_STEP], count, intent_id=intent_id)

    async def _create(
        self, source: str | list[models.BatchRequestTypedDict], model: str, count: int, *, intent_id: str
    ) -> RemoteBatch:
        async def create() -> models.BatchJob:
            jobs = self._client.batch.jobs
            metadata = {INTENT_KEY: intent_id}
            hours = timeout_hours(self.settings)
            if isinstance(source, str):
                return await jobs.create_async(
                    endpoint=CHAT_URL, input_files=[source], model=model, metadata=metadata, timeout_hours=hours
                )
            return await jobs.create_async(
                endpoint=CHAT_URL, requests=source, model=model, metadata=metadata, timeout_hours=hours
            )

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        job = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted Mistral batch job %s with %d request(s).", job.id, count)
        return remote_batch(job)

    async def _upload(self, body: bytes, intent_id: str) -> str:
        async def upload() -> str:
            uploaded = await self._client.files.upload_async(
                file={"file_name": f"lowtide-{intent_id}.jsonl", "content": body}, purpose="batch"
            )
            return uploaded.id

        return await self._retrying(upload)

    async def _jobs(self, *, created_after: float, intent_id: str | None = None) -> AsyncIterator[models.BatchJob]:
        """The jobs created since `created_after`, newest first, page after page (only those naming `intent_id` in
        their metadata, when given: the list's own filter, and each job's metadata checked again)."""
        since = datetime.datetime.fromtimestamp(max(0.0, created_after - 1), tz=datetime.UTC)
        page = 0
        while True:

            async def listing(number: int = page) -> models.ListBatchJobsResponse:
                jobs = self._client.batch.jobs
                if intent_id is None:
                    return await jobs.list_async(page=number, page_size=self.list_page, created_after=since)
                return await jobs.list_async(
                    page=number, page_size=self.list_page, created_after=since, metadata={INTENT_KEY: intent_id}
                )

            listed = await self._retrying(listing)
            data = listed.data or []
            for job in data:
                if job.created_at >= created_after - 1:
                    yield job
            if len(data) < self.list_page or (page + 1) * self.list_page >= listed.total:
                return
            page += 1

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        return [remote_batch(job) async for job in self._jobs(created_after=created_after)]

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """The job whose metadata names the intent, listed with the metadata as the list's filter; when the API
        refuses that filter (a 4xx), every job created since is listed and read instead. Either way each job's own
        metadata is checked, should the API ignore the filter."""
        try:
            listed = [remote_batch(job) async for job in self._jobs(created_after=created_after, intent_id=intent_id)]
        except InvalidRequestError as exc:
            log.warning("Mistral refused the job list's metadata filter (%s); listing every job since instead.", exc)
            listed = await self.recent(created_after=created_after)
        return next((batch for batch in listed if batch.intent_id == intent_id), None)

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._raw(batch_id))

    # What a rebuild reads (`lowtide ledger rebuild`).

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job the workspace lists, newest first, page after page."""
        async for job in self._jobs(created_after=0.0):
            yield remote_batch(job)

    async def inputs(self, batch: RemoteBatch, handle: Callable[[str, Mapping[str, Any]], None]) -> bool:
        """The lines of a job's uploaded input files, while they are there (lowtide deletes them once the answers
        are stored). A job sent inline shows its requests to no one: nothing."""
        job = batch.handle if isinstance(batch.handle, models.BatchJob) else await self._raw(batch.id)
        if not job.input_files:
            return False
        take = input_lines(self.codec, handle)
        try:
            for file_id in job.input_files:
                await self._retrying(lambda file_id=file_id: self._read_file(file_id, take))
        except NotFoundError:
            return False
        return True

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        """The custom id of the first line of the output file, else of the error file, else of the inline outputs."""
        job = await self._ended(batch)
        first: list[ResultLine | UnreadableLine] = []
        for file_id in (job.output_file, job.error_file):
            if isinstance(file_id, str) and file_id and not first:
                with contextlib.suppress(NotFoundError):
                    await self._retrying(lambda file_id=file_id: self._first_line(file_id, first))
        if not first and isinstance(job.outputs, list) and job.outputs:
            first.append(cast("ResultLine", job.outputs[0]))
        if not first:
            return None
        line = first[0]
        return line.custom_id if isinstance(line, UnreadableLine) else self.codec.custom_id_of(line)

    async def _first_line(self, file_id: str, first: list[ResultLine | UnreadableLine]) -> None:
        response = await self._client.files.download_async(file_id=file_id)
        try:
            await feed_lines(response.aiter_bytes(), first.append, source=f"file {file_id}", first_only=True)
        finally:
            await response.aclose()

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The output file's lines, then the error file's, streamed (or the job's inline `outputs` when it has no
        files). A download broken off is fetched again from the start (so `handle` may see lines twice); one that
        ends cleanly with fewer lines than the job counts finished is fetched again too, and after the last retry
        what it holds is taken (the rest were lost)."""
        job = await self._ended(batch)
        files = [file_id for file_id in (job.output_file, job.error_file) if isinstance(file_id, str) and file_id]
        if not files and isinstance(job.outputs, list):
            for output in job.outputs:
                handle(cast("ResultLine", output))
            return
        finished = job.succeeded_requests + job.failed_requests
        attempt = 0
        while True:
            lines = 0
            for file_id in files:
                lines += await self._retrying(lambda file_id=file_id: self._read_file(file_id, handle))
            if lines >= finished:
                return
            if attempt == self.settings.api_retries:
                log.warning("Mistral job %s counts %d finished requests; its files hold %d.", job.id, finished, lines)
                return
            attempt += 1
            log.warning("The files of Mistral job %s ended after %d of %d lines; reading them again.", job.id, lines,
                        finished)  # fmt: skip

    async def _read_file(self, file_id: str, handle: Callable[[ResultLine | UnreadableLine], None]) -> int:
        """Feed every line of a file to `handle`, and return how many were read."""
        response = await self._client.files.download_async(file_id=file_id)
        try:
            return await feed_lines(response.aiter_bytes(), handle, source=f"file {file_id}")
        finally:
            await response.aclose()

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A cancelled job leaves the requests it never ran out of both files, a timed-out one those it did not
        reach, a failed one all of them; a job that succeeded answers every request: a missing one was lost."""
        if batch.status == "cancelled":
            return error_line(custom_id, CANCELED_CODE, "The batch job was cancelled.")
        if batch.status == "timeout_exceeded":
            return error_line(custom_id, EXPIRED_CODE, "The batch job exceeded its timeout.")
        if batch.status == "failed":
            job = batch.handle if isinstance(batch.handle, models.BatchJob) else None
            said = "; ".join(error.message for error in job.errors) if job is not None and job.errors else ""
            return error_line(custom_id, FAILED_CODE, said or f"Batch job {batch.id} failed as a whole.")
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        job = await self._retrying(lambda: self._client.batch.jobs.cancel_async(job_id=batch_id))
        log.info("Cancellation of Mistral batch job %s requested (%s).", batch_id, job.status)
        return remote_batch(job)

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the uploaded input file of a job made from one (unless `batch.keep_uploads`): the answers are
        stored."""
        if self.settings.keep_uploads:
            return
        job = await self._ended(batch)
        for file_id in job.input_files:
            await self._delete_input(file_id)

    async def _delete_input(self, uploaded: str) -> None:
        with contextlib.suppress(NotFoundError):
            await self._retrying(lambda: self._client.files.delete_async(file_id=uploaded))

    # Inside.

    async def _raw(self, batch_id: str) -> models.BatchJob:
        return await self._retrying(lambda: self._client.batch.jobs.get_async(job_id=batch_id))

    async def _ended(self, batch: RemoteBatch) -> models.BatchJob:
        known = batch.handle if isinstance(batch.handle, models.BatchJob) else None
        if known is None or _PHASES.get(str(known.status)) is not Phase.ENDED:
            known = await self._raw(batch.id)
        return known

    def _translate(self) -> AbstractContextManager[None]:
        return translate_errors()
