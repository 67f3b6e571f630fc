"""Claude on Vertex AI as a dialect of Anthropic's Messages mapping (`providers/anthropic/mapping.py`): the same
request and answer shapes, its answers named `vertex_claude` and priced at Vertex AI's prices, its errors read as the
anthropic SDK raises them with the wait a Google error body asks for (a `RetryInfo` detail: Vertex AI sends no
`retry-after`)."""

from __future__ import annotations

import dataclasses

import anthropic

from lowtide.providers import StatusError
from lowtide.providers.anthropic.mapping import SDK_ERRORS, MessagesDialect, status_error_of
from lowtide.providers.gemini.errors import retry_delay
from lowtide.providers.vertex_claude.options import PROVIDER_NAME
from lowtide.providers.vertex_claude.rules import USAGE

__all__ = ["VERTEX_CLAUDE"]


def _status_error(exc: anthropic.APIStatusError) -> StatusError:
    said = status_error_of(exc)
    if said.retry_after is None:
        return dataclasses.replace(said, retry_after=retry_delay(exc.body))
    return said


VERTEX_CLAUDE = MessagesDialect(
    PROVIDER_NAME,
    USAGE,
    errors=dataclasses.replace(
        SDK_ERRORS, client="Anthropic's AnthropicVertex", api="Vertex AI API", read_status=_status_error
    ),
)
"""The answers and errors of Claude on Vertex AI, live and batch."""
