"""Together's Batch API as a `BatchBackend`: upload the input file (Together's three-step upload, `files.upload` with
`purpose: batch-api`), create the job, poll it, read its output and error files. Its job differs from OpenAI's batch:
upper-case statuses (`VALIDATING`, `IN_PROGRESS`, `COMPLETED`, `FAILED`, `EXPIRED`, `CANCELLED`), times as dates, a
progress percentage instead of request counts, no metadata; every shape, status name and id rule of it stays here.

Exactly-once: `batches.create` takes no metadata and no idempotency key. So the input file is uploaded once per
intent under a name made from it, `lowtide-<intent id>-<request count>.jsonl`, and recorded as the create's
`input_file` step before the job is created; a create whose outcome is unknown is found by listing the files for that
name and the jobs for that input file (`finds_by_intent`): one input file, one job. The file's name also gives a job's
request count (the job reports none). Together answers an upload of bytes it already holds with the file it has
(409, which the SDK turns into that file): an upload retried after a lost answer is not stored twice.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from together import AsyncTogether, omit
from together.types import BatchJob

from lowtide import APIError, NotFoundError, RateLimitError
from lowtide.clock import Clock
from lowtide.config import BatchSettings
from lowtide.providers import (
    BatchBackend,
    BatchCodec,
    Counts,
    CreateSteps,
    Phase,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    credential_of,
    file_reader,
    first_line_reader,
    read_files,
    retrying,
)
from lowtide.providers.groq.chat import CHAT_URL
from lowtide.providers.openai.codec import CANCELED_CODE, EXPIRED_CODE
from lowtide.providers.openai.input_files import InputFiles
from lowtide.providers.together.batch_codec import TogetherBatchCodec
from lowtide.providers.together.errors import translate_errors

__all__ = ["INPUT_FILE_STEP", "TogetherBatchBackend", "file_name"]

log = logging.getLogger(__name__)

INPUT_FILE_STEP = "input_file"
PURPOSE = "batch-api"
_PHASES = {
    "VALIDATING": Phase.RUNNING,
    "IN_PROGRESS": Phase.RUNNING,
    "COMPLETED": Phase.ENDED,
    "FAILED": Phase.ENDED,
    "EXPIRED": Phase.ENDED,
    "CANCELLED": Phase.ENDED,
}
"""A status newer than these is running."""
_NAME = re.compile(r"^lowtide-(.+)-([0-9]+)\.jsonl$")
T = TypeVar("T")


def file_name(intent_id: str, count: int) -> str:
    """The name an intent's input file is uploaded under: its intent id and how many requests it holds."""
    return f"lowtide-{intent_id}-{count}.jsonl"


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


class TogetherBatchBackend(InputFiles, BatchBackend):
    """The Batch API through one `AsyncTogether` client (its own retries off: lowtide decides what is retried)."""

    codec: BatchCodec = TogetherBatchCodec()
    finds_by_intent = True

    def __init__(
        self,
        client: AsyncTogether,
        *,
        owns_client: bool,
        clock: Clock,
        settings: BatchSettings,
        priority: int | None = None,
    ) -> None:
        self._client = client.with_options(max_retries=0)
        self._closable = client
        self._owns_client = owns_client
        self._clock = clock
        self.settings = settings
        self.priority = priority
        self._endpoint = str(self._client.base_url).rstrip("/")
        self._credential = credential_of(self._client.api_key, owned=owns_client, client=client)
        self._read_file = file_reader(self._client.files.with_streaming_response.content, self._retrying)
        self._first_line = first_line_reader(self._client.files.with_streaming_response.content, self._retrying)
        # What a job's input file says of it (its intent and request count), by file id; and the file each intent of
        # this process uploaded (Together may answer an upload with a file it held already, named otherwise).
        self._files: dict[str, tuple[str, int]] = {}
        self._uploaded: dict[str, str] = {}

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def credential(self) -> str:
        return self._credential

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Upload the input file under the intent's name, record it as a step, then create the job from it."""
        file_id = await self._upload(body, intent_id, count)
        await steps.done(INPUT_FILE_STEP, file_id)
        return await self._create(file_id, count)

    def resumable(self, steps: Mapping[str, str]) -> bool:
        return INPUT_FILE_STEP in steps

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The job created from the input file the intent uploaded before (a crash came between the upload and the
        create), not uploaded again; None when that file is gone."""
        file_id = done[INPUT_FILE_STEP]
        try:
            await self._retrying(lambda: self._client.files.retrieve(file_id))
        except NotFoundError:
            return None
        self._files.setdefault(file_id, (intent_id, count))
        return await self._create(file_id, count)

    async def _create(self, file_id: str, count: int) -> RemoteBatch:
        async def create() -> BatchJob:
            created = await self._client.batches.create(
                endpoint=CHAT_URL,
                input_file_id=file_id,
                priority=self.priority if self.priority is not None else omit,
            )
            if created.job is None:
                raise APIError("Together answered the create without its job.")
            if created.warning:
                log.warning("Together created job %s with a warning: %s", created.job.id, created.warning)
            return created.job

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        job = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted Together batch %s with %d request(s).", job.id, count)
        return await self._remote(job)

    async def _upload(self, body: bytes, intent_id: str, count: int) -> str:
        name = file_name(intent_id, count)

        async def upload() -> str:
            with tempfile.TemporaryDirectory(prefix="lowtide-together-") as folder:
                path = Path(folder) / name
                path.write_bytes(body)
                uploaded = await self._client.files.upload(path, purpose=PURPOSE, check=False)
            return uploaded.id

        file_id = await self._retrying(upload)
        self._files[file_id] = (intent_id, count)
        self._uploaded[intent_id] = file_id
        return file_id

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """The job made from the intent's input file: the file found by its name (or as this process uploaded it),
        the job by its input file."""
        files = await self._retrying(self._client.files.list)
        ids = {item.id for item in files.data if _intent_of(item.filename) == intent_id}
        mine = self._uploaded.get(intent_id)
        if mine is not None:
            ids.add(mine)
        if not ids:
            return None
        for job in await self._retrying(self._client.batches.list):
            if job.input_file_id in ids and job.id:
                return await self._remote(job)
        return None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return await self._remote(await self._raw(batch_id))

    # What a rebuild reads (`lowtide ledger rebuild`).

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job of the account, from its one answer (Together's list is a bare list, no pages), newest first."""
        jobs = [job for job in await self._retrying(self._client.batches.list) if job.id]
        jobs.sort(key=lambda job: _epoch(job.created_at) or 0.0, reverse=True)
        for job in jobs:
            yield await self._remote(job)

    async def _known(self, batch: RemoteBatch) -> BatchJob:
        return batch.handle if isinstance(batch.handle, BatchJob) else await self._raw(batch.id)

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The output file's lines, then the error file's, streamed (`handle` joins them by custom id). A download
        broken off is fetched again from the start; a completed job's files holding fewer lines than its requests are
        read again, and after the last retry taken as they are."""
        known = await self._ended(batch)
        finished = batch.counts.total if known.status == "COMPLETED" else 0
        files = (known.output_file_id, known.error_file_id)
        await read_files(
            self._read_file,
            files,
            handle,
            finished=finished,
            retries=self.settings.api_retries,
            batch=f"Together batch {batch.id}",
        )

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A cancelled job leaves the requests it never ran out of its files; an expired one those it never reached;
        a failed one ran none of them (its `error` says why)."""
        known = batch.handle if isinstance(batch.handle, BatchJob) else None
        if batch.status == "cancelled":
            return {"custom_id": custom_id, "error": {"code": CANCELED_CODE, "message": "The batch was cancelled."}}
        if batch.status == "expired":
            return {"custom_id": custom_id, "error": {"code": EXPIRED_CODE, "message": "The batch expired."}}
        if batch.status == "failed":
            reason = known.error if known is not None and known.error else "The batch failed before any request ran."
            return {"custom_id": custom_id, "error": {"code": "batch_failed", "message": reason}}
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        job = await self._retrying(lambda: self._client.batches.cancel(batch_id))
        log.info("Cancellation of Together batch %s requested (%s).", batch_id, job.status)
        return await self._remote(job)

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the uploaded input file (unless `batch.keep_uploads`): the answers are stored."""
        if self.settings.keep_uploads:
            return
        known = batch.handle if isinstance(batch.handle, BatchJob) else await self._raw(batch.id)
        if known.input_file_id:
            await self._delete(known.input_file_id)

    async def abandon(self, steps: Mapping[str, str]) -> None:
        """The create was given up: its uploaded input file is deleted (unless `batch.keep_uploads`)."""
        file_id = steps.get(INPUT_FILE_STEP)
        if file_id is not None and not self.settings.keep_uploads:
            await self._delete(file_id)

    async def _delete(self, file_id: str) -> None:
        try:
            await self._retrying(lambda: self._client.files.delete(file_id))
        except NotFoundError:
            return  # deleted already

    async def aclose(self) -> None:
        if self._owns_client:
            await self._closable.close()

    # Inside.

    async def _remote(self, job: BatchJob) -> RemoteBatch:
        """The neutral record of a Together job. The job reports no request counts: its input file's name gives the
        total (looked up once per file), its progress how many finished; an ended job's requests are counted as its
        status says until its files are read."""
        status = job.status or "UNKNOWN"
        phase = _PHASES.get(status, Phase.RUNNING)
        intent_id, total = await self._file_of(job.input_file_id)
        done = min(total, round(total * (job.progress or 0.0) / 100))
        if phase is not Phase.ENDED:
            counts = Counts(processing=total)
        elif status == "COMPLETED":
            counts = Counts(succeeded=total)
        elif status == "EXPIRED":
            counts = Counts(succeeded=done, expired=total - done)
        elif status == "CANCELLED":
            counts = Counts(succeeded=done, canceled=total - done)
        else:
            counts = Counts(errored=total)
        created = _epoch(job.created_at) or 0.0
        return RemoteBatch(
            id=job.id or "",
            phase=phase,
            status=status.lower(),
            created_at=created,
            counts=counts,
            ended_at=(_epoch(job.completed_at) or created) if phase is Phase.ENDED else None,
            cancel_requested=status == "CANCELLED",
            intent_id=intent_id,
            handle=job,
        )

    async def _file_of(self, file_id: str | None) -> tuple[str | None, int]:
        """The intent and request count a job's input file names (None and 0 for a file that is not lowtide's, or
        gone)."""
        if not file_id:
            return None, 0
        known = self._files.get(file_id)
        if known is not None:
            return known
        try:
            stored = await self._retrying(lambda: self._client.files.retrieve(file_id))
        except NotFoundError:
            return None, 0
        matched = _NAME.match(stored.filename)
        found = (matched.group(1), int(matched.group(2))) if matched else None
        if found is None:
            return None, 0
        self._files[file_id] = found
        return found

    async def _raw(self, batch_id: str) -> BatchJob:
        return await self._retrying(lambda: self._client.batches.retrieve(batch_id))

    async def _ended(self, batch: RemoteBatch) -> BatchJob:
        known = batch.handle if isinstance(batch.handle, BatchJob) else None
        if known is None or _PHASES.get(known.status or "") is not Phase.ENDED:
            known = await self._raw(batch.id)
        return known

    async def _retrying(
        self, call: Callable[[], Awaitable[T]], *, retry_on: tuple[type[APIError], ...] | None = None
    ) -> T:
        return await retrying(
            call, translate=translate_errors, clock=self._clock, retries=self.settings.api_retries, retry_on=retry_on
        )


def _intent_of(name: str) -> str | None:
    matched = _NAME.match(name)
    return matched.group(1) if matched else None
