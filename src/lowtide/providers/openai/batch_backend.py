"""OpenAI's Batch API as a `BatchBackend`: upload the input file, create the batch with lowtide's intent id in its
metadata, poll it, read its output and error files. Every shape, status name and id rule of it stays here.

A create is two calls. The uploaded file's id is recorded as a step of the create (`CreateSteps`), so that an
intent given up (refused, or never reaching the API) has its file deleted (`abandon`), even by another process after
a crash. The batch carries the intent id in `metadata`, so a create whose outcome is unknown is found exactly
(`finds_by_intent`), never guessed at by size.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Literal, TypeVar, cast

from openai import AsyncOpenAI
from openai.pagination import AsyncCursorPage
from openai.types import Batch

from lowtide.batching.backend import (
    BatchBackend,
    BatchCodec,
    CreateSteps,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    credential_of,
)
from lowtide.batching.lines import file_reader, read_files
from lowtide.batching.rebuild_reads import first_line_reader
from lowtide.batching.retrying import retrying
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.errors import APIError, InvalidRequestError, NotFoundError, RateLimitError
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec
from lowtide.providers.openai.codec import CANCELED_CODE, EXPIRED_CODE
from lowtide.providers.openai.errors import translate_errors
from lowtide.providers.openai.input_files import InputFiles
from lowtide.providers.openai.remote import ENDED_STATUSES, INTENT_KEY, failure_of, remote_batch

__all__ = ["OpenAIBatchBackend"]

log = logging.getLogger(__name__)

INPUT_FILE_STEP = "input_file"
ENDPOINT_STEP = "endpoint"
BatchEndpoint = Literal["/v1/responses", "/v1/chat/completions"]
T = TypeVar("T")


class OpenAIBatchBackend(InputFiles, BatchBackend):
    """The Batch API through one SDK client (its own retries off: lowtide decides what is retried)."""

    codec: BatchCodec = OpenAIBatchCodec()
    finds_by_intent = True
    endpoints: tuple[str, ...] = ("/v1/responses", "/v1/chat/completions")
    """The urls a batch may be sent to, as its input lines and its create name them (Azure's differ)."""

    def __init__(self, client: AsyncOpenAI, *, owns_client: bool, clock: Clock, settings: BatchSettings) -> None:
        self._client = client.with_options(max_retries=0)
        self._closable = client
        self._owns_client = owns_client
        self._clock = clock
        self.settings = settings
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
        """Upload the input file, record it (and the endpoint) as steps, then create the batch naming the intent in
        its metadata."""
        url = self._batch_url(json.loads(body.split(b"\n", 1)[0]).get("url"))
        file_id = await self._upload(body, intent_id)
        await steps.done(ENDPOINT_STEP, url)
        await steps.done(INPUT_FILE_STEP, file_id)
        return await self._create(file_id, url, count, intent_id=intent_id)

    def resumable(self, steps: Mapping[str, str]) -> bool:
        return INPUT_FILE_STEP in steps and steps.get(ENDPOINT_STEP) in self.endpoints

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The batch created from the input file the intent uploaded before (a crash came between the upload and the
        create), not uploaded again; None when that file is gone."""
        file_id = done[INPUT_FILE_STEP]
        try:
            await self._retrying(lambda: self._client.files.retrieve(file_id))
        except NotFoundError:
            return None
        return await self._create(file_id, self._batch_url(done[ENDPOINT_STEP]), count, intent_id=intent_id)

    def _batch_url(self, url: object) -> str:
        if isinstance(url, str) and url in self.endpoints:
            return url
        raise InvalidRequestError(f"lowtide sends batches to {' or '.join(self.endpoints)}, not {url!r}.")

    async def _create(self, file_id: str, url: str, count: int, *, intent_id: str) -> RemoteBatch:
        async def create() -> Batch:
            return await self._client.batches.create(
                input_file_id=file_id,
                # The SDK types OpenAI's own urls; an API of OpenAI's shapes may name them otherwise (Azure's).
                endpoint=cast("BatchEndpoint", url),
                completion_window="24h",
                metadata={INTENT_KEY: intent_id},
            )

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        batch = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted batch %s with %d request(s).", batch.id, count)
        return remote_batch(batch)

    async def _upload(self, body: bytes, intent_id: str) -> str:
        async def upload() -> str:
            uploaded = await self._client.files.create(
                file=(f"lowtide-{intent_id}.jsonl", body, "application/jsonl"), purpose="batch"
            )
            return uploaded.id

        return await self._retrying(upload)

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        found: list[RemoteBatch] = []

        async def listing() -> None:
            found.clear()
            async for batch in self._client.batches.list(limit=self.list_page):
                if batch.created_at < created_after:
                    break  # listed newest first
                found.append(remote_batch(batch))

        await self._retrying(listing)
        return found

    async def find_by_intent(self, intent_id: str, *, created_after: float) -> RemoteBatch | None:
        for batch in await self.recent(created_after=created_after):
            if batch.intent_id == intent_id:
                return batch
        return None

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._retrying(lambda: self._client.batches.retrieve(batch_id)))

    # What a rebuild reads (`lowtide ledger rebuild`).

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every batch of the organisation, newest first, a page of 100 at a time (`after` the last one shown)."""
        after: str | None = None
        while True:

            async def page(cursor: str | None = after) -> AsyncCursorPage[Batch]:
                if cursor is None:
                    return await self._client.batches.list(limit=self.list_page)
                return await self._client.batches.list(limit=self.list_page, after=cursor)

            listed = await self._retrying(page)
            for batch in listed.data:
                yield remote_batch(batch)
            if not listed.has_more or not listed.data:
                return
            after = listed.data[-1].id

    async def _known(self, batch: RemoteBatch) -> Batch:
        return batch.handle if isinstance(batch.handle, Batch) else await self._raw(batch.id)

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The output file's lines, then the error file's, streamed; a whole line that cannot be read goes to `handle`
        as an `UnreadableLine`. A download broken off is fetched again from the start (so `handle` sees lines twice);
        one that ends cleanly with fewer lines than the batch counts finished is fetched again too, and after the last
        retry what it holds is taken (the API wrote no more: the rest were lost)."""
        known = await self._ended(batch)
        finished = known.request_counts.completed + known.request_counts.failed if known.request_counts else 0
        files = (known.output_file_id, known.error_file_id)
        await read_files(
            self._read_file,
            files,
            handle,
            finished=finished,
            retries=self.settings.api_retries,
            batch=f"Batch {batch.id}",
        )

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A canceled batch leaves the requests it never ran out of both files; a batch that failed validation ran
        none of them; an expired one should list them, and is taken at its word when it does not."""
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
        batch = await self._retrying(lambda: self._client.batches.cancel(batch_id))
        log.info("Cancellation of batch %s requested (%s).", batch_id, batch.status)
        return remote_batch(batch)

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the uploaded input file (unless `batch.keep_uploads`): the answers are stored, and OpenAI would
        keep it (and count it against the organisation's storage) for 30 days."""
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
        return await self._retrying(lambda: self._client.batches.retrieve(batch_id))

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
