"""OpenAI's error vocabulary: the `{"error": {"message", "type", "param", "code"}}` body, the usual message and
type of each HTTP status, the validation messages in OpenAI's words, and the exception that carries one of them
from the emulator's logic to its HTTP layer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lowtide.emulator.core.errors import ERROR_STATUS, ApiError, default_message

__all__ = [
    "OpenAIError",
    "above_maximum",
    "below_minimum",
    "from_api_error",
    "invalid_type",
    "invalid_value",
    "missing_parameter",
    "no_such",
    "rate_limit_headers",
    "status_error",
    "unknown_parameter",
]

_DEFAULTS: Mapping[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
    ),
    403: (
        "invalid_request_error",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    404: ("invalid_request_error", None, "Not found."),
    409: ("invalid_request_error", None, "The request conflicts with the current state of the resource."),
    413: ("invalid_request_error", None, "Request entity too large."),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1s. Visit "
        "https://platform.openai.com/account/rate-limits "
        "to learn more.",
    ),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
    504: ("server_error", None, "The server timed out while processing your request."),
}


class OpenAIError(Exception):
    """An OpenAI error response waiting to be sent: raised anywhere below the OpenAI routes, rendered by the app."""

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        default_type, _, default_message = _defaults(status)
        self.status = status
        self.message = message if message is not None else default_message
        self.error_type = error_type if error_type is not None else default_type
        self.param = param
        self.code = code
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(f"{status} {self.error_type}: {self.message}")

    def body(self) -> dict[str, Any]:
        """The exact body of the error response (and of a batch request's error line)."""
        return {"error": {"message": self.message, "type": self.error_type, "param": self.param, "code": self.code}}


def _defaults(status: int) -> tuple[str, str | None, str]:
    if status in _DEFAULTS:
        return _DEFAULTS[status]
    return _DEFAULTS[500] if status >= 500 else _DEFAULTS[400]


def status_error(status: int, message: str | None = None, *, retry_after: float | None = None) -> OpenAIError:
    """The error OpenAI answers `status` with; a 429 carries the rate-limit headers OpenAI sends with it."""
    headers = rate_limit_headers(retry_after) if status == 429 else {}
    if retry_after is not None and status != 429:
        headers["retry-after"] = _seconds(retry_after)
    return OpenAIError(status, message, code=_defaults(status)[1], headers=headers)


def rate_limit_headers(retry_after: float | None) -> dict[str, str]:
    """OpenAI's `x-ratelimit-*` headers for an exhausted request limit, and `retry-after` when one was armed."""
    reset = f"{_seconds(retry_after)}s" if retry_after is not None else "1s"
    headers = {
        "x-ratelimit-limit-requests": "10000",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": reset,
        "x-ratelimit-limit-tokens": "2000000",
        "x-ratelimit-remaining-tokens": "2000000",
        "x-ratelimit-reset-tokens": "0s",
    }
    if retry_after is not None:
        headers["retry-after"] = _seconds(retry_after)
    return headers


def from_api_error(error: ApiError) -> OpenAIError:
    """An error raised in the emulator's shared plumbing (a fault, a body too large or not JSON) in OpenAI's terms.

    The message is kept when it was chosen (a fault's own message, a body error); an error type's default message is
    Anthropic's wording, so it gives way to OpenAI's for the same status."""
    retry_after = error.headers.get("retry-after")
    seconds = float(retry_after) if retry_after is not None else None
    chosen = error.message if error.message != _anthropic_default(error.error_type) else None
    return status_error(error.status, chosen, retry_after=seconds)


def _anthropic_default(error_type: str) -> str:
    return default_message(error_type) if error_type in ERROR_STATUS else ""


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# -- validation messages, in OpenAI's words -----------------------------------------------------------------------


def missing_parameter(param: str) -> OpenAIError:
    return OpenAIError(400, f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter")


def unknown_parameter(param: str) -> OpenAIError:
    return OpenAIError(400, f"Unknown parameter: '{param}'.", param=param, code="unknown_parameter")


def invalid_type(param: str, expected: str, value: object) -> OpenAIError:
    return OpenAIError(
        400,
        f"Invalid type for '{param}': expected {expected}, but got {_json_kind(value)} instead.",
        param=param,
        code="invalid_type",
    )


def invalid_value(param: str, value: object, supported: tuple[str, ...] = ()) -> OpenAIError:
    shown = value if isinstance(value, str) else repr(value)
    listed = ", ".join(f"'{item}'" for item in supported)
    message = (
        f"Invalid value: '{shown}'. Supported values are: {listed}." if supported else f"Invalid value: '{shown}'."
    )
    return OpenAIError(400, message, param=param, code="invalid_value")


def below_minimum(param: str, minimum: float, value: object, *, integer: bool = True) -> OpenAIError:
    return _out_of_range(param, value, integer=integer, side="below minimum", bound=f">= {minimum:g}", code="below_min")


def above_maximum(param: str, maximum: float, value: object, *, integer: bool = True) -> OpenAIError:
    return _out_of_range(param, value, integer=integer, side="above maximum", bound=f"<= {maximum:g}", code="above_max")


def _out_of_range(param: str, value: object, *, integer: bool, side: str, bound: str, code: str) -> OpenAIError:
    kind = "integer" if integer else "decimal"
    return OpenAIError(
        400,
        f"Invalid '{param}': {kind} {side} value. Expected a value {bound}, but got {value} instead.",
        param=param,
        code=f"{kind}_{code}_value",
    )


def no_such(kind: str, object_id: str, param: str | None = "id") -> OpenAIError:
    return OpenAIError(404, f"No such {kind} object: {object_id}", param=param)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number" if isinstance(value, float) else "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
