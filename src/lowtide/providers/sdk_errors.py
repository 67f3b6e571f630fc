"""A provider's SDK exceptions and HTTP statuses as lowtide's `APIError`s: one mapping for every provider, each
provider saying only what is its own (its SDK's exception classes, how its status errors read, the error types that
mean something other than their status says).

`api_error_from_status` picks the most specific class for a status; `translating(sdk)` is the one context manager a
provider wraps its SDK calls in, re-raising every SDK exception as the matching `ActorError` `from` it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from lowtide.config.endpoints import unreachable
from lowtide.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)

__all__ = [
    "SdkErrors",
    "StatusError",
    "api_error_class",
    "api_error_from_status",
    "request_url",
    "seconds_of",
    "translating",
]

_BY_STATUS: Mapping[int, type[APIError]] = {401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError}


def api_error_from_status(
    status: int,
    message: str,
    *,
    request_id: str | None,
    error_type: str | None,
    retry_after: float | None = None,
    by_type: Mapping[str, type[APIError]] | None = None,
) -> APIError:
    """The most specific `APIError` for an HTTP status: 429 a `RateLimitError` (with the wait the API asked for),
    529 an `OverloadedError`, other 5xx a `ServerError`, 401, 403 and 404 their own, any other an
    `InvalidRequestError`. `by_type` is the provider's word, which wins: an error type that means something other
    than its status says (a 429 that is the account's standing, not a rate, say)."""
    common: dict[str, Any] = {"status_code": status, "request_id": request_id, "error_type": error_type}
    kind = api_error_class(status, error_type, by_type=by_type)
    if issubclass(kind, RateLimitError):
        return kind(message, retry_after=retry_after, **common)
    return kind(message, **common)


def api_error_class(
    status: int, error_type: str | None = None, *, by_type: Mapping[str, type[APIError]] | None = None
) -> type[APIError]:
    """The class `api_error_from_status` gives an HTTP status and error type (a batch request's `kind`, say)."""
    overridden = by_type.get(error_type) if by_type is not None and error_type is not None else None
    return overridden or _kind_of(status)


def _kind_of(status: int) -> type[APIError]:
    if status == 429:
        return RateLimitError
    if status == 529:
        return OverloadedError
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, InvalidRequestError)


@dataclass(frozen=True)
class StatusError:
    """What an SDK's exception for an HTTP error status says, in lowtide's words."""

    status: int
    message: str
    request_id: str | None = None
    error_type: str | None = None
    """The API's error type or code, as it names it."""
    retry_after: float | None = None
    """The wait the API asked for, in seconds, when it said."""


StatusT = TypeVar("StatusT", bound=BaseException)
ConnectionT = TypeVar("ConnectionT", bound=BaseException)


def request_url(exc: BaseException) -> str:
    """The URL of the request a connection exception carries (`exc.request.url`: httpx's, and every SDK's built on
    it); empty when it carries none."""
    request: object = getattr(exc, "request", None)
    return str(getattr(request, "url", ""))


@dataclass(frozen=True)
class SdkErrors(Generic[StatusT, ConnectionT]):
    """One provider's SDK, as `translating` reads its exceptions."""

    client: str
    """The SDK's name in "The ... client failed" (`Anthropic`, say)."""
    api: str
    """The API's name in messages ("The API did not answer in time.")."""
    status: type[StatusT]
    """The exception for an HTTP error status."""
    read_status: Callable[[StatusT], StatusError]
    connection: type[ConnectionT]
    """The exception for a connection that failed or dropped (a timeout is a subclass the SDK may have: `timeout`)."""
    base: type[BaseException]
    """The root of the SDK's exceptions: anything else it raises."""
    url_of: Callable[[ConnectionT], str] = request_url
    """The URL a failed connection was to (to say whether it could not be made at all: `APIUnreachableError`); by
    default its request's (`request_url`)."""
    timeout: type[BaseException] | None = None
    broken: tuple[type[BaseException], ...] = ()
    """The transport's exceptions for a body that broke after its status line (a batch's results, streamed)."""
    by_type: Mapping[str, type[APIError]] = field(default_factory=dict[str, type[APIError]])
    """Error types whose class is not their status's (`api_error_from_status`)."""


@contextmanager
def translating(sdk: SdkErrors[Any, Any]) -> Generator[None]:
    """Re-raise every exception of `sdk` (and a download cut mid-line) as the matching `ActorError`, keeping status
    code, request id, the API's error type and the wait it asked for."""
    try:
        yield
    except BaseException as exc:
        error = _translated(sdk, exc)
        if error is None:
            raise
        raise error from exc


def _translated(sdk: SdkErrors[Any, Any], exc: BaseException) -> APIError | None:
    if sdk.timeout is not None and isinstance(exc, sdk.timeout):
        return APITimeoutError(f"The {sdk.api} did not answer in time.")
    if isinstance(exc, sdk.connection):
        return unreachable(exc, sdk.url_of(exc)) or APIConnectionError(f"The connection to the {sdk.api} failed: {exc}")
    if isinstance(exc, json.JSONDecodeError):
        # An SDK decoding a download line by line: a line cut short means the download broke.
        return APIConnectionError(f"The download broke off mid-line (at character {exc.pos}).")
    if isinstance(exc, sdk.broken):
        return APIConnectionError(f"The connection to the {sdk.api} broke: {type(exc).__name__}")
    if isinstance(exc, sdk.status):
        said = sdk.read_status(exc)
        return api_error_from_status(
            said.status,
            said.message,
            request_id=said.request_id,
            error_type=said.error_type,
            retry_after=said.retry_after,
            by_type=sdk.by_type,
        )
    if isinstance(exc, sdk.base):
        return APIError(f"The {sdk.client} client failed: {type(exc).__name__}: {exc}")
    return None


def seconds_of(value: str | None, *, scale: float = 1.0) -> float | None:
    """A wait a header gave (`retry-after: 2`; `scale` 1000 for milliseconds) in seconds; None when absent, not a
    number, or negative."""
    if value is None:
        return None
    try:
        seconds = float(value) / scale
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
