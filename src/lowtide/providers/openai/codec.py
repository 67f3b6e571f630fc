"""Pure translations between lowtide's types and OpenAI's, for live calls and batches alike: a request as the body of
the Responses or Chat Completions API, an answer as an `ActorResponse`, a batch output or error line as an outcome.
Which errors may succeed if sent again is OpenAI's to say, so it is said here (an SDK exception as an `ActorError`:
`errors.py`, the one module of these that imports the `openai` SDK). No I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from lowtide.batching.backend import Settled
from lowtide.core.json_types import json_object
from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.pricing import UsageShape
from lowtide.errors import ActorError, APIError, BatchRequestErrored
from lowtide.messages.structured import parse_response, parsed_outcome
from lowtide.providers.envelope_codec import ended_outcome, unreadable_outcome
from lowtide.providers.openai.answers import (
    ERROR_CLASSES,
    answer_and_json,
    failed_response_error,
    failure_of,
    retryable,
    to_response,
    usage_of,
)
from lowtide.providers.openai.options import PROVIDER_NAME, OpenAIOptions, options_of
from lowtide.providers.openai.requests import (
    ENDPOINT_URLS,
    Encoded,
    encode_request,
    strict_schema,
    to_chat_body,
    to_responses_body,
)
from lowtide.providers.openai.rules import USAGE
from lowtide.providers.sdk_errors import api_error_class
from lowtide.types import ActorResponse

__all__ = [
    "ENDPOINT_URLS",
    "PROVIDER_NAME",
    "Encoded",
    "OpenAIOptions",
    "answer_and_json",
    "batch_line",
    "encode_request",
    "errored",
    "failed_response_error",
    "file_line_outcome",
    "line_outcome",
    "options_of",
    "parse_response",
    "retryable",
    "strict_schema",
    "to_chat_body",
    "to_outcome",
    "to_response",
    "to_responses_body",
    "usage_of",
]

EXPIRED_CODE = "batch_expired"
CANCELED_CODE = "batch_cancelled"


def batch_line(custom_id: str, encoded: Encoded) -> dict[str, object]:
    """One line of a batch's input file: the request's endpoint and body, named by `custom_id`."""
    return {"custom_id": custom_id, "method": "POST", "url": encoded.url, "body": encoded.body}


def to_outcome(
    line: Mapping[str, object],
    *,
    batch_id: str,
    request_id: str | None = None,
    response_model: type[BaseModel] | None = None,
) -> ActorResponse[object] | ActorError:
    """One output or error file line as the caller's outcome, parsed into `response_model` when one is given."""
    return parsed_outcome(line_outcome(line, batch_id=batch_id, request_id=request_id)[0], response_model)


def line_outcome(
    line: Mapping[str, Any],
    *,
    batch_id: str,
    request_id: str | None = None,
    provider: str = PROVIDER_NAME,
    usage_shape: UsageShape = USAGE,
) -> tuple[Settled, dict[str, Any] | None]:
    """A batch output or error file line (as JSON) as its request's outcome, and for an answer the response as the
    ledger stores it: succeeded (status 200), errored (the API's status, code and message), expired
    (`batch_expired`) or canceled (`batch_cancelled`).

    The line's own `request_id` (OpenAI gives one per request) wins over `request_id`, the create call's. An API of
    OpenAI's shapes (Azure's) names its own `provider` and `usage_shape`.
    """

    def answered(body: Mapping[str, Any], ids: dict[str, str | None]) -> tuple[Settled, dict[str, Any] | None]:
        failure = failure_of(body)
        if failure is None:
            return answer_and_json(
                body, mode=BatchProcessingMode.BATCH, ids=ids, provider=provider, usage_shape=usage_shape
            )
        return errored(batch_id, str(ids["custom_id"]), None, failure.code, failure.message), None

    return file_line_outcome(line, batch_id=batch_id, request_id=request_id, answered=answered, errored=errored)


def file_line_outcome(
    line: Mapping[str, Any],
    *,
    batch_id: str,
    request_id: str | None,
    answered: Callable[[Mapping[str, Any], dict[str, str | None]], tuple[Settled, dict[str, Any] | None]],
    errored: Callable[[str, str, int | None, str, str], BatchRequestErrored],
) -> tuple[Settled, dict[str, Any] | None]:
    """A line of a results file of OpenAI's shape as its request's outcome: `answered` reads a 200's body (with the
    request's ids: the line's own `request_id`, when it has one, wins over the create call's), `errored` makes the
    outcome of a status, code and message the API refused the request with (each API's error classes its own);
    expired and canceled as the line's code says; a line of neither is kept as it came."""
    custom_id = str(line.get("custom_id"))
    answer = json_object(line.get("response"))
    error = json_object(line.get("error"))
    code = error.get("code")
    ended = ended_outcome(code, batch_id, custom_id, canceled=CANCELED_CODE, expired=EXPIRED_CODE)
    if ended is not None:
        return ended, None
    status = answer.get("status_code")
    body = json_object(answer.get("body"))
    if status == 200:
        line_request = answer.get("request_id")
        own = line_request if isinstance(line_request, str) and line_request else request_id
        return answered(body, {"batch_id": batch_id, "custom_id": custom_id, "request_id": own})
    if isinstance(status, int):
        detail = json_object(body.get("error"))
        kind = detail.get("code") or detail.get("type")
        message = detail.get("message") or f"HTTP status {status}"
        return errored(batch_id, custom_id, status, str(kind or f"http_{status}"), str(message)), None
    if error:
        return errored(batch_id, custom_id, None, str(code), str(error.get("message"))), None
    # A shape newer than this code: kept as it came, for a later lowtide to read.
    return unreadable_outcome(
        line, batch_id, custom_id, "a line with neither a response nor an error; a newer lowtide may read it"
    )


def errored(
    batch_id: str,
    custom_id: str,
    status: int | None,
    code: str,
    message: str,
    *,
    by_type: Mapping[str, type[APIError]] | None = ERROR_CLASSES,
    retryable_of: Callable[[int | None, str], bool] = retryable,
) -> BatchRequestErrored:
    """A request the batch ran and the API refused (`status` None: refused in the line's own error object): whether
    it may be sent again by `retryable_of`, its kind by its status and, where `by_type` names its code, by that
    (OpenAI's rules and codes by default; an OpenAI-compatible API gives its own)."""
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=code,
        api_message=message,
        retryable=retryable_of(status, code),
        kind=api_error_class(status, code, by_type=by_type) if status is not None else None,
    )
