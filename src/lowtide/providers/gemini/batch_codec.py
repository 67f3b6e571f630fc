"""The Gemini API's batch mode as a `BatchCodec`: a request is its REST `GenerateContentRequest` body
(`batch_requests.rest_body`), one line of a batch's JSONL input `{"key": <custom id>, "request": <body>}`; one batch
holds one model (the model is in the create's URL); a result is `{"key", "response"}` or `{"key", "error"}`, from the
result file or from the job's inline responses, which the backend writes in the same shape. Pure: no client, no key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from lowtide import (
    ActorRequest,
    BatchProcessingMode,
    BatchRequestErrored,
    InvalidRequestError,
)
from lowtide.providers import (
    BatchLimits,
    EnvelopeCodec,
    JSONObject,
    ResultLine,
    Settled,
    api_error_class,
    ended_outcome,
    sent_tokens,
    unreadable_outcome,
)
from lowtide.providers.gemini.answers import answer_and_json, blocked_error
from lowtide.providers.gemini.batch_requests import model_name, rest_body
from lowtide.providers.gemini.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.gemini.rules import USAGE

__all__ = [
    "CANCELED_STATUS",
    "EXPIRED_STATUS",
    "FAILED_STATUS",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_REQUESTS",
    "GeminiBatchCodec",
    "error_line",
]

MAX_BATCH_REQUESTS = 100_000
"""lowtide's own cap on one Gemini batch (the API names none below its file size)."""
MAX_BATCH_BYTES = 2 * 1024 * 1024 * 1024
"""The Files API's limit on one file, the input of a batch above the inline size."""
MAX_HOURS = 48.0
"""A Gemini batch job still pending or running 48 hours after its create expires."""

CANCELED_STATUS = "LOWTIDE_BATCH_CANCELLED"
EXPIRED_STATUS = "LOWTIDE_BATCH_EXPIRED"
FAILED_STATUS = "LOWTIDE_BATCH_FAILED"
"""The error statuses of the lines lowtide writes for requests an ended job left unanswered (`unanswered_line`);
never one of Google's status names."""

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NEITHER = "a line with neither a response nor an error; a newer lowtide may read it"
_RETRYABLE = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "ABORTED", "UNKNOWN"})
_KINDS = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNKNOWN": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""Google's status names as the HTTP status a live call refused the same way would have had."""
_CODES = {
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    16: "UNAUTHENTICATED",
}
"""google.rpc.Code numbers as their names."""


def error_line(key: str, status: str, message: str) -> dict[str, object]:
    """A result line standing for an error lowtide writes (Google's shape, a status of lowtide's own)."""
    return {"key": key, "error": {"message": message, "status": status}}


class GeminiBatchCodec(EnvelopeCodec, id_field="key", body_field="request", plain_id=_PLAIN_ID):
    """Gemini batch requests and results: a request is stored as its REST body, model included; a line of the
    JSONL input is `{"key": <custom id>, "request": <stored body>}`."""

    name = PROVIDER_NAME
    gen_ai_provider_name = GEN_AI_PROVIDER_NAME
    usage_shape = USAGE
    limits = BatchLimits(max_requests=MAX_BATCH_REQUESTS, max_bytes=MAX_BATCH_BYTES, max_hours=MAX_HOURS)

    # Requests.

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        return rest_body(request)

    def model_of(self, params: Mapping[str, object]) -> str:
        return model_name(params)

    def token_bounds(self, params: Mapping[str, object]) -> tuple[int, int]:
        return sent_tokens(params, leaving_out=("generationConfig",)), _output_limit(params)

    # Answers.

    def line_outcome(
        self, line: ResultLine, *, batch_id: str, request_id: str | None
    ) -> tuple[Settled, dict[str, object] | None]:
        """A result line as its request's outcome: an answer (priced at batch prices), a blocked prompt or stopped
        answer (`InvalidRequestError`'s kind, never retried), Google's error for the request (retried when its
        status says the same request may succeed later), or the cancel, expiry or failure of the whole job."""
        custom_id = str(line.get("key"))
        error = line.get("error")
        response = line.get("response")
        if isinstance(error, dict):
            return _error_outcome(cast("Mapping[str, object]", error), batch_id, custom_id), None
        if isinstance(response, dict):
            body = cast("JSONObject", response)
            blocked = blocked_error(body, request_id=request_id)
            if blocked is not None:
                return BatchRequestErrored(
                    batch_id=batch_id,
                    custom_id=custom_id,
                    error_type=blocked.error_type or "blocked",
                    api_message=str(blocked),
                    retryable=False,
                    kind=InvalidRequestError,
                ), None
            ids = {"batch_id": batch_id, "custom_id": custom_id, "request_id": request_id}
            answer, stored = answer_and_json(body, mode=BatchProcessingMode.BATCH, ids=ids, provider=self.name)
            return answer, stored
        return unreadable_outcome(line, batch_id, custom_id, _NEITHER)


def _error_outcome(error: Mapping[str, object], batch_id: str, custom_id: str) -> Settled:
    status = error.get("status")
    ended = ended_outcome(status, batch_id, custom_id, canceled=CANCELED_STATUS, expired=EXPIRED_STATUS)
    if ended is not None:
        return ended
    code = error.get("code")
    number = code if isinstance(code, int) and not isinstance(code, bool) else None
    name = status if isinstance(status, str) and status else None
    if name is None and number is not None and number < 100:  # a google.rpc.Code, as a request's Status has
        name = _CODES.get(number, "UNKNOWN")
    http = number if number is not None and number >= 100 else _KINDS.get(name or "")
    message = error.get("message")
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=name or (f"http_{http}" if http is not None else "error"),
        api_message=str(message) if message else "The Gemini API gave no message.",
        retryable=name in _RETRYABLE or (http is not None and (http in (408, 429) or http >= 500)),
        kind=api_error_class(http) if http is not None else None,
    )


def _output_limit(params: Mapping[str, object]) -> int:
    generation = params.get("generationConfig")
    if isinstance(generation, dict):
        limit = cast("Mapping[str, object]", generation).get("maxOutputTokens")
        if isinstance(limit, int):
            return limit
    return 0
