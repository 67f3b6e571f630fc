"""Vertex AI's batch prediction jobs of Claude models as a `BatchBackend`: Vertex's
(`providers/vertex/batch_backend.py`: the input written to Cloud Storage, the job created under the intent's display
name and found again by it, polled, its output folder read, cancelled), with Anthropic's lines. Every shape of
Vertex's Claude jobs stays here.

A line of the input is `{"custom_id": <id>, "request": <Messages parameters, without the model, with
anthropic_version>}`; the job is created for `publishers/anthropic/models/<model>`. A row of the output is the
input's fields, `response` (the Messages API's message) and `status` (empty when answered, else why not): handed on as
a line of the Message Batches results (`succeeded` with the message, or `errored` with the status's text)."""

from __future__ import annotations

import json
from typing import cast

from google.genai import types

from lowtide.providers import JSONObject, RemoteBatch, ResultLine, UnreadableLine, read_line
from lowtide.providers.vertex.batch_backend import VertexBatchBackend
from lowtide.providers.vertex_claude.batch_codec import VertexClaudeBatchCodec

__all__ = ["ANTHROPIC_VERSION", "ROW_ERROR", "VertexClaudeBatchBackend", "result_of_row"]

ANTHROPIC_VERSION = "vertex-2023-10-16"
"""The `anthropic_version` Vertex AI's batch page writes in every request."""
ROW_ERROR = "vertex_row_error"
"""The error type of a row Vertex AI did not answer: its `status` is the reason, in words (not retried)."""


def result_of_row(raw: bytes) -> ResultLine | UnreadableLine:
    """A row of the job's output as a line of the Message Batches results."""
    line = read_line(raw)
    if isinstance(line, UnreadableLine):
        return line
    custom_id = line.get("custom_id")
    response = line.get("response")
    if isinstance(response, dict):
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": response}}
    status = line.get("status")
    message = status if isinstance(status, str) and status else "Vertex AI gave no answer and no reason."
    return {"custom_id": custom_id, "result": _errored(message)}


def _errored(message: str, error_type: str = ROW_ERROR) -> JSONObject:
    return {"type": "errored", "error": {"type": "error", "error": {"type": error_type, "message": message}}}


class VertexClaudeBatchBackend(VertexBatchBackend):
    """Vertex AI's batch prediction for Claude through one google-genai client and the actor's bucket."""

    codec = VertexClaudeBatchCodec()

    def _job_input(self, lines: list[JSONObject]) -> tuple[str, bytes]:
        model = ""
        written: list[bytes] = []
        for line in lines:
            request = dict(cast("JSONObject", line.get("request") or {}))
            name = request.pop("model", "")
            model = model or (name if isinstance(name, str) else "")
            request["anthropic_version"] = ANTHROPIC_VERSION
            row = {"custom_id": line.get("custom_id"), "request": request}
            written.append(json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
        return model, b"".join(written)

    def _job_model(self, model: str) -> str:
        return f"publishers/anthropic/models/{model}"

    def _result_line(self, raw: bytes) -> ResultLine | UnreadableLine:
        return result_of_row(raw)

    def unanswered_line(self, batch: RemoteBatch, custom_id: str) -> ResultLine | None:
        """A request an ended job never answered: canceled with a cancelled job, expired with an expired one, errored
        with a failed one (which ran none: the job's own words, not retried, as Gemini's on Vertex); a job that
        succeeded answers every request (a missing one was lost)."""
        if batch.status == "cancelled":
            return {"custom_id": custom_id, "result": {"type": "canceled"}}
        if batch.status == "expired":
            return {"custom_id": custom_id, "result": {"type": "expired"}}
        if batch.status == "failed":
            job = batch.handle if isinstance(batch.handle, types.BatchJob) else None
            said = job.error.message if job is not None and job.error is not None else None
            reason = said or f"Vertex AI batch job {batch.id} failed as a whole, before any request ran."
            return {"custom_id": custom_id, "result": _errored(reason)}
        return None
