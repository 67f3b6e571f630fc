"""Vertex AI's batch prediction jobs for Gemini models as a `BatchBackend`, through google-genai
(`client.aio.batches` with `vertexai=True`) and Cloud Storage (`storage.py`): the input written to
`gs://<bucket>/<key_prefix>/<intent id>/input.jsonl`, a job created from it answering under `.../output/`, polled,
its output folder's JSONL read, cancelled. Every shape and state name of Vertex's stays here.

The job's display name carries the intent id and the request count (`lowtide-<intent id>-<count>`, as Gemini's): a
create whose answer was lost is found again by listing the jobs created since the intent (`finds_by_intent`), never
created twice. The input's URI and the model are recorded as steps of the create before it, so that a crash after
the write creates the job from the file already there (`resume`).
"""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager
from typing import cast

from google import genai
from google.genai import types

from lowtide import BatchSettings, Clock, RateLimitError
from lowtide.providers import (
    Counts,
    CreateSteps,
    JSONObject,
    Phase,
    RemoteBatch,
    ResultLine,
    SdkBatchBackend,
    UnreadableLine,
    ended_counts,
    read_line,
)
from lowtide.providers.gemini.batch_backend import (
    JOB_ENDED_AS,
    JOB_PHASES,
    display_name,
    intent_and_count,
    job_record,
    job_state,
    unanswered_job_line,
)
from lowtide.providers.gemini.batch_requests import model_name
from lowtide.providers.gemini.errors import translate_errors
from lowtide.providers.vertex.batch_codec import VertexBatchCodec
from lowtide.providers.vertex.storage import BatchFiles

__all__ = ["INPUT_FILE_STEP", "MODEL_STEP", "VertexBatchBackend", "remote_batch"]

log = logging.getLogger(__name__)

INPUT_FILE_STEP = "input_file"
MODEL_STEP = "model"
_PAGE = 100


def remote_batch(job: types.BatchJob) -> RemoteBatch:
    """The neutral record of a Vertex batch prediction job: its total from its display name, its answered and failed
    requests from its completion stats once it has ended."""
    state = job_state(job)
    phase = JOB_PHASES.get(state, Phase.RUNNING)
    intent_id, total = intent_and_count(job.display_name)
    stats = job.completion_stats
    answered = (stats.successful_count or 0) if stats is not None else 0
    failed = (stats.failed_count or 0) if stats is not None else 0
    if phase is not Phase.ENDED:
        counts = Counts(processing=total)
    else:
        rest = max(0, total - answered - failed)
        counts = ended_counts(JOB_ENDED_AS.get(state, "succeeded"), succeeded=answered, errored=failed, rest=rest)
    return job_record(job, counts, intent_id)


class VertexBatchBackend(SdkBatchBackend):
    """Vertex AI's batch prediction for Gemini through one google-genai client and the actor's bucket."""

    codec = VertexBatchCodec()
    finds_by_intent = True
    input_step = INPUT_FILE_STEP
    model_step = MODEL_STEP

    def __init__(
        self,
        client: genai.Client,
        files: BatchFiles,
        *,
        folder: str,
        endpoint: str,
        credential: str,
        clock: Clock,
        settings: BatchSettings,
    ) -> None:
        super().__init__(endpoint=endpoint, credential=credential, clock=clock, settings=settings)
        self._client = client
        self._files = files
        self._folder = folder.rstrip("/")
        """`gs://<bucket>/<key_prefix>`: each intent's files go in a folder of its own below it."""

    def _input_uri(self, intent_id: str) -> str:
        return f"{self._folder}/{intent_id}/input.jsonl"

    # The batch's life.

    async def create(self, body: bytes, count: int, *, intent_id: str, steps: CreateSteps) -> RemoteBatch:
        """Write the input (Vertex's lines: the model is the job's, not a line's), record it, create the job."""
        lines = [cast("JSONObject", json.loads(raw)) for raw in body.splitlines() if raw.strip()]
        model, written = self._job_input(lines)
        uri = self._input_uri(intent_id)
        await self._retrying(lambda: self._files.write(uri, written))
        await steps.done(MODEL_STEP, model)
        await steps.done(INPUT_FILE_STEP, uri)
        return await self._create(uri, model, count, intent_id=intent_id)

    async def resume(
        self, done: Mapping[str, str], count: int, *, intent_id: str, steps: CreateSteps
    ) -> RemoteBatch | None:
        """The job created from the input the intent wrote before a crash; None when that file is gone."""
        uri = done[INPUT_FILE_STEP]
        if not await self._retrying(lambda: self._files.exists(uri)):
            return None
        return await self._create(uri, done[MODEL_STEP], count, intent_id=intent_id)

    async def _create(self, uri: str, model: str, count: int, *, intent_id: str) -> RemoteBatch:
        config: types.CreateBatchJobConfigDict = {
            "display_name": display_name(intent_id, count),
            "dest": f"{self._folder}/{intent_id}/output",
        }

        async def create() -> types.BatchJob:
            return await self._client.aio.batches.create(model=self._job_model(model), src=uri, config=config)

        # Retried only when refused outright (a rate limit): a create on doubt is reconciled, never blindly resent.
        job = await self._retrying(create, retry_on=(RateLimitError,))
        log.info("Submitted Vertex AI batch job %s with %d request(s).", job.name, count)
        return remote_batch(job)

    async def recent(self, *, created_after: float) -> list[RemoteBatch]:
        """The jobs created since `created_after` (Vertex's `create_time` filter), every page, newest first."""
        since = datetime.datetime.fromtimestamp(created_after, tz=datetime.UTC).isoformat().replace("+00:00", "Z")
        config: types.ListBatchJobsConfigDict = {"page_size": _PAGE, "filter": f'create_time>="{since}"'}

        async def listing() -> list[RemoteBatch]:
            return [remote_batch(job) async for job in await self._client.aio.batches.list(config=config)]

        found = await self._retrying(listing)
        return sorted(found, key=lambda batch: batch.created_at, reverse=True)

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return remote_batch(await self._raw(batch_id))

    async def listed(self) -> AsyncIterator[RemoteBatch]:
        """Every job the project lists, newest first."""
        for batch in await self.recent(created_after=0.0):
            yield batch

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        """The key of the first line of the job's output."""
        first: list[ResultLine | UnreadableLine] = []

        def handle(line: ResultLine | UnreadableLine) -> None:
            if not first:
                first.append(line)

        await self.stream_results(batch, handle)
        if not first:
            return None
        line = first[0]
        return line.custom_id if isinstance(line, UnreadableLine) else self.codec.custom_id_of(line)

    async def stream_results(
        self, batch: RemoteBatch, handle: Callable[[ResultLine | UnreadableLine], None], *, expected: int | None = None
    ) -> None:
        """The lines of every JSONL file of the job's output folder, each as `{"key", "response"}` or `{"key",
        "error"}` (a row Vertex could not answer says why in its `status`)."""
        job = await self._ended(batch)
        directory = job.output_info.gcs_output_directory if job.output_info is not None else None
        if not directory:
            return
        files = await self._retrying(lambda: self._files.read_folder(directory))
        for data in files:
            for raw in data.splitlines():
                if raw.strip():
                    handle(self._result_line(raw))

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        return unanswered_job_line(batch, custom_id)

    async def cancel(self, batch_id: str) -> RemoteBatch:
        await self._retrying(lambda: self._client.aio.batches.cancel(name=batch_id))
        batch = await self.retrieve(batch_id)
        log.info("Cancellation of Vertex AI batch job %s requested (%s).", batch_id, batch.status)
        return batch

    async def finished(self, batch: RemoteBatch) -> None:
        """Delete the job's input (unless `batch.keep_uploads`): the answers are stored. Its output stays in the
        bucket, the customer's, under the bucket's own lifecycle."""
        if self.settings.keep_uploads or batch.intent_id is None:
            return
        await self._delete_input(self._input_uri(batch.intent_id))

    async def _delete_input(self, uploaded: str) -> None:
        await self._retrying(lambda: self._files.delete(uploaded))

    async def aclose(self) -> None:
        self._files.close()

    # What a publisher's models make of the job (Google's Gemini here; Anthropic's Claude in `providers/vertex_claude`).

    def _job_input(self, lines: list[JSONObject]) -> tuple[str, bytes]:
        """The model of the codec's input `lines` and the job's input file they make (Vertex's lines: the model is
        the job's, not a line's)."""
        model = model_name(cast("JSONObject", lines[0].get("request") or {})) if lines else ""
        return model, b"".join(_vertex_line(line) for line in lines)

    def _job_model(self, model: str) -> str:
        """The model a job is created for, as google-genai takes it (a Gemini model's name: the SDK adds its
        publisher)."""
        return model

    def _result_line(self, raw: bytes) -> ResultLine | UnreadableLine:
        """A row of the job's output as the codec reads a result."""
        return _result_line(raw)

    # Inside.

    async def _raw(self, batch_id: str) -> types.BatchJob:
        return await self._retrying(lambda: self._client.aio.batches.get(name=batch_id))

    async def _ended(self, batch: RemoteBatch) -> types.BatchJob:
        known = batch.handle if isinstance(batch.handle, types.BatchJob) else None
        if known is None or JOB_PHASES.get(job_state(known)) is not Phase.ENDED:
            known = await self._raw(batch.id)
        return known

    def _translate(self) -> AbstractContextManager[None]:
        return translate_errors("Vertex AI API")


def _vertex_line(line: JSONObject) -> bytes:
    """A line of lowtide's Gemini input as Vertex reads it: the key, and the request without its model."""
    request = {name: value for name, value in cast("JSONObject", line.get("request") or {}).items() if name != "model"}
    return json.dumps({"key": line.get("key"), "request": request}, separators=(",", ":")).encode() + b"\n"


def _result_line(raw: bytes) -> ResultLine | UnreadableLine:
    """A row of Vertex's output as the codec reads a result: `{"key", "response"}`, or `{"key", "error"}` when the row
    has no response (its `status` holds the reason)."""
    line = read_line(raw)
    if isinstance(line, UnreadableLine):
        return line
    key = line.get("key")
    response = line.get("response")
    if isinstance(response, dict):
        return {"key": key, "response": response}
    status = line.get("status")
    message = status if isinstance(status, str) and status else "Vertex AI gave no answer and no reason."
    return {"key": key, "error": {"message": message}}
