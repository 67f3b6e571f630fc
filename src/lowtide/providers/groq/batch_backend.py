"""Groq's Batch API as a `BatchBackend`: OpenAI's in shape (its statuses, its files, its request counts), so a Groq
batch is read as an OpenAI `Batch` and OpenAI's `remote_batch` makes the neutral record of it; what is Groq's (its
SDK, its paths under `/openai/v1/`, its listing without pages, its completion window) is here, the rest is the
base's (`FileBatchBackend`). Groq's `batches.create` takes `metadata`, so a create whose outcome is unknown is found
exactly by the intent id it carries (`finds_by_intent`), never guessed at."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from groq import AsyncGroq
from groq import BaseModel as GroqModel
from groq.types import BatchRetrieveResponse as Batch

from lowtide import APIError, RateLimitError
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.providers import RemoteBatch
from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.groq.sdk import GROQ_SDK
from lowtide.providers.openai.remote import INTENT_KEY, OpenAIShapedHooks, remote_batch
from lowtide.providers.openai_compatible.batch import ChatBatchCodec
from lowtide.providers.openai_compatible.batch_backend import INPUT_FILE_STEP, FileBatchBackend
from lowtide.providers.openai_compatible.chat import CHAT_URL

__all__ = ["INPUT_FILE_STEP", "INTENT_KEY", "GroqBatchBackend", "as_batch"]

log = logging.getLogger(__name__)


def as_batch(raw: GroqModel) -> Batch:
    """A Groq batch (from create, retrieve, list or cancel: each its own SDK class, one shape) as one of them, built
    without validation so that a status or field newer than the SDK is kept, not refused (read as OpenAI's shape:
    `providers.openai.remote`)."""
    return Batch.construct(None, **raw.to_dict())


class GroqBatchBackend(OpenAIShapedHooks[Batch], FileBatchBackend[AsyncGroq, Batch]):
    """The Batch API through one `AsyncGroq` client, its batches created within `completion_window`."""

    codec = ChatBatchCodec(GROQ)
    sdk = GROQ_SDK
    owner = GROQ.owner
    handle = Batch

    def __init__(
        self,
        client: AsyncGroq,
        *,
        owns_client: bool,
        clock: Clock,
        settings: BatchSettings,
        completion_window: str = "24h",
    ) -> None:
        super().__init__(client, owns_client=owns_client, clock=clock, settings=settings)
        self.completion_window = completion_window

    async def _upload(self, body: bytes, intent_id: str, count: int) -> str:
        async def upload() -> str:
            uploaded = await self._client.files.create(
                file=(f"lowtide-{intent_id}.jsonl", body, "application/jsonl"), purpose="batch"
            )
            if uploaded.id is None:
                raise APIError("Groq stored the input file without naming it.")
            return uploaded.id

        return await self._retrying(upload)

    async def _file_info(self, file_id: str) -> object:
        return await self._client.files.info(file_id)

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

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        """Groq lists every batch of the organisation in one answer (no pages)."""
        listed = await self._retrying(self._client.batches.list)
        found = [remote_batch(as_batch(batch)) for batch in listed.data if batch.created_at >= created_after]
        return sorted(found, key=lambda batch: batch.created_at, reverse=True)

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every batch of the organisation, from its one answer (Groq's list has no pages), newest first."""
        for batch in await self.recent(created_after=0.0):
            yield batch

    async def _fetch(self, batch_id: str) -> Batch:
        return as_batch(await self._client.batches.retrieve(batch_id))

    async def _cancel(self, batch_id: str) -> Batch:
        return as_batch(await self._client.batches.cancel(batch_id))
