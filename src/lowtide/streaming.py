"""What `Actor.stream` yields: the answer's text, tool-call and thinking pieces as they arrive, then the finished
`ActorResponse`. Neutral: each provider turns its own stream's events into these (`Provider.stream`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from lowtide.types import ActorResponse

__all__ = ["StreamEvent", "TextDelta", "ThinkingDelta", "ToolCallDelta"]


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


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's thinking, as the API streams it (Anthropic's extended thinking, Gemini's thought parts):
    the `text` of the pieces of one `index` joined are that block's thinking. `signature`, on the piece that carries
    it (often one with no text), is the provider's seal on the block, which the answer keeps to send it back."""

    text: str
    index: int = 0
    signature: str | None = None


StreamEvent: TypeAlias = TextDelta | ToolCallDelta | ThinkingDelta | ActorResponse[object]
"""One item of a stream: deltas, then exactly one `ActorResponse` (the last), whose content, usage and cost are
those `Actor.run` returns for the same call."""
