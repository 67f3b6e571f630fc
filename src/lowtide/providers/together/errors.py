"""The together SDK's exceptions as lowtide's `ActorError`s (one context manager): an SDK generated as OpenAI's is,
read by the OpenAI-compatible base (`openai_compatible.stainless.stainless_errors`, which imports no SDK: a
Together process does not load the groq SDK)."""

from __future__ import annotations

from contextlib import AbstractContextManager

import together

from lowtide.providers import translating
from lowtide.providers.openai_compatible.stainless import stainless_errors

__all__ = ["SDK_ERRORS", "translate_errors"]

SDK_ERRORS = stainless_errors(
    client="Together",
    api="Together API",
    status=together.APIStatusError,
    connection=together.APIConnectionError,
    base=together.TogetherError,
    timeout=together.APITimeoutError,
)


def translate_errors() -> AbstractContextManager[None]:
    """Re-raise every together SDK exception as the matching `ActorError`."""
    return translating(SDK_ERRORS)
