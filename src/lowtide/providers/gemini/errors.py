"""The google-genai SDK's exceptions as lowtide's `ActorError`s (one context manager), and the wait a 429 asks for.

Gemini sends no `retry-after` header: its 429 (`RESOURCE_EXHAUSTED`) carries the wait in a
`type.googleapis.com/google.rpc.RetryInfo` detail, `retryDelay` a duration such as `"7s"` or `"0.5s"`. That wait is
the `RateLimitError`'s `retry_after`, which pauses the actor's quota scope.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import cast

import httpx2
from google.genai import errors

from lowtide.providers import SdkErrors, StatusError, translating

__all__ = ["RETRY_INFO", "SDK_ERRORS", "retry_delay", "translate_errors"]

RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")


def retry_delay(body: object) -> float | None:
    """The wait, in seconds, a Google error body's `RetryInfo` detail asks for; None when it names none."""
    if isinstance(body, list) and len(cast("list[object]", body)) == 1:
        body = cast("list[object]", body)[0]
    if not isinstance(body, dict):
        return None
    fields = cast("dict[str, object]", body)
    error: object = fields.get("error", fields)
    details: object = cast("dict[str, object]", error).get("details") if isinstance(error, dict) else None
    for detail in cast("list[object]", details) if isinstance(details, list) else []:
        if isinstance(detail, dict):
            entry = cast("Mapping[str, object]", detail)
            delay = entry.get("retryDelay")
            if entry.get("@type") == RETRY_INFO and isinstance(delay, str):
                matched = _SECONDS.match(delay)
                if matched:
                    return float(matched.group(1))
    return None


def _status_error(exc: errors.APIError) -> StatusError:
    response: object = getattr(exc, "response", None)
    headers: object = getattr(response, "headers", None)
    request_id = cast("Mapping[str, str]", headers).get("x-request-id") if isinstance(headers, Mapping) else None
    details: object = getattr(exc, "details", None)
    return StatusError(
        exc.code,
        exc.message or f"The Gemini API answered HTTP status {exc.code}.",
        request_id=request_id,
        error_type=exc.status,
        retry_after=retry_delay(details),
    )


SDK_ERRORS = SdkErrors(
    client="google-genai",
    api="Gemini API",
    status=errors.APIError,
    read_status=_status_error,
    connection=httpx2.TransportError,
    base=errors.APIError,
    timeout=httpx2.TimeoutException,
)
"""The google-genai SDK's exceptions as `translating` reads them: its `APIError` carries the HTTP status and Google's
status name (`RESOURCE_EXHAUSTED`, `INVALID_ARGUMENT`, ...); a failed connection is the httpx2 client's own."""


_BY_API: dict[str, SdkErrors[errors.APIError, httpx2.TransportError]] = {SDK_ERRORS.api: SDK_ERRORS}


def translate_errors(api: str = SDK_ERRORS.api) -> AbstractContextManager[None]:
    """Re-raise every SDK exception as the matching `ActorError`, keeping status code, Google's status name and the
    wait a 429 asked for; `api` names the API in messages (the same SDK reaches Vertex AI)."""
    known = _BY_API.get(api)
    if known is None:
        known = _BY_API[api] = dataclasses.replace(SDK_ERRORS, api=api)
    return translating(known)
