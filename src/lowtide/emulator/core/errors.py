"""The API's error vocabulary: error types, their HTTP statuses and usual messages, and the exception that carries
one from the emulator's logic to its HTTP layer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ERROR_STATUS",
    "ApiError",
    "default_message",
    "error_body",
    "error_type_for_status",
    "invalid_request",
    "not_found",
]

# `request_too_large` is what the API sends with a 413, although the SDK's `ErrorType` literal does not list it.
ERROR_STATUS: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "conflict_error": 409,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

_TYPE_FOR_STATUS = {status: error_type for error_type, status in ERROR_STATUS.items()}

_DEFAULT_MESSAGES: Mapping[str, str] = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found.",
    "conflict_error": "The request conflicts with the current state of the resource.",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of requests has exceeded your rate limit.",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out.",
    "overloaded_error": "Overloaded",
}


def error_type_for_status(status: int) -> str:
    """The error type the API pairs with an HTTP status; unknown statuses fall back by class (5xx or 4xx)."""
    return _TYPE_FOR_STATUS.get(status, "api_error" if status >= 500 else "invalid_request_error")


def default_message(error_type: str) -> str:
    return _DEFAULT_MESSAGES.get(error_type, "Emulated error.")


def error_body(
    error_type: str, message: str, request_id: str, details: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The exact body of every API error response. `details` (`{"error_code": ...}`) names a specific cause, which
    the SDK turns into its own exception class (`FileNotDownloadableError`, say)."""
    error: dict[str, Any] = {"type": error_type, "message": message}
    if details is not None:
        error["details"] = dict(details)
    return {"type": "error", "error": error, "request_id": request_id}


class ApiError(Exception):
    """An API error response waiting to be sent: raised anywhere below the routes, rendered by the HTTP layer."""

    def __init__(
        self,
        error_type: str,
        message: str | None = None,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        self.error_type = error_type
        self.details = details
        self.message = message if message is not None else default_message(error_type)
        self.status = status if status is not None else ERROR_STATUS.get(error_type, 500)
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(f"{self.status} {error_type}: {self.message}")


def invalid_request(message: str) -> ApiError:
    return ApiError("invalid_request_error", message)


def not_found(message: str) -> ApiError:
    return ApiError("not_found_error", message)
