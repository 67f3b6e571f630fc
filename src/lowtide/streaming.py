"""What `Actor.stream` yields: the answer's text and tool-call pieces as they arrive, then the finished
`ActorResponse`. Neutral: each provider turns its own stream's events into these (`Provider.stream`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from lowtide.types import ActorResponse

__all__ = ["StreamEvent", "TextDelta", "ToolCallDelta"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text: the pieces of one `index` joined are that content block's (or output item's)
    text."""

    text: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call: the first of a call carries its `id` and `name` (and often empty `arguments`); the
    `arguments` of the pieces of one `index` joined are the call's input, as JSON."""

    index: int
    arguments: str = ""
    id: str | None = None
    name: str | None = None


StreamEvent: TypeAlias = TextDelta | ToolCallDelta | ActorResponse[object]
"""One item of a stream: deltas, then exactly one `ActorResponse` (the last), whose content, usage and cost are
those `Actor.run` returns for the same call."""
