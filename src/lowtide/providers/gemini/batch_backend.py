"""The Gemini API's batch mode as a `BatchBackend`, through google-genai (`client.aio.batches`, `client.aio.files`):
create a job from inline requests or an uploaded JSONL file, poll it, read its inline responses or result file,
cancel it. Every shape, state name and id rule of it stays here.

A batch whose JSONL is at most `inline_bytes` (`INLINE_BYTES`, 16 MiB: the API takes about 20 MB of inline
requests) goes inline, each request's key in its metadata (which the API echoes in its answer); a larger one, or one
holding a field the SDK's models do not carry, is uploaded through the Files API, under a name made from the intent
id (`files/lowtide-<hex>`), and the file's name and the batch's model are recorded as steps of the create
(`CreateSteps`), so that a crash before the create reuses the file (`resume`) rather than uploading it again.

The job's display name carries the intent id and the request count (`lowtide-<intent id>-<count>`): a create whose
outcome is unknown is reconciled exactly by listing jobs (`finds_by_intent`), and a job's counts are known before its
results are read.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager
from typing import cast

from google import genai
from google.genai import types

from lowtide import (
    APIError,
    BatchSettings,
    Clock,
    NotFoundError,
    PermissionDeniedError,
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
    read_line,
)
from lowtide.providers.gemini.batch_codec import (
    CANCELED_STATUS,
    EXPIRED_STATUS,
    FAILED_STATUS,
    GeminiBatchCodec,
    error_line,
)
from lowtide.providers.gemini.batch_requests import inlined_request, model_name
from lowtide.providers.gemini.errors import translate_errors
from lowtide.webhooks.events import LEDGER_METADATA

__all__ = [
    "INLINE_BYTES",
    "INPUT_FILE_STEP",
    "JOB_ENDED_AS",
    "JOB_PHASES",
    "LEDGER_STEP",
    "MODEL_STEP",
    "GeminiBatchBackend",
    "display_name",
    "intent_and_count",
    "remote_batch",
    "unanswered_job_line",
]

log = logging.getLogger(__name__)

INLINE_BYTES = 16 * 1024 * 1024
"""The largest JSONL input sent inline; the API takes about 20 MB of inline requests, and the SDK's encoding of them
(metadata, field names) adds a little."""
INPUT_FILE_STEP = "input_file"
MODEL_STEP = "model"
LEDGER_STEP = "ledger"
"""The create step recording the identity of the ledger the requests were claimed in, for a create taken over."""
_DISPLAY = re.compile(r"^lowtide-(lt_[0-9a-f]+)-(\d+)$")
_MISSING = (NotFoundError, PermissionDeniedError)
"""What the Files API answers for a file that is not there (any more): Gemini answers 403 as often as 404."""
_KEY_IN_LINE = re.compile(rb'"key"\s*:\s*"([A-Za-z0-9_:\-]{1,128})"')
"""The key a result line names, read from its bytes when the line cannot be read as JSON (custom ids are plain)."""

JOB_PHASES = {
    "JOB_STATE_CANCELLING": Phase.CANCELING,
    "JOB_STATE_SUCCEEDED": Phase.ENDED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": Phase.ENDED,
    "JOB_STATE_FAILED": Phase.ENDED,
    "JOB_STATE_CANCELLED": Phase.ENDED,
    "JOB_STATE_EXPIRED": Phase.ENDED,
}
"""Every other state (pending, queued, running, paused, updating, unspecified) is running."""
JOB_ENDED_AS: dict[str, EndedAs] = {
    "JOB_STATE_EXPIRED": "expired",
    "JOB_STATE_CANCELLED": "canceled",
    "JOB_STATE_FAILED": "failed",
}
"""How a job in an ended state ended; every other ended state succeeded (in part)."""


def display_name(intent_id: str, count: int) -> str:
    """The display name a job of lowtide's carries: its intent id and how many requests it holds."""
    return f"lowtide-{intent_id}-{count}"


def intent_and_count(name: str | None) -> tuple[str | None, int]:
    """The intent id and request count a display name of lowtide's carries; (None, 0) for another's."""
    matched = _DISPLAY.match(name or "")
    return (matched.group(1), int(matched.group(2))) if matched else (None, 0)


def _file_name(intent_id: str) -> str:
    """The name the input file of an intent is uploaded under (`files/` and at most 40 lower-case letters, digits
    and dashes)."""
    return "files/lowtide-" + re.sub(r"[^a-z0-9]", "", intent_id.lower().removeprefix("lt_"))[:32]


def _epoch(moment: datetime.datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


def remote_batch(job: types.BatchJob) -> RemoteBatch:
    """The neutral record of a Gemini batch job. The SDK reports no per-request counts: a job of lowtide's names its
    total (the display name); an ended job's inline responses are counted, and what a file holds is counted as the
    job's state says (succeeded, or all errored, canceled or expired) until its lines are read."""
    state = job_state(job)
    phase = JOB_PHASES.get(state, Phase.RUNNING)
    matched = _DISPLAY.match(job.display_name or "")
    total = int(matched.group(2)) if matched else 0
    inline = job.dest.inlined_responses if job.dest is not None else None
    answered = sum(1 for item in inline or () if item.error is None)
    failed = sum(1 for item in inline or () if item.error is not None)
    rest = max(0, total - answered - failed)
    ended_as = JOB_ENDED_AS.get(state, "succeeded")
    if phase is not Phase.ENDED:
        counts = Counts(processing=total)
    else:  # a job that succeeded inline has answered in full: what its total says beyond that is not unread
        unread = 0 if ended_as == "succeeded" and inline is not None else rest
        counts = ended_counts(ended_as, succeeded=answered, errored=failed, rest=unread)
    return job_record(job, counts, matched.group(1) if matched else None)


def job_state(job: types.BatchJob) -> str:
    """A job's state as google-genai names it, on the Gemini API or Vertex AI (`JOB_STATE_...`)."""
    return job.state.value if job.state is not None else "JOB_STATE_UNSPECIFIED"


def job_record(job: types.BatchJob, counts: Counts, intent_id: str | None) -> RemoteBatch:
    """The neutral record of a google-genai batch job (Gemini API or Vertex AI), its `counts` as the API reads them."""
    state = job_state(job)
    phase = JOB_PHASES.get(state, Phase.RUNNING)
    ended = _epoch(job.end_time) or _epoch(job.update_time)
    return RemoteBatch(
        id=job.name or "",
        phase=phase,
        status=state.removeprefix("JOB_STATE_").lower(),
        created_at=_epoch(job.create_time) or 0.0,
        counts=counts,
        ended_at=ended if phase is Phase.ENDED else None,
        cancel_requested=state in ("JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED"),
        intent_id=intent_id,
        handle=job,
    )


class GeminiBatchBackend(SdkBatchBackend):
    """The Gemini API's batch mode through one google-genai client (which never retries: lowtide decides)."""

    codec = GeminiBatchCodec()
    finds_by_intent = True
    input_step = INPUT_FILE_STEP
    model_step = MODEL_STEP

    def __init__(
        self, client: genai.Client, *, endpoint: str, credential: str, clock: Clock, settings: BatchSettings
    ) -> None:
        super().__init__(endpoint=endpoint, credential=credential, clock=clock, settings=settings)
        self._client = client
        self.inline_bytes = INLINE_BYTES
        """The largest input sent inline; tests set it lower to send files."""
        self.webhook_url: str | None = None
        """Where each job calls when it ends (`webhook_config`), besides the project's endpoints."""

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Create the job from inline requests, or from the uploaded input file (recorded as steps first)."""
        lines = [cast("JSONObject", json.loads(raw)) for raw in body.splitlines() if raw.strip()]
        model = model_name(cast("JSONObject", lines[0].get("request") or {})) if lines else ""
        inlined = self._inlined(lines) if len(body) <= self.inline_bytes else None
        ledger = self._ledger_of(lines)
        if inlined is not None:
            return await self._create(inlined, model, count, intent_id=intent_id, ledger=ledger)
        file_name = await self._upload(body, intent_id)
        await steps.done(MODEL_STEP, model)
        await steps.done(INPUT_FILE_STEP, file_name)
        if ledger is not None:
            await steps.done(LEDGER_STEP, ledger)
        return await self._create(file_name, model, count, intent_id=intent_id, ledger=ledger)

    def _ledger_of(self, lines: list[JSONObject]) -> str | None:
        """The identity of the ledger the requests were claimed in, read from their custom ids (none from a hashed
        one), for the job's own webhook to carry back."""
        for line in lines:
            parts = self.codec.custom_id_parts(str(line.get("key")))
            if parts is not None and parts.identity is not None:
                return parts.identity
        return None

    @staticmethod
    def _inlined(lines: list[JSONObject]) -> list[types.InlinedRequest] | None:
        inlined: list[types.InlinedRequest] = []
        for line in lines:
            one = inlined_request(str(line.get("key")), cast("JSONObject", line.get("request")))
            if one is None:
                return None
            inlined.append(one)
        return inlined

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The job created from the file the intent uploaded before a crash, not uploaded again; None when that file
        is gone."""
        file_name = done[INPUT_FILE_STEP]
        try:
            await self._retrying(lambda: self._client.aio.files.get(name=file_name))
        except _MISSING:
            return None
        ledger = done.get(LEDGER_STEP)
        return await self._create(file_name, done[MODEL_STEP], count, intent_id=intent_id, ledger=ledger)

    async def _create(
        self, source: str | list[types.InlinedRequest], model: str, count: int, *, intent_id: str, ledger: str | None
    ) -> RemoteBatch:
        config: types.CreateBatchJobConfigDict = {"display_name": display_name(intent_id, count)}
        if self.webhook_url is not None:
            # The ledger's identity comes back in the job's events: a receiver of another ledger ignores them.
            webhook: types.WebhookConfigDict = {"uris": [self.webhook_url]}
            if ledger is not None:
                webhook["user_metadata"] = {LEDGER_METADATA: ledger}
            config["webhook_config"] = webhook

        async def create() -> types.BatchJob:
            if isinstance(source, str):
                return await self._client.aio.batches.create(model=model, src={"file_name": source}, config=config)
            return await self._client.aio.batches.create(
                model=model, src=cast("types.BatchJobSourceUnionDict", source), config=config
            )

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        job = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted Gemini batch %s with %d request(s).", job.name, count)
        return remote_batch(job)

    async def _upload(self, body: bytes, intent_id: str) -> str:
        """Upload the input under the intent's own name. A name already taken (409 `ALREADY_EXISTS`) is this
        intent's earlier upload whose answer was lost: its file is taken as it is; if the API holds no such file
        (the earlier upload's session took the name but never finished), the input goes under a name of the API's."""
        name = _file_name(intent_id)

        async def upload(named: bool = True) -> str:
            config: types.UploadFileConfigDict = {
                "display_name": f"lowtide-{intent_id}.jsonl",
                "mime_type": "application/jsonl",
            }
            if named:
                config["name"] = name
            uploaded = await self._client.aio.files.upload(file=io.BytesIO(body), config=config)
            return uploaded.name or name

        try:
            return await self._retrying(upload)
        except APIError as exc:
            if exc.status_code != 409:
                raise
        try:
            await self._retrying(lambda: self._client.aio.files.get(name=name))
        except _MISSING:
            log.info("The name %s is held by an upload that never finished; uploading under another.", name)
            return await self._retrying(lambda: upload(named=False))
        log.info("Input file %s was uploaded before; taken.", name)
        return name

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        """The jobs listed newest first, page after page, until one created before `created_after`."""

        async def listing() -> AsyncGenerator[RemoteBatch, None]:
            async for job in await self._client.aio.batches.list(config={"page_size": self.list_page}):
                yield remote_batch(job)

        return await self._newest_since(listing, created_after)

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._raw(batch_id))

    # What a rebuild reads (`lowtide ledger rebuild`): a job's requests are named only in its results, once it has
    # ended. google-genai reads no input back from a job of the Gemini API, and the Files API lets no uploaded file be
    # downloaded (only the files it generates): `inputs` shows none.

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job the API lists, newest first, page after page."""
        for batch in await self.recent(created_after=0.0):
            yield batch

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        """The key of the job's first inline response, else of its result file's first line."""
        job = await self._ended(batch)
        first: list[ResultLine | UnreadableLine] = []

        def handle(line: ResultLine | UnreadableLine) -> None:
            if not first:
                first.append(line)

        dest = job.dest
        if dest is not None and dest.inlined_responses:
            handle(_inline_line(dest.inlined_responses[0]))
        elif dest is not None and dest.file_name:
            file_name = dest.file_name
            with contextlib.suppress(*_MISSING):  # past the file's retention
                await self._retrying(lambda: self._read_file(file_name, handle))
        if not first:
            return None
        line = first[0]
        return line.custom_id if isinstance(line, UnreadableLine) else self.codec.custom_id_of(line)

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The job's inline responses, or its result file's lines, each as `{"key", "response"}` or
        `{"key", "error"}`. A download broken off is fetched again from the start."""
        job = await self._ended(batch)
        dest = job.dest
        if dest is not None and dest.inlined_responses is not None:
            for item in dest.inlined_responses:
                handle(_inline_line(item))
            return
        if dest is not None and dest.file_name:
            file_name = dest.file_name
            await self._retrying(lambda: self._read_file(file_name, handle))

    async def _read_file(self, file_name: str, handle: Callable[[ResultLine | UnreadableLine], None]) -> None:
        """The result file's lines, each read whole: google-genai downloads a file at once (a download broken off
        raises, and is fetched again)."""
        data = await self._client.aio.files.download(file=file_name)
        for raw in data.splitlines():
            if not raw.strip():
                continue
            line = read_line(raw)
            if isinstance(line, UnreadableLine) and line.custom_id is None:
                named = _KEY_IN_LINE.search(raw)
                if named is not None:  # the line names its request by `key`, not `custom_id`
                    line = UnreadableLine(line.raw, line.reason, named.group(1).decode("ascii"))
            handle(line)

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        return unanswered_job_line(batch, custom_id)

    async def cancel(self, batch_id: str) -> RemoteBatch:
        await self._retrying(lambda: self._client.aio.batches.cancel(name=batch_id))
        batch = await self.retrieve(batch_id)
        log.info("Cancellation of Gemini batch %s requested (%s).", batch_id, batch.status)
        return batch

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the uploaded input file of a job that had one (unless `batch.keep_uploads`): the answers are
        stored. A job made from a file answers in a file (inline requests, inline); the input's name is the
        intent's, so the job need not say it."""
        if self.settings.keep_uploads or batch.intent_id is None:
            return
        job = await self._ended(batch)
        if job.dest is not None and job.dest.file_name:
            await self._delete_input(_file_name(batch.intent_id))

    async def _delete_input(self, uploaded: str) -> None:
        with contextlib.suppress(*_MISSING):
            await self._retrying(lambda: self._client.aio.files.delete(name=uploaded))

    # Inside.

    async def _raw(self, batch_id: str) -> types.BatchJob:
        return await self._retrying(lambda: self._client.aio.batches.get(name=batch_id))

    async def _ended(self, batch: RemoteBatch) -> types.BatchJob:
        known = batch.handle if isinstance(batch.handle, types.BatchJob) else None
        if known is None or known.dest is None or JOB_PHASES.get(job_state(known)) is not Phase.ENDED:
            known = await self._raw(batch.id)
        return known

    def _translate(self) -> AbstractContextManager[None]:
        return translate_errors()


def _inline_line(item: types.InlinedResponse) -> ResultLine:
    """An inline response in the result file's shape (an error as Google's `google.rpc.Status`: code and message)."""
    key = (item.metadata or {}).get("key", "")
    if item.error is not None:
        error: dict[str, object] = {"code": item.error.code, "message": item.error.message or ""}
        return {"key": key, "error": error}
    response = item.response
    body = response.model_dump(mode="json", by_alias=True, exclude_none=True) if response is not None else {}
    body.pop("sdkHttpResponse", None)
    return {"key": key, "response": body}


def unanswered_job_line(batch: RemoteBatch, custom_id: str) -> ResultLine | None:
    """The line of a request a job (on the Gemini API or Vertex AI) never answered: a cancelled or expired job leaves
    the requests it never ran unanswered; a failed one ran none. A job that succeeded answers every request: a missing
    one was lost (None)."""
    if batch.status == "cancelled":
        return error_line(custom_id, CANCELED_STATUS, "The batch was cancelled.")
    if batch.status == "expired":
        return error_line(custom_id, EXPIRED_STATUS, "The batch expired.")
    if batch.status == "failed":
        job = batch.handle if isinstance(batch.handle, types.BatchJob) else None
        error = job.error if job is not None else None
        # google-genai does not read a failed job's error from the Gemini API (it reads Vertex's): the job's own
        # words when the SDK has them, else that it failed as a whole.
        message = (error.message if error is not None else None) or (
            f"Batch job {batch.id} failed as a whole, before any request ran."
        )
        return error_line(custom_id, FAILED_STATUS, message)
    return None
