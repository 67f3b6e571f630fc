"""Bedrock batch inference as a `BatchCodec`: a request is its Converse body with its `modelId`
(`requests.converse_body`), one line of lowtide's JSONL `{"recordId": <custom id>, "modelInput": <body>}` (the
backend takes the `modelId` out of each record as it writes the job's input to S3: a job names its model once); one
job holds one model. A result line is a record of the job's output, `{"recordId", "modelInput", "modelOutput"}` or
`{"recordId", "modelInput", "error": {"errorCode", "errorMessage"}}`, to which the backend adds the job's `modelId`.
Pure: no client, no credentials."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from lowtide import ActorRequest, BatchProcessingMode, BatchRequestErrored
from lowtide.providers import (
    BatchLimits,
    EnvelopeCodec,
    JSONObject,
    ResultLine,
    Settled,
    api_error_class,
    ended_outcome,
    json_count,
    json_object,
    sent_tokens,
    unreadable_outcome,
)
from lowtide.providers.bedrock.answers import answer_and_json
from lowtide.providers.bedrock.options import GEN_AI_PROVIDER_NAME, MAX_RECORDS, PROVIDER_NAME
from lowtide.providers.bedrock.requests import converse_body, model_of
from lowtide.providers.bedrock.rules import USAGE

__all__ = [
    "EXPIRED_CODE",
    "FAILED_CODE",
    "MAX_HOURS",
    "MAX_INPUT_BYTES",
    "STOPPED_CODE",
    "BedrockBatchCodec",
    "error_line",
]

MAX_INPUT_BYTES = 1024 * 1024 * 1024
"""Bedrock's default quota on one batch inference input file (1 GB)."""
MAX_HOURS = 24.0
"""A job not done 24 hours after its submission (its `timeoutDurationInHours`, by default) expires."""
STOPPED_CODE = "LOWTIDE_JOB_STOPPED"
EXPIRED_CODE = "LOWTIDE_JOB_EXPIRED"
FAILED_CODE = "LOWTIDE_JOB_FAILED"
"""The `errorCode`s of the lines lowtide writes for records an ended job left unanswered (`unanswered_line`); never
one of AWS's."""

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def error_line(record_id: str, code: str, message: str) -> dict[str, object]:
    """A result line standing for an error lowtide writes (AWS's shape, a code of lowtide's own)."""
    return {"recordId": record_id, "error": {"errorCode": code, "errorMessage": message}}


class BedrockBatchCodec(EnvelopeCodec, id_field="recordId", body_field="modelInput", plain_id=_PLAIN_ID):
    """Bedrock batch records and their outputs; `max_records` is the account's quota of records per job. A record
    of lowtide's JSONL is `{"recordId": <custom id>, "modelInput": <stored body>}`, its `modelId` included (the
    backend puts back what the job's input object leaves out)."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    usage_shape = USAGE

    def __init__(self, max_records: int = MAX_RECORDS) -> None:
        self.limits = BatchLimits(max_requests=max_records, max_bytes=MAX_INPUT_BYTES, max_hours=MAX_HOURS)

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return converse_body(request)

    def model_of(self, params: Mapping[str, object]) -> str:
        return model_of(params)

    def token_bounds(self, params: Mapping[str, object]) -> tuple[int, int]:
        return sent_tokens(params, leaving_out=("inferenceConfig",)), _output_limit(params)

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        """An output record as its request's outcome: an answer (priced at batch prices), AWS's error for the
        record (retried when its code says the same request may succeed later), or the stop, expiry or failure of
        the whole job."""
        custom_id = str(line.get("recordId"))
        error = line.get("error")
        output = line.get("modelOutput")
        if isinstance(error, dict):
            return _error_outcome(cast("Mapping[str, object]", error), batch_id, custom_id), None
        if isinstance(output, dict):
            ids = {"batch_id": batch_id, "custom_id": custom_id, "request_id": request_id}
            model = str(line.get("modelId") or "")
            return answer_and_json(cast("JSONObject", output), model=model, mode=BatchProcessingMode.BATCH, ids=ids)
        reason = "a record with neither a modelOutput nor an error; a newer lowtide may read it"
        return unreadable_outcome(line, batch_id, custom_id, reason)


def _error_outcome(error: Mapping[str, object], batch_id: str, custom_id: str) -> Settled:
    code = error.get("errorCode")
    ended = ended_outcome(code, batch_id, custom_id, canceled=STOPPED_CODE, expired=EXPIRED_CODE)
    if ended is not None:
        return ended
    status = code if isinstance(code, int) and not isinstance(code, bool) else None
    if status is None and isinstance(code, str) and code.isdigit():
        status = int(code)
    message = error.get("errorMessage")
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=f"http_{status}" if status is not None else str(code or "error"),
        api_message=str(message) if message else "Bedrock gave no message.",
        retryable=status is not None and (status in (408, 429) or status >= 500),
        kind=api_error_class(status) if status is not None else None,
    )


def _output_limit(params: Mapping[str, object]) -> int:
    """The body's `inferenceConfig.maxTokens` (`converse_body` always sets it)."""
    return json_count(json_object(params.get("inferenceConfig")).get("maxTokens"), "inferenceConfig.maxTokens")
