"""The groq SDK's exceptions as lowtide's `ActorError`s (one context manager).

Groq's SDK is generated as OpenAI's is (Stainless): an `APIStatusError` holding the response and the JSON error body
(`{"error": {"message", "type", "code"}}`), an `APIConnectionError` with a timeout subclass, over httpx.
`stainless_errors` reads any SDK of that make, so that Together's reads alike.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import groq
import httpx

from lowtide.providers import SdkErrors, StatusError, json_object, seconds_of, translating

__all__ = ["SDK_ERRORS", "stainless_errors", "translate_errors"]


class _StatusLike(Protocol):
    message: str
    body: object
    status_code: int

    @property
    def response(self) -> httpx.Response: ...


class _ConnectionLike(Protocol):
    @property
    def request(self) -> httpx.Request: ...


def _read_status(exc: _StatusLike) -> StatusError:
    body = json_object(exc.body)
    fields = json_object(body.get("error", body))
    message = fields.get("message")
    code = fields.get("code") or fields.get("type")
    headers = exc.response.headers
    return StatusError(
        exc.status_code,
        message if isinstance(message, str) and message else exc.message,
        request_id=headers.get("x-request-id"),
        error_type=code if isinstance(code, str) else None,
        retry_after=seconds_of(headers.get("retry-after")),
    )


def _url_of(exc: _ConnectionLike) -> str:
    return str(exc.request.url)


def stainless_errors(
    *, client: str, api: str, status: type[Any], connection: type[Any], base: type[Any], timeout: type[Any]
) -> SdkErrors[Any, Any]:
    """The exceptions of an SDK generated as OpenAI's is, as `translating` reads them."""
    return SdkErrors(
        client=client,
        api=api,
        status=status,
        read_status=_read_status,
        connection=connection,
        url_of=_url_of,
        base=base,
        timeout=timeout,
        broken=(httpx.TransportError,),
    )


SDK_ERRORS = stainless_errors(
    client="Groq",
    api="Groq API",
    status=groq.APIStatusError,
    connection=groq.APIConnectionError,
    base=groq.GroqError,
    timeout=groq.APITimeoutError,
)
"""The groq SDK's exceptions: status, code and request id from its error body and headers, the wait a 429 asked
for from `retry-after`."""


def translate_errors() -> AbstractContextManager[None]:
    """Re-raise every groq SDK exception as the matching `ActorError`."""
    return translating(SDK_ERRORS)
