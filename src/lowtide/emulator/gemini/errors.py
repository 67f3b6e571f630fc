"""Gemini's error vocabulary: Google's `{"error": {"code", "message", "status", "details"}}` body, the canonical
status name and usual message of each HTTP status, a 429's `RetryInfo` (the wait, as `"30s"`), and the exception
that carries one from the emulator's logic to its HTTP layer."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.emulator.core.errors import ERROR_STATUS, ApiError, default_message
from lowtide.emulator.core.http import request_id
from lowtide.emulator.gemini.wire import ErrorBody, RpcStatus

__all__ = [
    "RETRY_INFO",
    "GeminiError",
    "bad_key",
    "from_api_error",
    "gemini_error_response",
    "invalid_argument",
    "not_found",
    "retry_delay",
    "rpc_status",
    "status_error",
]

RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"

_DEFAULTS: Mapping[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "Requested entity was not found."),
    409: ("ALREADY_EXISTS", "The request conflicts with the current state of the resource."),
    413: ("INVALID_ARGUMENT", "Request payload size exceeds the limit."),
    429: (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details. For more information on this "
        "error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    ),
    499: ("CANCELLED", "The operation was cancelled."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
    ),
    501: ("UNIMPLEMENTED", "Method not implemented."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}


def _defaults(status: int) -> tuple[str, str]:
    if status in _DEFAULTS:
        return _DEFAULTS[status]
    return _DEFAULTS[500] if status >= 500 else _DEFAULTS[400]


class GeminiError(Exception):
    """A Gemini error response waiting to be sent: raised anywhere below the Gemini routes, rendered by the app."""

    def __init__(
        self,
        code: int,
        message: str | None = None,
        *,
        details: list[dict[str, object]] | None = None,
        headers: Mapping[str, str] | None = None,
        status: str | None = None,
    ) -> None:
        named, usual = _defaults(code)
        self.code = code
        self.status = status or named
        self.message = message if message is not None else usual
        self.details = details
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(f"{code} {status}: {self.message}")

    def error(self) -> ErrorBody:
        """The `error` object (also a batch request's error, without the wrapper)."""
        body: ErrorBody = {"code": self.code, "message": self.message, "status": self.status}
        if self.details:
            body["details"] = self.details
        return body


# google.rpc.Code, by the canonical status name: what a `google.rpc.Status` (a batch row's error, a failed
# operation's) carries in its `code`, where an HTTP error body carries the HTTP status.
_RPC_CODES: Mapping[str, int] = {
    "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5, "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16,
}  # fmt: skip


def rpc_status(error: GeminiError) -> RpcStatus:
    """`error` as a `google.rpc.Status`: a batch row's `error`, a failed job's: the gRPC code of its status name
    (without details, which the SDK reads as strings in a job's errors)."""
    return {"code": _RPC_CODES.get(error.status, 2), "message": error.message}


def retry_delay(seconds: float) -> str:
    """A `google.protobuf.Duration` as JSON writes it: `"30s"`, `"1.5s"`."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


def status_error(code: int, message: str | None = None, *, retry_after: float | None = None) -> GeminiError:
    """The error Gemini answers `code` with; a 429 says how long to wait in a `RetryInfo` detail (Gemini sends no
    `retry-after` header and no rate-limit headers)."""
    details: list[dict[str, object]] | None = None
    if code == 429:
        details = [{"@type": RETRY_INFO, "retryDelay": retry_delay(retry_after if retry_after is not None else 1.0)}]
    return GeminiError(code, message, details=details)


def from_api_error(error: ApiError) -> GeminiError:
    """An error raised in the emulator's shared plumbing (a fault, a rate limit, a body too large or not JSON) in
    Gemini's terms: the overloaded 529 of the core's vocabulary is Gemini's 503. A message the fault chose is kept;
    the core's default messages (Anthropic's wording) give way to Gemini's for the same status."""
    retry_after = error.headers.get("retry-after")
    seconds = float(retry_after) if retry_after is not None else None
    code = 503 if error.status == 529 else error.status
    usual = default_message(error.error_type) if error.error_type in ERROR_STATUS else ""
    chosen = error.message if error.message != usual else None
    return status_error(code, chosen, retry_after=seconds)


def invalid_argument(message: str) -> GeminiError:
    return GeminiError(400, message)


def not_found(message: str) -> GeminiError:
    return GeminiError(404, message)


def bad_key() -> GeminiError:
    return GeminiError(
        400,
        "API key not valid. Please pass a valid API key.",
        details=[{"@type": _ERROR_INFO, "reason": "API_KEY_INVALID", "domain": "googleapis.com"}],
    )


def gemini_error_response(request: Request, error: Exception) -> Response:
    """A `GeminiError`, or a routing error or crash met by a Gemini caller, in Google's error shape."""
    if isinstance(error, HTTPException):
        status = error.status_code
        message = (
            f"Method not found: {request.method} {request.url.path}" if status in (404, 405) else str(error.detail)
        )
        error = GeminiError(404 if status == 405 else status, message)
    elif not isinstance(error, GeminiError):
        error = GeminiError(500)
    headers = {**error.headers, "request-id": request_id(request)}
    if request.url.path.startswith("/upload/") and "upload_id" in request.query_params:
        # A resumable upload's calls always say where the upload stands: the SDK retries one whose answer does not.
        headers["x-goog-upload-status"] = "final"
    return JSONResponse({"error": error.error()}, status_code=error.code, headers=headers)


class GoogleErrors:
    """What an emulation that answers in Google's error shape says of its errors (the Gemini API's and Vertex AI's:
    a mixin before `Emulation` in their bases)."""

    def translate(self, error: ApiError) -> Exception:
        return from_api_error(error)

    def error_response(self, request: Request, error: Exception) -> Response:
        return gemini_error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], Callable[[Request, Exception], Response]]:
        return {GeminiError: gemini_error_response}
