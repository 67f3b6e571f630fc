"""The mistralai SDK's exceptions as lowtide's `ActorError`s (one context manager).

Every HTTP error status reaches lowtide as the SDK's `MistralError` (`SDKError`, or `HTTPValidationError` for a 422),
carrying the status, the headers and the body: Mistral's `{"object": "error", "message", "type", "param", "code"}`, a
422's `{"detail": [...]}`, or a bare `{"message": ...}`. A 429's wait is its `retry-after` header. A connection that
fails is the httpx2 client's own error, a response that never came the SDK's `NoResponseError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import cast

import httpx2
from mistralai.client import errors

from lowtide.providers import SdkErrors, StatusError, seconds_of, translating

__all__ = ["SDK_ERRORS", "error_of_body", "translate_errors"]


def error_of_body(status: int, text: str) -> tuple[str, str | None]:
    """The message and error type (Mistral's `type`, else its `code`) of an error body; the raw text's start when it
    is not Mistral's JSON."""
    try:
        body: object = json.loads(text) if text else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        fields = cast("Mapping[str, object]", body)
        message = fields.get("message")
        detail = fields.get("detail")
        kind = fields.get("type") or fields.get("code")
        if isinstance(detail, list) and detail:
            first = cast("list[object]", detail)[0]
            if isinstance(first, dict):
                entry = cast("Mapping[str, object]", first)
                where = ".".join(str(part) for part in cast("list[object]", entry.get("loc") or []))
                return f"{where}: {entry.get('msg')}", "validation_error"
        if isinstance(detail, str):
            message = message or detail
        if isinstance(message, str) and message:
            return message, str(kind) if kind is not None else None
    return (text[:300] or f"Mistral answered HTTP status {status}."), None


def _status_error(exc: errors.MistralError) -> StatusError:
    message, error_type = error_of_body(exc.status_code, exc.body)
    headers = exc.headers
    return StatusError(
        exc.status_code,
        message,
        request_id=headers.get("x-request-id") or headers.get("request-id"),
        error_type=error_type,
        retry_after=seconds_of(headers.get("retry-after")),
    )


SDK_ERRORS = SdkErrors(
    client="mistralai",
    api="Mistral API",
    status=errors.MistralError,
    read_status=_status_error,
    connection=httpx2.TransportError,
    base=errors.MistralError,
    timeout=httpx2.TimeoutException,
    broken=(errors.NoResponseError,),
)
"""The mistralai SDK's exceptions as `translating` reads them."""


def translate_errors() -> AbstractContextManager[None]:
    """Re-raise every SDK exception as the matching `ActorError`, keeping status code, Mistral's error type and the
    wait a 429 asked for."""
    return translating(SDK_ERRORS)
