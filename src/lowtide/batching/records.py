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
    BatchTimeoutError,
)
from lowtide.types import ActorResponse

__all__ = ["error_from_json", "error_to_json", "response_from_json", "response_to_json"]


_API_ERRORS: dict[str, type[APIError]] = {
    cls.__name__: cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, APIError)
}


def response_to_json(response: ActorResponse[Any]) -> dict[str, Any]:
    # `parsed` is left out: it is rebuilt from the text with whatever model the caller asks for.
    return response.model_dump(mode="json", exclude={"parsed"})


def response_from_json(data: dict[str, Any]) -> ActorResponse[Any]:
    return ActorResponse[Any].model_validate(data)


def error_to_json(error: ActorError) -> dict[str, Any]:
    data: dict[str, Any] = {"class": type(error).__name__, "message": str(error)}
    if isinstance(error, BatchRequestError):
        data.update(batch_id=error.batch_id, custom_id=error.custom_id)
    if isinstance(error, BatchRequestErrored):
        data.update(error_type=error.error_type, api_message=error.api_message)
    if isinstance(error, APIError):
        data.update(
            api_message=error.message,
            status_code=error.status_code,
            request_id=error.request_id,
            error_type=error.error_type,
        )
    if isinstance(error, BatchTimeoutError):
        data.update(batch_id=error.batch_id, elapsed=error.elapsed, max_wait=error.max_wait, canceled=error.canceled)
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
            )
        case "BatchRequestCanceled":
            return BatchRequestCanceled(batch_id=batch_id, custom_id=custom_id)
        case "BatchRequestExpired":
            return BatchRequestExpired(batch_id=batch_id, custom_id=custom_id)
        case "BatchRequestError":
            return BatchRequestError(str(data.get("message")), batch_id=batch_id, custom_id=custom_id)
        case "BatchTimeoutError":
            return BatchTimeoutError(
                batch_id=batch_id,
                elapsed=float(data.get("elapsed", 0.0)),
                max_wait=float(data.get("max_wait", 0.0)),
                canceled=bool(data.get("canceled")),
            )
        case str() if kind in _API_ERRORS:
            status = data.get("status_code")
            return _API_ERRORS[kind](
                str(data.get("api_message") or data.get("message")),
                status_code=status if isinstance(status, int) else None,
                request_id=data.get("request_id"),
                error_type=data.get("error_type"),
            )
        case _:
            return ActorError(str(data.get("message", "unknown error")))
