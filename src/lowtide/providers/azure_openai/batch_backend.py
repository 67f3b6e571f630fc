"""Azure OpenAI's Batch API as a `BatchBackend`: OpenAI's backend (upload the input file with `purpose="batch"`,
create the batch with `completion_window="24h"` and lowtide's intent id in its `metadata`, which Azure's API takes
and echoes since 2024-10-21, poll it, read its output and error files), at Azure's paths through `AsyncAzureOpenAI`,
with Azure's url (`/chat/completions`) and its limit of files a resource holds, checked before uploading."""

from __future__ import annotations

from openai import AsyncAzureOpenAI

from lowtide.batching.backend import BatchCodec, CreateSteps, RemoteBatch
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.errors import InvalidRequestError
from lowtide.providers.azure_openai.batch_codec import AzureBatchCodec
from lowtide.providers.azure_openai.requests import BATCH_URL
from lowtide.providers.openai.batch_backend import OpenAIBatchBackend

__all__ = ["AzureBatchBackend"]


class AzureBatchBackend(OpenAIBatchBackend):
    """Azure's batches through one `AsyncAzureOpenAI` client (its own retries off: lowtide decides)."""

    codec: BatchCodec = AzureBatchCodec()
    owner = "Azure OpenAI"
    endpoints = (BATCH_URL,)

    def __init__(
        self, client: AsyncAzureOpenAI, *, owns_client: bool, clock: Clock, settings: BatchSettings, max_files: int
    ) -> None:
        super().__init__(client, owns_client=owns_client, clock=clock, settings=settings)
        # What the ledger records of where a batch lives: the resource's endpoint, as `AZURE_OPENAI_ENDPOINT` names
        # it (the client's base URL less the `/openai` the SDK adds), so that `lowtide collect` builds its client
        # from it as an actor does.
        self._endpoint = self._endpoint.removesuffix("/openai")
        self.max_files = max_files
        """The most files the resource may hold (Azure's 500): a batch is refused before its upload at that count."""

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Refuse the batch before its file is sent when the resource holds as many files as Azure allows (the
        upload would be refused); else create it as OpenAI's are."""
        await self._check_room()
        return await super().create(body, count, intent_id=intent_id, steps=steps)

    async def _check_room(self) -> None:
        async def count() -> int:
            return len([file async for file in self._client.files.list()])

        held = await self._retrying(count)
        if held >= self.max_files:
            raise InvalidRequestError(
                f"The Azure OpenAI resource at {self.endpoint} holds {held} files, the most it may "
                f"({self.max_files}): delete some (lowtide deletes each batch's input file once its answers are "
                "stored) before sending another batch.",
                error_type="too_many_files",
            )
