"""The Gemini API's files and batch jobs, one method per route and free of HTTP, on the emulator's clock, settings
and faults. Raises `GeminiError`.

`created_custom_ids` counts, for every job created whose input could be read, one per request key in it (a request sent
in two jobs counts 2): the exactly-once evidence, as the other emulations keep it; `created_batches` counts every
job created. `fail_batches(n)` makes the next `n` jobs created end `BATCH_STATE_FAILED` (an internal error) when
their pending time ends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from lowtide.emulator.core.account import AccountBackend
from lowtide.emulator.core.emulation import Shared
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.gemini.batch_input import read_batch_body, read_batch_file
from lowtide.emulator.gemini.batch_results import inline_output, result_lines, settle_rows
from lowtide.emulator.gemini.batches import GeminiBatch, GeminiBatchStore, Row, render_batch
from lowtide.emulator.gemini.catalogue import served
from lowtide.emulator.gemini.errors import GeminiError, invalid_argument
from lowtide.emulator.gemini.files import GeminiFile, GeminiFileStore, render_file
from lowtide.emulator.gemini.names import new_batch_id, result_file_id
from lowtide.emulator.gemini.webhooks import gemini_webhooks
from lowtide.emulator.gemini.wire import RpcStatus

__all__ = ["MAX_FILE_BYTES", "MAX_INLINE_BYTES", "GeminiBackend", "Place"]

MAX_INLINE_BYTES = 20 * 1024 * 1024
"""The most a `batchGenerateContent` body may hold: larger batches go through a file."""
MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024
"""The most a file may hold."""
_INTERNAL: RpcStatus = {"code": 13, "message": "An internal error occurred while processing the batch."}


@dataclass(frozen=True)
class Place:
    """Where a call reached the API: its address as the caller saw it, and the API version it named."""

    base: str
    version: str


class GeminiBackend(AccountBackend):
    largest_file = MAX_FILE_BYTES

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.files = GeminiFileStore()
        self.batches = GeminiBatchStore()
        self.webhooks = gemini_webhooks(shared.clock, self.batches.find)
        self._failing: list[str | None] = []

    @property
    def max_inline_bytes(self) -> int:
        return self._shared.settings.max_batch_bytes or MAX_INLINE_BYTES

    def reset(self) -> None:
        super().reset()
        self.files.clear()
        self.batches.clear()
        self.webhooks.reset()
        self._failing.clear()

    def fail_batches(self, times: int = 1, message: str | None = None) -> None:
        """The next `times` jobs created end `BATCH_STATE_FAILED` when their pending time ends."""
        self._failing.extend([message] * times)

    # -- files ---------------------------------------------------------------------------------------------------

    def get_file(self, file_id: str, place: Place) -> JsonObject:
        self._settle_ended()
        return render_file(self.files.find(file_id, self.now()), place.base, place.version)

    def list_files(self, page_size: str | None, page_token: str | None, place: Place) -> JsonObject:
        self._settle_ended()
        chosen, token = self.files.page(self.now(), page_size, page_token)
        page: JsonObject = {"files": [render_file(stored, place.base, place.version) for stored in chosen]}
        if token is not None:
            page["nextPageToken"] = token
        return page

    def delete_file(self, file_id: str) -> JsonObject:
        self._settle_ended()
        self.files.find(file_id, self.now())
        self.files.delete(file_id)
        for batch in self.batches.oldest_first():
            if result_file_id(batch.id) == file_id:
                batch.result_deleted = True
        return {}

    def download(self, file_id: str) -> Iterator[bytes]:
        self._settle_ended()
        stored = self.files.find(file_id, self.now())
        if not stored.generated:
            raise invalid_argument(
                f"Only generated files can be downloaded: {stored.name} was uploaded, and uploaded files cannot be."
            )
        return stored.pieces()

    # -- batches -------------------------------------------------------------------------------------------------

    def create_batch(self, model_id: str, body: object, version: str) -> JsonObject:
        model = served(model_id, self._shared.settings.extra_models, version, "batchGenerateContent")
        spec = read_batch_body(body)
        requests = spec.requests
        failure: RpcStatus | None = None
        if spec.input_file is not None:
            file_id = spec.input_file.removeprefix("files/")
            stored = self.files.get(file_id, self.now())
            if stored is None:
                raise GeminiError(404, f"File {spec.input_file} not found.")
            requests, failure = read_batch_file(spec.input_file, b"".join(stored.pieces()))
        if failure is None and self._failing:
            message = self._failing.pop(0)
            failure = RpcStatus(code=13, message=message) if message is not None else _INTERNAL
        batch = GeminiBatch(
            id=new_batch_id(),
            model=model.id,
            display_name=spec.display_name,
            created_at=self.now(),
            requests=requests,
            input_file=spec.input_file,
            processing_seconds=self._shared.settings.processing_seconds,
            cancel_seconds=self._shared.settings.cancel_seconds,
            failure=failure,
            priority=spec.priority,
            webhook_uris=spec.webhook_uris,
            user_metadata=spec.user_metadata,
        )
        self.batches.add(batch)
        self.created_batches += 1
        if failure is None:
            self.created_custom_ids.update(request.key for request in requests if request.key is not None)
        # The create answer shows the job pending even when it is due to end at once, as the API's does.
        return render_batch(batch, batch.created_at, rows=None, output=None)

    def get_batch(self, batch_id: str) -> JsonObject:
        return self._render(self.batches.find(batch_id))

    def list_batches(self, page_size: str | None, page_token: str | None) -> JsonObject:
        chosen, token = self.batches.page(page_size, page_token)
        page: JsonObject = {"operations": [self._render(batch) for batch in chosen]}
        if token is not None:
            page["nextPageToken"] = token
        return page

    def cancel_batch(self, batch_id: str) -> JsonObject:
        """Cancel a pending or running job (again: harmless); an ended one is refused."""
        batch = self.batches.find(batch_id)
        now = self.now()
        state = batch.state(now)
        if state in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
            if batch.cancel_at is None:
                batch.cancel_at = now
                batch.cancel_seconds = self._shared.settings.cancel_seconds
            return {}
        raise GeminiError(
            400, f"Batch {batch.name} has ended ({state}) and cannot be cancelled.", status="FAILED_PRECONDITION"
        )

    def delete_batch(self, batch_id: str) -> JsonObject:
        self._settle_ended()
        self.batches.delete(batch_id)
        return {}

    # -- internals -----------------------------------------------------------------------------------------------

    def rows(self, batch: GeminiBatch) -> list[Row]:
        if batch.rows is None:
            model = served(batch.model, self._shared.settings.extra_models, "v1beta", "batchGenerateContent")
            batch.rows = settle_rows(batch, model, self._shared.faults)
        return batch.rows

    def _render(self, batch: GeminiBatch) -> JsonObject:
        now = self.now()
        state = batch.state(now)
        if state == "BATCH_STATE_PENDING" or batch.failure is not None:
            return render_batch(batch, now, rows=None, output=None)
        rows = self.rows(batch)
        output: JsonObject | None = None
        if state == "BATCH_STATE_SUCCEEDED":
            if batch.input_file is None:
                output = inline_output(batch, rows)
            else:
                self._add_result_file(batch)
                output = {"responsesFile": f"files/{result_file_id(batch.id)}"}
        return render_batch(batch, now, rows=rows, output=output)

    def _settle_ended(self) -> None:
        """Give every succeeded job of a file its responses file, for the Files routes."""
        now = self.now()
        for batch in self.batches.oldest_first():
            if batch.input_file is not None and batch.state(now) == "BATCH_STATE_SUCCEEDED":
                self._add_result_file(batch)

    def _add_result_file(self, batch: GeminiBatch) -> None:
        file_id = result_file_id(batch.id)
        if batch.result_deleted or self.files.get(file_id, batch.ended_at) is not None:
            return
        rows = self.rows(batch)
        faults = self._shared.faults
        self.files.add(
            GeminiFile(
                id=file_id,
                display_name=f"{batch.name} responses",
                mime_type="application/jsonl",
                created_at=batch.ended_at,
                lines=lambda: result_lines(batch, rows, faults),
            )
        )
