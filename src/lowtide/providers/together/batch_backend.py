"""Together's Batch API as a `BatchBackend` (the base's `FileBatchBackend`, with Together's hooks): its three-step
upload (`files.upload`, `purpose: batch-api`) and its job, which differs from OpenAI's batch: upper-case statuses,
times as dates, a progress percentage instead of request counts, no metadata. Every shape, status name and id rule
of it stays here.

Exactly-once without metadata or an idempotency key: the input file is uploaded once per intent under a name made
from it, `lowtide-<intent id>-<request count>.jsonl`, recorded as the create's `input_file` step before the job is
created; a create whose outcome is unknown is found by listing the files for that name and the jobs for that input
file (`finds_by_intent`): one input file, one job. The name also gives a job's request count (the job reports none).
Together answers an upload of bytes it holds already with that file (409): a retried upload is not stored twice.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

from together import AsyncTogether, omit
from together.types import BatchJob

from lowtide import APIError, NotFoundError, RateLimitError
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.providers import Counts, Phase, RemoteBatch
from lowtide.providers.openai_compatible.batch import ChatBatchCodec
from lowtide.providers.openai_compatible.batch_backend import INPUT_FILE_STEP, FileBatchBackend
from lowtide.providers.openai_compatible.chat import CHAT_URL
from lowtide.providers.together.dialect import TOGETHER
from lowtide.providers.together.sdk import TOGETHER_SDK

__all__ = ["INPUT_FILE_STEP", "TogetherBatchBackend", "file_name"]

log = logging.getLogger(__name__)

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


def file_name(intent_id: str, count: int) -> str:
    """The name an intent's input file is uploaded under: its intent id and how many requests it holds."""
    return f"lowtide-{intent_id}-{count}.jsonl"


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


class TogetherBatchBackend(FileBatchBackend[AsyncTogether, BatchJob]):
    """The Batch API through one `AsyncTogether` client, its jobs created at the actor's `priority`."""

    codec = ChatBatchCodec(TOGETHER)
    sdk = TOGETHER_SDK
    owner = TOGETHER.owner
    handle = BatchJob

    def __init__(
        self,
        client: AsyncTogether,
        *,
        owns_client: bool,
        clock: Clock,
        settings: BatchSettings,
        priority: int | None = None,
    ) -> None:
        super().__init__(client, owns_client=owns_client, clock=clock, settings=settings)
        self.priority = priority
        # What a job's input file says of it (its intent and request count), by file id; and the file each intent of
        # this process uploaded (Together may answer an upload with a file it held already, named otherwise).
        self._files: dict[str, tuple[str, int]] = {}
        self._uploaded: dict[str, str] = {}

    async def _upload(self, body: bytes, intent_id: str, count: int) -> str:
        name = file_name(intent_id, count)

        async def upload() -> str:
            with tempfile.TemporaryDirectory(prefix="lowtide-together-") as folder:
                path = Path(folder) / name
                path.write_bytes(body)
                uploaded = await self._client.files.upload(path, purpose="batch-api", check=False)
            return uploaded.id

        file_id = await self._retrying(upload)
        self._files[file_id] = (intent_id, count)
        self._uploaded[intent_id] = file_id
        return file_id

    async def _file_info(self, file_id: str) -> object:
        return await self._client.files.retrieve(file_id)

    async def _create(self, file_id: str, count: int, *, intent_id: str) -> RemoteBatch:
        self._files.setdefault(file_id, (intent_id, count))

        async def create() -> BatchJob:
            priority = self.priority if self.priority is not None else omit
            created = await self._client.batches.create(endpoint=CHAT_URL, input_file_id=file_id, priority=priority)
            if created.job is None:
                raise APIError("Together answered the create without its job.")
            if created.warning:
                log.warning("Together created job %s with a warning: %s", created.job.id, created.warning)
            return created.job

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        job = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted Together batch %s with %d request(s).", job.id, count)
        return await self._remote(job)

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        """The job made from the intent's input file: the file found by its name (or as this process uploaded it),
        the job by its input file."""
        files = await self._retrying(self._client.files.list)
        ids = {item.id for item in files.data if _parts(item.filename)[0] == intent_id}
        mine = self._uploaded.get(intent_id)
        if mine is not None:
            ids.add(mine)
        if not ids:
            return None
        for job in await self._retrying(self._client.batches.list):
            if job.input_file_id in ids and job.id:
                return await self._remote(job)
        return None

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job of the account, from its one answer (Together's list is a bare list, no pages), newest first."""
        jobs = [job for job in await self._retrying(self._client.batches.list) if job.id]
        jobs.sort(key=lambda job: _epoch(job.created_at) or 0.0, reverse=True)
        for job in jobs:
            yield await self._remote(job)

    async def _fetch(self, batch_id: str) -> BatchJob:
        return await self._client.batches.retrieve(batch_id)

    async def _cancel(self, batch_id: str) -> BatchJob:
        return await self._client.batches.cancel(batch_id)

    def _has_ended(self, raw: BatchJob) -> bool:
        return _PHASES.get(raw.status or "") is Phase.ENDED

    def _finished(self, batch: RemoteBatch, known: BatchJob) -> int:
        return batch.counts.total if known.status == "COMPLETED" else 0

    def _failure(self, known: BatchJob | None) -> tuple[str, str]:
        reason = known.error if known is not None and known.error else "The batch failed before any request ran."
        return "batch_failed", reason

    async def _remote(self, raw: BatchJob) -> RemoteBatch:
        """The neutral record of a Together job. The job reports no request counts: its input file's name gives the
        total (looked up once per file), its progress how many finished; an ended job's requests are counted as its
        status says until its files are read."""
        status = raw.status or "UNKNOWN"
        phase = _PHASES.get(status, Phase.RUNNING)
        intent_id, total = await self._file_of(raw.input_file_id)
        done = min(total, round(total * (raw.progress or 0.0) / 100))
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
        created = _epoch(raw.created_at) or 0.0
        return RemoteBatch(
            id=raw.id or "",
            phase=phase,
            status=status.lower(),
            created_at=created,
            counts=counts,
            ended_at=(_epoch(raw.completed_at) or created) if phase is Phase.ENDED else None,
            cancel_requested=status == "CANCELLED",
            intent_id=intent_id,
            handle=raw,
        )

    async def _file_of(self, file_id: str | None) -> tuple[str | None, int]:
        """The intent and request count a job's input file names (None and 0 for a file that is not lowtide's, or
        gone)."""
        if not file_id:
            return None, 0
        if file_id not in self._files:
            try:
                stored = await self._retrying(lambda: self._client.files.retrieve(file_id))
            except NotFoundError:
                return None, 0
            intent_id, count = _parts(stored.filename)
            if intent_id is None:
                return None, 0
            self._files[file_id] = (intent_id, count)
        return self._files[file_id]


def _parts(name: str) -> tuple[str | None, int]:
    matched = _NAME.match(name)
    return (matched.group(1), int(matched.group(2))) if matched else (None, 0)
