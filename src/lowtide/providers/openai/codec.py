"""Pure translations between lowtide's types and OpenAI's, for live calls and batches alike: a request as the body of
the Responses or Chat Completions API, an answer as an `ActorResponse`, a batch output or error line as an outcome,
an SDK exception as an `ActorError` (one context manager). Which errors may succeed if sent again is OpenAI's to say,
so it is said here. No I/O."""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import httpx2
import openai
from pydantic import BaseModel

from lowtide.batching.backend import Settled
from lowtide.config import BatchProcessingMode
from lowtide.endpoints import unreachable
from lowtide.errors import (
    ActorError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchRequestUnreadable,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from lowtide.providers.openai.answers import (
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
from lowtide.structured import parse_response, parsed_outcome
from lowtide.types import ActorResponse

__all__ = [
    "ENDPOINT_URLS",
    "PROVIDER_NAME",
    "Encoded",
    "OpenAIOptions",
    "answer_and_json",
    "api_error_from_status",
    "batch_line",
    "encode_request",
    "failed_response_error",
    "line_outcome",
    "options_of",
    "parse_response",
    "retryable",
    "strict_schema",
    "to_chat_body",
    "to_outcome",
    "to_response",
    "to_responses_body",
    "translate_errors",
    "usage_of",
]

EXPIRED_CODE = "batch_expired"
CANCELED_CODE = "batch_cancelled"


def batch_line(custom_id: str, encoded: Encoded) -> dict[str, Any]:
    """One line of a batch's input file: the request's endpoint and body, named by `custom_id`."""
    return {"custom_id": custom_id, "method": "POST", "url": encoded.url, "body": encoded.body}


def to_outcome(
    line: Mapping[str, Any],
    *,
    batch_id: str,
    request_id: str | None = None,
    response_model: type[BaseModel] | None = None,
) -> ActorResponse[Any] | ActorError:
    """One output or error file line as the caller's outcome, parsed into `response_model` when one is given."""
    return parsed_outcome(line_outcome(line, batch_id=batch_id, request_id=request_id)[0], response_model)


def line_outcome(
    line: Mapping[str, Any], *, batch_id: str, request_id: str | None = None
) -> tuple[Settled, dict[str, Any] | None]:
    """A batch output or error file line (as JSON) as its request's outcome, and for an answer the response as the
    ledger stores it: succeeded (status 200), errored (the API's status, code and message), expired
    (`batch_expired`) or canceled (`batch_cancelled`).

    The line's own `request_id` (OpenAI gives one per request) wins over `request_id`, the create call's.
    """
    custom_id = str(line.get("custom_id"))
    answer: Mapping[str, Any] = line.get("response") or {}
    error: Mapping[str, Any] = line.get("error") or {}
    code = error.get("code")
    if code == EXPIRED_CODE:
        return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id), None
    if code == CANCELED_CODE:
        return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id), None
    status = answer.get("status_code")
    body: Mapping[str, Any] = answer.get("body") or {}
    if status == 200:
        failure = failure_of(body)
        if failure is None:
            ids = {"batch_id": batch_id, "custom_id": custom_id, "request_id": answer.get("request_id") or request_id}
            return answer_and_json(body, mode=BatchProcessingMode.BATCH, ids=ids)
        return _errored(batch_id, custom_id, None, failure.code, failure.message), None
    if isinstance(status, int):
        detail: Mapping[str, Any] = body.get("error") or {}
        kind = detail.get("code") or detail.get("type")
        message = detail.get("message") or f"HTTP status {status}"
        return _errored(batch_id, custom_id, status, str(kind or f"http_{status}"), str(message)), None
    if error:
        return _errored(batch_id, custom_id, None, str(code), str(error.get("message"))), None
    # A shape newer than this code: kept as it came, for a later lowtide to read.
    return BatchRequestUnreadable(
        batch_id=batch_id,
        custom_id=custom_id,
        raw_line=json.dumps(line, ensure_ascii=False, separators=(",", ":")),
        reason="a line with neither a response nor an error; a newer lowtide may read it",
    ), None


def _errored(batch_id: str, custom_id: str, status: int | None, code: str, message: str) -> BatchRequestErrored:
    return BatchRequestErrored(
        batch_id=batch_id,
        custom_id=custom_id,
        error_type=code,
        api_message=message,
        retryable=retryable(status, code),
    )


def api_error_from_status(
    status: int,
    message: str,
    *,
    request_id: str | None,
    error_type: str | None,
    retry_after: float | None = None,
) -> APIError:
    """The most specific `APIError` for an HTTP status and OpenAI's error code.

    A 429 for `insufficient_quota` is the account's standing, not a rate: it is a `PermissionDeniedError`, which
    is not retried.
    """
    common: dict[str, Any] = {"status_code": status, "request_id": request_id, "error_type": error_type}
    if error_type == "insufficient_quota":
        return PermissionDeniedError(message, **common)
    if status == 429:
        return RateLimitError(message, retry_after=retry_after, **common)
    if status >= 500:
        return ServerError(message, **common)
    errors: Mapping[int, type[APIError]] = {401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError}
    return errors.get(status, InvalidRequestError)(message, **common)


@contextmanager
def translate_errors() -> Generator[None]:
    """Re-raise every SDK exception as the matching `ActorError`, keeping status code, request id, OpenAI's error
    code and the wait a 429 asked for."""
    try:
        yield
    except openai.APITimeoutError as exc:
        raise APITimeoutError("The OpenAI API did not answer in time.") from exc
    except openai.APIConnectionError as exc:
        raise unreachable(exc, str(exc.request.url)) or APIConnectionError(
            f"The connection to the OpenAI API failed: {exc.message}"
        ) from exc
    except json.JSONDecodeError as exc:
        raise APIConnectionError(f"The download broke off mid-line (at character {exc.pos}).") from exc
    except httpx2.TransportError as exc:
        # A body streamed after the status line (a batch's file) fails with the transport's own error.
        raise APIConnectionError(f"The connection to the OpenAI API broke: {type(exc).__name__}") from exc
    except openai.APIStatusError as exc:
        detail: object = exc.body
        message = cast("dict[str, object]", detail).get("message") if isinstance(detail, dict) else None
        raise api_error_from_status(
            exc.status_code,
            message if isinstance(message, str) and message else exc.message,
            request_id=exc.request_id,
            error_type=exc.code or exc.type,
            retry_after=_retry_after(exc.response.headers),
        ) from exc
    except openai.OpenAIError as exc:
        raise APIError(f"The OpenAI client failed: {type(exc).__name__}: {exc}") from exc


def _retry_after(headers: httpx2.Headers) -> float | None:
    """The wait OpenAI asked for: `retry-after-ms`, else `retry-after` in seconds."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None
