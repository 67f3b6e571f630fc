"""What every OpenAI-compatible Batch API does alike, as a `BatchBackend` base: a create is two calls (upload the
input file, then create the batch from it), the file's id recorded as the create's `input_file` step so that an
intent given up has its file deleted (`abandon`), even by another process after a crash, and one whose create never
reached the API is created from that file (`resume`); results are the output file's lines, then the error file's;
the input file is deleted once the answers are stored. What differs (its batch's shape and statuses, how a create
is found again, how it lists) is each dialect's backend, in its own folder."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Generic, Protocol, TypeVar

from lowtide import NotFoundError
from lowtide.config.actors import BatchSettings
from lowtide.core.clock import Clock
from lowtide.providers import (
    CreateSteps,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    file_reader,
    first_line_reader,
    read_files,
)
from lowtide.providers.openai.codec import CANCELED_CODE, EXPIRED_CODE
from lowtide.providers.openai.input_files import BatchFiles, InputFiles
from lowtide.providers.openai_compatible.client_backend import ClientBatchBackend
from lowtide.providers.openai_compatible.sdk import FilesClient

__all__ = ["INPUT_FILE_STEP", "FileBatchBackend"]

log = logging.getLogger(__name__)

INPUT_FILE_STEP = "input_file"
F = TypeVar("F", bound=FilesClient)


class _Handle(BatchFiles, Protocol):
    """What the base reads of a batch as the SDK gives it: its files, and its status."""

    @property
    def status(self) -> str | None: ...


H = TypeVar("H", bound=_Handle)


class FileBatchBackend(InputFiles, ClientBatchBackend[F], Generic[F, H]):
    """A Batch API of OpenAI's files through one SDK client (its own retries off: lowtide decides what is retried).
    A dialect's backend names its `sdk`, `owner`, `handle` class, and fills in the hooks below."""

    finds_by_intent = True
    input_step = INPUT_FILE_STEP
    owner: str
    """The API's name in a log line or an error (`Groq`)."""
    handle: type[H]
    """The SDK's class of a batch, as `RemoteBatch.handle` holds it."""

    def __init__(self, client: F, *, owns_client: bool, clock: Clock, settings: BatchSettings) -> None:
        super().__init__(client, owns_client=owns_client, clock=clock, settings=settings)
        self._read_file = file_reader(self._client.files.with_streaming_response.content, self._retrying)
        self._first_line = first_line_reader(self._client.files.with_streaming_response.content, self._retrying)

    # The hooks of a dialect.

    async def _upload(self, body: bytes, intent_id: str, count: int) -> str:
        """Upload the input file (retried), its id."""
        raise NotImplementedError

    async def _file_info(self, file_id: str) -> object:
        """The stored file (`NotFoundError` when it is gone)."""
        raise NotImplementedError

    async def _create(self, file_id: str, count: int, *, intent_id: str) -> RemoteBatch:
        """Create the batch from the uploaded input file (retried only when refused outright)."""
        raise NotImplementedError

    async def _fetch(self, batch_id: str) -> H:
        """The batch as the SDK gives it."""
        raise NotImplementedError

    async def _cancel(self, batch_id: str) -> H:
        raise NotImplementedError

    async def _remote(self, raw: H) -> RemoteBatch:
        """The neutral record of a batch."""
        raise NotImplementedError

    def _has_ended(self, raw: H) -> bool:
        raise NotImplementedError

    def _finished(self, batch: RemoteBatch, known: H) -> int:
        """How many requests an ended batch finished (its results files hold at least as many lines)."""
        raise NotImplementedError

    def _failure(self, known: H | None) -> tuple[str, str]:
        """The code and message of a batch that failed as a whole."""
        raise NotImplementedError

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Upload the input file, record it as a step, then create the batch from it."""
        file_id = await self._upload(body, intent_id, count)
        await steps.done(INPUT_FILE_STEP, file_id)
        return await self._create(file_id, count, intent_id=intent_id)

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The batch created from the input file the intent uploaded before (a crash came between the upload and the
        create), not uploaded again; None when that file is gone."""
        file_id = done[INPUT_FILE_STEP]
        try:
            await self._retrying(lambda: self._file_info(file_id))
        except NotFoundError:
            return None
        return await self._create_again(file_id, done, count, intent_id=intent_id)

    async def _create_again(self, file_id: str, done: Mapping[str, str], count: int, *, intent_id: str) -> RemoteBatch:
        """The create of a resumed intent, from its uploaded file and the steps it recorded (`done`)."""
        return await self._create(file_id, count, intent_id=intent_id)

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return await self._remote(await self._raw(batch_id))

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The output file's lines, then the error file's, streamed (`handle` reads them by custom id). A download
        broken off is fetched again from the start; one that ends cleanly with fewer lines than the batch finished
        is fetched again too, and after the last retry what it holds is taken."""
        known = await self._ended(batch)
        await read_files(
            self._read_file,
            (known.output_file_id, known.error_file_id),
            handle,
            finished=self._finished(batch, known),
            retries=self.settings.api_retries,
            batch=self._named(batch.id),
        )

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A canceled batch leaves the requests it never ran out of both files; a batch that failed validation ran
        none of them; an expired one is taken at its word when it does not list them."""
        if batch.status == "cancelled":
            return {"custom_id": custom_id, "error": {"code": CANCELED_CODE, "message": "The batch was cancelled."}}
        if batch.status == "expired":
            return {"custom_id": custom_id, "error": {"code": EXPIRED_CODE, "message": "The batch expired."}}
        if batch.status == "failed":
            code, message = self._failure(batch.handle if isinstance(batch.handle, self.handle) else None)
            return {"custom_id": custom_id, "error": {"code": code, "message": message}}
        return None

    async def cancel(self, batch_id: str) -> RemoteBatch:
        raw = await self._retrying(lambda: self._cancel(batch_id))
        log.info("Cancellation of %s requested (%s).", self._named(batch_id), raw.status)
        return await self._remote(raw)

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the uploaded input file (unless `batch.keep_uploads`): the answers are stored."""
        if self.settings.keep_uploads:
            return
        known = await self._known(batch)
        if known.input_file_id:
            await self._delete_input(known.input_file_id)

    async def _delete_input(self, uploaded: str) -> None:
        try:
            await self._retrying(lambda: self._client.files.delete(uploaded))
        except NotFoundError:
            return  # deleted already

    # Inside.

    async def _raw(self, batch_id: str) -> H:
        return await self._retrying(lambda: self._fetch(batch_id))

    async def _known(self, batch: RemoteBatch) -> H:
        return batch.handle if isinstance(batch.handle, self.handle) else await self._raw(batch.id)

    async def _ended(self, batch: RemoteBatch) -> H:
        known = batch.handle if isinstance(batch.handle, self.handle) else None
        if known is None or not self._has_ended(known):
            known = await self._raw(batch.id)
        return known

    def _named(self, batch_id: str) -> str:
        """A batch as a log line or an error names it."""
        return f"{self.owner} batch {batch_id}"
