"""The groq SDK's exceptions as lowtide's `ActorError`s (one context manager).

Groq's SDK is generated as OpenAI's is (Stainless), read by `stainless.stainless_errors`, which reads Together's
alike without importing this SDK."""

from __future__ import annotations

from contextlib import AbstractContextManager

import groq

from lowtide.providers import translating
from lowtide.providers.groq.stainless import stainless_errors

__all__ = ["SDK_ERRORS", "stainless_errors", "translate_errors"]

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
