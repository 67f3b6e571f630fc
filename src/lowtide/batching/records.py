"""Outcomes as the ledger stores them (JSON) and back: a response, or the error that belongs to one request.

What is stored must come back as the same exception class with the same fields, in any later process.
"""

from __future__ import annotations

from typing import Any

from lowtide import errors
from lowtide.errors import (
    ActorError,
    APIError,
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestErrored,
    BatchRequestExpired,
    DeadlineExceededError,
)
from lowtide.types import ActorResponse

__all__ = ["error_from_json", "error_to_json", "response_from_json"]


_API_ERRORS: dict[str, type[APIError]] = {
    cls.__name__: cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, APIError)
}


def response_from_json(data: dict[str, Any]) -> ActorResponse[Any]:
    """A response as the ledger stores it (a provider codec's `line_outcome` gives it;
    `parsed` is left out, rebuilt from the text with whatever model the caller asks for)."""
    return _RESPONSE.model_validate(data)


_RESPONSE = ActorResponse[Any]  # looked up once: subscripting a generic model on every call costs a hash of it


def error_to_json(error: ActorError) -> dict[str, Any]:
    data: dict[str, Any] = {"class": type(error).__name__, "message": str(error)}
    if isinstance(error, BatchRequestError):
        data.update(batch_id=error.batch_id, custom_id=error.custom_id)
    if isinstance(error, BatchRequestErrored):
        data.update(error_type=error.error_type, api_message=error.api_message, retryable=error.retryable)
    if isinstance(error, APIError):  # a live call's error (a live bulk run stores it)
        data.update(
            message=error.message, status_code=error.status_code, request_id=error.request_id,
            error_type=error.error_type,
        )  # fmt: skip
    if isinstance(error, DeadlineExceededError):
        data.update(attempts=error.attempts)
    return data


def error_from_json(data: dict[str, Any]) -> ActorError:
    kind = data.get("class")
    batch_id, custom_id = str(data.get("batch_id", "")), str(data.get("custom_id", ""))
    match kind:
        case "BatchRequestErrored":
            return BatchRequestErrored(
                batch_id=batch_id,
                custom_id=custom_id,
                error_type=str(data.get("error_type")),
                api_message=str(data.get("api_message")),
                retryable=retryable if isinstance(retryable := data.get("retryable"), bool) else None,
            )
        case "BatchRequestCanceled":
            return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id)
        case "BatchRequestExpired":
            return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id)
        case "BatchRequestError":
            return BatchRequestError(str(data.get("message")), batch_id=batch_id, custom_id=custom_id)
        case "DeadlineExceededError":
            attempts = data.get("attempts")
            return DeadlineExceededError(
                str(data.get("message")), attempts=attempts if isinstance(attempts, int) else 0
            )
        case str() if kind in _API_ERRORS:
            status, request_id, error_type = data.get("status_code"), data.get("request_id"), data.get("error_type")
            return _API_ERRORS[kind](
                str(data.get("message")),
                status_code=status if isinstance(status, int) else None,
                request_id=request_id if isinstance(request_id, str) else None,
                error_type=error_type if isinstance(error_type, str) else None,
            )
        case _:
            return ActorError(str(data.get("message", "unknown error")))
