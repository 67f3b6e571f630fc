"""The OpenAI SDK's exceptions as `ActorError`s (`translate_errors`, one context manager), keeping the status code,
request id, OpenAI's error code and the wait a 429 asked for. The one module of the OpenAI provider's translations
that imports the SDK: the batch codec's line reading, and the OpenAI-shaped providers (Groq, Together) that reuse
it, do without."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import cast

import httpx2
import openai

from lowtide.providers.openai.answers import ERROR_CLASSES
from lowtide.providers.sdk_errors import SdkErrors, StatusError, seconds_of, translating

__all__ = ["SDK_ERRORS", "translate_errors"]


def _status_error(exc: openai.APIStatusError) -> StatusError:
    detail: object = exc.body
    message = cast("dict[str, object]", detail).get("message") if isinstance(detail, dict) else None
    headers = exc.response.headers
    return StatusError(
        exc.status_code,
        message if isinstance(message, str) and message else exc.message,
        request_id=exc.request_id,
        error_type=exc.code or exc.type,
        # The wait OpenAI asked for: `retry-after-ms`, else `retry-after` in seconds.
        retry_after=_first(
            seconds_of(headers.get("retry-after-ms"), scale=1000.0), seconds_of(headers.get("retry-after"))
        ),
    )


def _first(*waits: float | None) -> float | None:
    return next((wait for wait in waits if wait is not None), None)


SDK_ERRORS = SdkErrors(
    client="OpenAI",
    api="OpenAI API",
    status=openai.APIStatusError,
    read_status=_status_error,
    connection=openai.APIConnectionError,
    base=openai.OpenAIError,
    timeout=openai.APITimeoutError,
    broken=(httpx2.TransportError,),
    by_type=ERROR_CLASSES,
)
"""The OpenAI SDK's exceptions, as `translating` reads them (`ERROR_CLASSES`: the codes whose class is not their
status's)."""


def translate_errors() -> AbstractContextManager[None]:
    """Re-raise every SDK exception as the matching `ActorError`, keeping status code, request id, OpenAI's error
    code and the wait a 429 asked for."""
    return translating(SDK_ERRORS)
