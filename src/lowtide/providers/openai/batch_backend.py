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
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AbstractContextManager
from typing import Literal, cast

from openai import AsyncOpenAI
from openai.pagination import AsyncCursorPage
from openai.types import Batch

from lowtide.batching.backend import (
    BatchCodec,
    CreateSteps,
    RemoteBatch,
)
from lowtide.errors import InvalidRequestError, RateLimitError
from lowtide.providers.openai.batch_codec import OpenAIBatchCodec
from lowtide.providers.openai.errors import translate_errors
from lowtide.providers.openai.remote import INTENT_KEY, OpenAIShapedHooks, remote_batch
from lowtide.providers.openai_compatible.batch_backend import INPUT_FILE_STEP, FileBatchBackend

__all__ = ["OpenAIBatchBackend"]

log = logging.getLogger(__name__)

ENDPOINT_STEP = "endpoint"
BatchEndpoint = Literal["/v1/responses", "/v1/chat/completions"]


class OpenAIBatchBackend(OpenAIShapedHooks[Batch], FileBatchBackend[AsyncOpenAI, Batch]):
    """The Batch API through one SDK client (its own retries off: lowtide decides what is retried): the files, the
    results and the clean-up are the OpenAI-compatible base's; the endpoint a batch is sent to, the intent id in its
    metadata and the listings are OpenAI's own."""

    codec: BatchCodec = OpenAIBatchCodec()
    owner = "OpenAI"
    handle = Batch
    endpoints: tuple[str, ...] = ("/v1/responses", "/v1/chat/completions")
    """The urls a batch may be sent to, as its input lines and its create name them (Azure's differ)."""

    # The batch's life: a create also records the endpoint its lines name, so that a resume sends it there.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Upload the input file, record it (and the endpoint) as steps, then create the batch naming the intent in
        its metadata."""
        url = self._batch_url(json.loads(body.split(b"\n", 1)[0]).get("url"))
        file_id = await self._upload(body, intent_id, count)
        await steps.done(ENDPOINT_STEP, url)
        await steps.done(INPUT_FILE_STEP, file_id)
        return await self._create_at(file_id, url, count, intent_id=intent_id)

    def resumable(self, steps: Mapping[str, str]) -> bool:
        return INPUT_FILE_STEP in steps and steps.get(ENDPOINT_STEP) in self.endpoints

    async def _create_again(self, file_id: str, done: Mapping[str, str], count: int, *, intent_id: str) -> RemoteBatch:
        return await self._create_at(file_id, self._batch_url(done[ENDPOINT_STEP]), count, intent_id=intent_id)

    def _batch_url(self, url: object) -> str:
        if isinstance(url, str) and url in self.endpoints:
            return url
        raise InvalidRequestError(f"lowtide sends batches to {' or '.join(self.endpoints)}, not {url!r}.")

    async def _create_at(self, file_id: str, url: str, count: int, *, intent_id: str) -> RemoteBatch:
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

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        async def listing() -> AsyncGenerator[RemoteBatch, None]:
            async for batch in self._client.batches.list(limit=self.list_page):
                yield remote_batch(batch)

        return await self._newest_since(listing, created_after)

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

    # The base's hooks.

    async def _upload(self, body: bytes, intent_id: str, count: int) -> str:
        async def upload() -> str:
            uploaded = await self._client.files.create(
                file=(f"lowtide-{intent_id}.jsonl", body, "application/jsonl"), purpose="batch"
            )
            return uploaded.id

        return await self._retrying(upload)

    async def _file_info(self, file_id: str) -> object:
        return await self._client.files.retrieve(file_id)

    async def _fetch(self, batch_id: str) -> Batch:
        return await self._client.batches.retrieve(batch_id)

    async def _cancel(self, batch_id: str) -> Batch:
        return await self._client.batches.cancel(batch_id)

    def _translate(self) -> AbstractContextManager[None]:
        return translate_errors()
