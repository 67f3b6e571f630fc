"""Groq's Batch API as a `BatchBackend`: upload the input file, create the batch with lowtide's intent id in its
metadata and the actor's completion window, poll it, read its output and error files. The API is OpenAI's in shape
(its statuses, its files, its request counts), so a Groq batch is read as an OpenAI `Batch` and OpenAI's
`remote_batch` makes the neutral record of it; what is Groq's (its SDK, its paths under `/openai/v1/`, its listing
without pages, its window) is here.

A create is two calls. The uploaded file's id is recorded as a step of the create, so that an intent given up has its
file deleted (`abandon`), even by another process after a crash, and one whose create never reached the API is
created from that file (`resume`). Groq's `batches.create` takes `metadata`, so a create whose outcome is unknown is
found exactly by the intent id it carries (`finds_by_intent`), never guessed at.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TypeVar

from groq import AsyncGroq
from groq import BaseModel as GroqModel
from groq.types import BatchRetrieveResponse as Batch

from lowtide import APIError, NotFoundError, RateLimitError
from lowtide.clock import Clock
from lowtide.config import BatchSettings
from lowtide.providers import (
    BatchBackend,
    BatchCodec,
    CreateSteps,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    credential_of,
    file_reader,
    first_line_reader,
    read_files,
    retrying,
)
from lowtide.providers.groq.batch_codec import GroqBatchCodec
from lowtide.providers.groq.chat import CHAT_URL
from lowtide.providers.groq.errors import translate_errors
from lowtide.providers.openai.codec import CANCELED_CODE, EXPIRED_CODE
from lowtide.providers.openai.input_files import InputFiles
from lowtide.providers.openai.remote import ENDED_STATUSES, INTENT_KEY, failure_of, remote_batch

__all__ = ["INPUT_FILE_STEP", "INTENT_KEY", "GroqBatchBackend", "as_batch"]

log = logging.getLogger(__name__)

INPUT_FILE_STEP = "input_file"
T = TypeVar("T")


def as_batch(raw: GroqModel) -> Batch:
    """A Groq batch (from create, retrieve, list or cancel: each its own SDK class, one shape) as one of them, built
    without validation so that a status or field newer than the SDK is kept, not refused (read as OpenAI's shape:
    `providers.openai.remote`)."""
    return Batch.construct(None, **raw.to_dict())


class GroqBatchBackend(InputFiles, BatchBackend):
    """The Batch API through one `AsyncGroq` client (its own retries off: lowtide decides what is retried)."""

    codec: BatchCodec = GroqBatchCodec()
    finds_by_intent = True

    def __init__(
        self,
        client: AsyncGroq,
        *,
        owns_client: bool,
        clock: Clock,
        settings: BatchSettings,
        completion_window: str = "24h",
    ) -> None:
        self._client = client.with_options(max_retries=0)
        self._closable = client
        self._owns_client = owns_client
        self._clock = clock
        self.settings = settings
        self.completion_window = completion_window
        self._endpoint = str(self._client.base_url).rstrip("/")
        self._credential = credential_of(self._client.api_key, owned=owns_client, client=client)
        self._read_file = file_reader(self._client.files.with_streaming_response.content, self._retrying)
        self._first_line = first_line_reader(self._client.files.with_streaming_response.content, self._retrying)

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def credential(self) -> str:
        return self._credential

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Upload the input file, record it as a step, then create the batch naming the intent in its metadata."""
        file_id = await self._upload(body, intent_id)
        await steps.done(INPUT_FILE_STEP, file_id)
        return await self._create(file_id, count, intent_id=intent_id)

    def resumable(self, steps: Mapping[str, str]) -> bool:
        return INPUT_FILE_STEP in steps

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The batch created from the input file the intent uploaded before (a crash came between the upload and the
        create), not uploaded again; None when that file is gone."""
        file_id = done[INPUT_FILE_STEP]
        try:
            await self._retrying(lambda: self._client.files.info(file_id))
        except NotFoundError:
            return None
        return await self._create(file_id, count, intent_id=intent_id)

    async def _create(self, file_id: str, count: int, *, intent_id: str) -> RemoteBatch:
        async def create() -> Batch:
            return as_batch(
                await self._client.batches.create(
                    input_file_id=file_id,
                    endpoint=CHAT_URL,
                    completion_window=self.completion_window,
                    metadata={INTENT_KEY: intent_id},
                )
            )

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        batch = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted Groq batch %s with %d request(s).", batch.id, count)
        return remote_batch(batch)

    async def _upload(self, body: bytes, intent_id: str) -> str:
        async def upload() -> str:
            uploaded = await self._client.files.create(
                file=(f"lowtide-{intent_id}.jsonl", body, "application/jsonl"), purpose="batch"
            )
            if uploaded.id is None:
                raise APIError("Groq stored the input file without naming it.")
            return uploaded.id

        return await self._retrying(upload)

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        """Groq lists every batch of the organisation in one answer (no pages)."""
        listed = await self._retrying(self._client.batches.list)
        found = [remote_batch(as_batch(batch)) for batch in listed.data if batch.created_at >= created_after]
        return sorted(found, key=lambda batch: batch.created_at, reverse=True)

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        for batch in await self.recent(created_after=created_after):
            if batch.intent_id == intent_id:
                return batch
        return None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._raw(batch_id))

    # What a rebuild reads (`lowtide ledger rebuild`).

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every batch of the organisation, from its one answer (Groq's list has no pages), newest first."""
        for batch in await self.recent(created_after=0.0):
            yield batch

    async def _known(self, batch: RemoteBatch) -> Batch:
        return batch.handle if isinstance(batch.handle, Batch) else await self._raw(batch.id)

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The output file's lines, then the error file's, streamed (`handle` reads them by custom id). A download
        broken off is fetched again from the start; one that ends cleanly with fewer lines than the batch counts
        finished is fetched again too, and after the last retry what it holds is taken."""
        known = await self._ended(batch)
        counts = known.request_counts
        finished = counts.completed + counts.failed if counts is not None else 0
        files = (known.output_file_id, known.error_file_id)
        await read_files(
            self._read_file,
            files,
            handle,
            finished=finished,
            retries=self.settings.api_retries,
            batch=f"Groq batch {batch.id}",
        )

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A canceled batch leaves the requests it never ran out of both files; a batch that failed validation ran
        none of them; an expired one is taken at its word when it does not list them."""
        known = batch.handle if isinstance(batch.handle, Batch) else None
        if batch.status == "cancelled":
            return {"custom_id": custom_id, "error": {"code": CANCELED_CODE, "message": "The batch was cancelled."}}
        if batch.status == "expired":
            return {"custom_id": custom_id, "error": {"code": EXPIRED_CODE, "message": "The batch expired."}}
        if batch.status == "failed":
            code, message = failure_of(known)
            return {"custom_id": custom_id, "error": {"code": code, "message": message}}
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        batch = as_batch(await self._retrying(lambda: self._client.batches.cancel(batch_id)))
        log.info("Cancellation of Groq batch %s requested (%s).", batch_id, batch.status)
        return remote_batch(batch)

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the uploaded input file (unless `batch.keep_uploads`): the answers are stored."""
        if self.settings.keep_uploads:
            return
        known = batch.handle if isinstance(batch.handle, Batch) else await self._raw(batch.id)
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

    async def _raw(self, batch_id: str) -> Batch:
        async def retrieve() -> Batch:
            return as_batch(await self._client.batches.retrieve(batch_id))

        return await self._retrying(retrieve)

    async def _ended(self, batch: RemoteBatch) -> Batch:
        known = batch.handle if isinstance(batch.handle, Batch) else None
        if known is None or known.status not in ENDED_STATUSES:
            known = await self._raw(batch.id)
        return known

    async def _retrying(
        self, call: Callable[[], Awaitable[T]], *, retry_on: tuple[type[APIError], ...] | None = None
    ) -> T:
        return await retrying(
            call, translate=translate_errors, clock=self._clock, retries=self.settings.api_retries, retry_on=retry_on
        )
