"""Mistral's Batch API as a `BatchCodec`: a request is its chat completions body (`requests.encode_request`, model
included), one line of a job's input `{"custom_id": ..., "body": ...}`, inline in the create or in an uploaded JSONL
file; one job holds one model; a result is an output file line `{"custom_id", "response": {"status_code", "body"}}`
or an error file line `{"custom_id", "error": {...}}`. Pure: no client, no key."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import cast

from lowtide import ActorRequest, BatchProcessingMode, BatchRequestErrored
from lowtide.providers import (
    BatchLimits,
    EnvelopeCodec,
    ResultLine,
    Settled,
    api_error_class,
    ended_outcome,
    json_object,
    sent_tokens,
    unreadable_outcome,
)
from lowtide.providers.mistral.answers import answer_and_json, finish_error
from lowtide.providers.mistral.errors import error_of_body
from lowtide.providers.mistral.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.mistral.requests import encode_request
from lowtide.providers.mistral.rules import USAGE

__all__ = [
    "CANCELED_CODE",
    "EXPIRED_CODE",
    "FAILED_CODE",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_REQUESTS",
    "MistralBatchCodec",
    "error_line",
]

MAX_BATCH_REQUESTS = 100_000
"""Mistral's limit on the requests of one batch job."""
MAX_BATCH_BYTES = 512 * 1024 * 1024
"""Mistral's limit on one batch input file (512 MB)."""
MAX_HOURS = 24.0
"""A job's `timeout_hours` by default: lowtide asks for its `batch.max_wait`, at most 168 hours."""

CANCELED_CODE = "lowtide_batch_cancelled"
EXPIRED_CODE = "lowtide_batch_timeout_exceeded"
FAILED_CODE = "lowtide_batch_failed"
"""The error codes of the lines lowtide writes for requests an ended job left unanswered (`unanswered_line`)."""

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NEITHER = "a line with neither a response nor an error; a newer lowtide may read it"


def error_line(custom_id: str, code: str, message: str) -> dict[str, object]:
    """A result line standing for an error lowtide writes (an error file line, a code of lowtide's own)."""
    return {"custom_id": custom_id, "error": {"message": message, "code": code}}


class MistralBatchCodec(EnvelopeCodec, id_field="custom_id", body_field="body", plain_id=_PLAIN_ID):
    """Mistral batch requests and results: a request is stored as its chat completions body, model included; a line
    of the JSONL input is `{"custom_id": <custom id>, "body": <stored body>}`."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    usage_shape = USAGE
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=MAX_HOURS)

    # Requests.

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return encode_request(request)

    def model_of(self, params: Mapping[str, object]) -> str:
        model = params.get("model")
        return model if isinstance(model, str) else ""

    def token_bounds(self, params: Mapping[str, object]) -> tuple[int, int]:
        return sent_tokens(params, leaving_out=("max_tokens",)), _output_limit(params)

    # Answers.

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        """A result line as its request's outcome: an answer (priced at batch prices), Mistral's error for the
        request (retried when its status says the same request may succeed later), or the cancel, timeout or
        failure of the whole job."""
        custom_id = str(line.get("custom_id"))
        error = line.get("error")
        response = line.get("response")
        if isinstance(error, dict):
            return _error_outcome(cast("Mapping[str, object]", error), batch_id, custom_id), None
        if isinstance(response, dict):
            held = cast("Mapping[str, object]", response)
            status = held.get("status_code")
            body = json_object(held.get("body"))
            if isinstance(status, int) and status != 200:
                return _status_outcome(status, body, batch_id, custom_id), None
            failed = finish_error(body, request_id=request_id)
            if failed is not None:
                return BatchRequestErrored(
                    batch_id=batch_id,
                    custom_id=custom_id,
                    error_type="error",
                    api_message=str(failed),
                    retryable=True,
                    kind=type(failed),
                ), None
            ids = {"batch_id": batch_id, "custom_id": custom_id, "request_id": request_id}
            return answer_and_json(body, mode=BatchProcessingMode.BATCH, ids=ids)
        return unreadable_outcome(line, batch_id, custom_id, _NEITHER)


def _error_outcome(error: Mapping[str, object], batch_id: str, custom_id: str) -> Settled:
    code = error.get("code")
    ended = ended_outcome(code, batch_id, custom_id, canceled=CANCELED_CODE, expired=EXPIRED_CODE)
    if ended is not None:
        return ended
    status = error.get("status_code")
    http = status if isinstance(status, int) and not isinstance(status, bool) else None
    message = error.get("message")
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=str(code) if code is not None else (f"http_{http}" if http is not None else "error"),
        api_message=str(message) if message else "The Mistral API gave no message.",
        retryable=code != FAILED_CODE and (http is None or http in (408, 429) or http >= 500),
        kind=api_error_class(http) if http is not None else None,
    )


def _status_outcome(status: int, body: Mapping[str, object], batch_id: str, custom_id: str) -> Settled:
    message, error_type = error_of_body(status, json.dumps(body))
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=error_type or f"http_{status}",
        api_message=message,
        retryable=status in (408, 429) or status >= 500,
        kind=api_error_class(status, error_type),
    )


def _output_limit(params: Mapping[str, object]) -> int:
    limit = params.get("max_tokens")
    return limit if isinstance(limit, int) else 0
