"""Mistral's error shapes: `{"object": "error", "message", "type", "param", "code"}` with the HTTP status, a 401's
`{"message": "Unauthorized", "request_id"}`, and a 422's `{"detail": [{"loc", "msg", "type"}]}`; the core's
`ApiError`s (faults, bodies too large or not JSON, rate limits) translated into them."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import request_id
from lowtide.emulator.core.jsonutil import JsonObject

__all__ = ["MistralError", "from_api_error", "invalid", "mistral_error_response", "not_found", "validation"]

_TYPES = {
    400: "invalid_request_error",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limited",
    500: "internal_server_error",
    503: "service_unavailable",
    504: "gateway_timeout",
}


class MistralError(Exception):
    """An error response of Mistral's API waiting to be sent."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
        detail: list[JsonObject] | None = None,
    ) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.error_type = error_type or _TYPES.get(status, "internal_server_error" if status >= 500 else "error")
        self.code = code
        self.param = param
        self.headers = headers or {}
        self.detail = detail

    def body(self, request_id: str) -> JsonObject:
        if self.detail is not None:
            return {"detail": self.detail}
        if self.status == 401:
            return {"message": self.message, "request_id": request_id}
        return {"object": "error", "message": self.message, "type": self.error_type, "param": self.param,
                "code": self.code}  # fmt: skip


def invalid(message: str, *, param: str | None = None, code: str | None = None) -> MistralError:
    return MistralError(400, message, param=param, code=code)


def not_found(message: str) -> MistralError:
    return MistralError(404, message, code="not_found")


def validation(loc: list[str | int], message: str, kind: str = "value_error") -> MistralError:
    """A 422, as Mistral's request validation answers a body it cannot read."""
    return MistralError(422, message, detail=[{"loc": ["body", *loc], "msg": message, "type": kind}])


def from_api_error(error: ApiError) -> MistralError:
    """A core error in Mistral's terms (its 529 is Mistral's 503; a 429 keeps its `retry-after`)."""
    status = 503 if error.status == 529 else error.status
    return MistralError(status, error.message, headers=dict(error.headers))


def mistral_error_response(request: Request, error: Exception) -> Response:
    if isinstance(error, HTTPException):
        error = MistralError(error.status_code, "Not Found" if error.status_code == 404 else str(error.detail))
    elif isinstance(error, ApiError):
        error = from_api_error(error)
    elif not isinstance(error, MistralError):
        error = MistralError(500, "Internal server error")
    said = request_id(request)
    return JSONResponse(error.body(said), status_code=error.status, headers={**error.headers, "x-request-id": said})
