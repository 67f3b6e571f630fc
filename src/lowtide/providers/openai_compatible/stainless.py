"""The exceptions of any SDK generated as OpenAI's is (Stainless: groq, together) as `translating` reads them, without
importing any such SDK: each dialect's `sdk.py` names its own SDK's classes (`stainless_errors`), so that Together's
provider, which reads its errors as Groq's, does not import the groq SDK (49 modules: 0.02 s of CPU on first use
with bytecode cached).

Such an SDK raises an `APIStatusError` holding the response and the JSON error body (`{"error": {"message", "type",
"code"}}`) and an `APIConnectionError` with a timeout subclass, over httpx."""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from lowtide.providers import SdkErrors, StatusError, json_object, seconds_of

__all__ = ["stainless_errors"]


class _StatusLike(Protocol):
    message: str
    body: object
    status_code: int

    @property
    def response(self) -> httpx.Response: ...


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
        base=base,
        timeout=timeout,
        broken=(httpx.TransportError,),
    )
