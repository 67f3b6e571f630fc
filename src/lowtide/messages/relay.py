"""A live stream's events (`Actor.stream`'s deltas, then its `ActorResponse`) as the blocks of an answer, each opened,
filled and closed, for `lowtide serve` to relay in a served API's own stream shapes (`Wire.relay`). Neutral: the
wires write the blocks; this only tells where one ends and the next begins."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from lowtide.streaming import StreamEvent, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorResponse

__all__ = [
    "Block",
    "BlockOpened",
    "BlockPiece",
    "MessageOf",
    "Relay",
    "RelayStep",
    "StreamFinished",
    "ThinkingRelay",
    "steps",
]


@dataclass(slots=True)
class Block:
    """One block of the answer as it streams: text, a tool call (its id and name as its first piece gave them, its
    arguments' JSON as `text`), or thinking (`thinking`; only for a `ThinkingRelay`). `number` counts the blocks in the
    order they opened, from 0."""

    number: int
    tool: bool
    id: str | None = None
    name: str | None = None
    text: str = ""
    thinking: bool = False


@dataclass(frozen=True, slots=True)
class BlockOpened:
    """A block's first piece arrived: the block, before its text."""

    block: Block
    closing: Block | None
    """The block this one ends, if one was open (the APIs close a block before they open the next)."""


@dataclass(frozen=True, slots=True)
class BlockPiece:
    """A piece of a block's text (or of a tool call's arguments, or of thinking: then perhaps its `signature`, often
    with no text)."""

    block: Block
    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class StreamFinished:
    """The answer is whole: the last block (if one is open) ends, then the answer with its usage and stop reason."""

    response: ActorResponse[object]
    closing: Block | None
    streamed: bool
    """Whether any piece came before the answer: False for a provider that gives its answer whole, which a wire
    replays as it replays a batch's answer."""


RelayStep: TypeAlias = BlockOpened | BlockPiece | StreamFinished


MessageOf: TypeAlias = Callable[[ActorResponse[object], Any], Mapping[str, Any]]
"""A wire's `message`: the finished answer as the API's JSON, for the call (its `ServedCall`) it answers."""


class Relay(Protocol):
    """A served stream written as it arrives, in one API's shapes: the server-sent events of each step."""

    def step(self, step: RelayStep) -> Iterator[bytes]: ...


@runtime_checkable
class ThinkingRelay(Relay, Protocol):
    """A relay that writes the answer's thinking as its API streams thinking (Anthropic's `thinking_delta`, Gemini's
    thought parts): it gets thinking blocks; any other relay gets none, and its API's answer no thinking pieces."""

    relays_thinking: Literal[True]


async def steps(events: AsyncIterator[StreamEvent], *, thinking: bool = False) -> AsyncGenerator[RelayStep, None]:
    """`events` as steps: a block opens at a piece of another kind or index than the last one's, and stays open until
    the next opens or the answer arrives. A provider's tool call always streams its id and name first. Thinking
    pieces make blocks of their own when `thinking`, else they are left out (the finished answer still holds them)."""
    open_block: Block | None = None
    key: tuple[str, int] | None = None
    count = 0
    async for event in events:
        if isinstance(event, ActorResponse):
            yield StreamFinished(event, open_block, streamed=count > 0)
            return
        signature: str | None = None
        if isinstance(event, ToolCallDelta):
            kind, text, id_, name = "tool", event.arguments, event.id, event.name
        elif isinstance(event, ThinkingDelta):
            if not thinking:
                continue
            kind, text, id_, name, signature = "thinking", event.text, None, None, event.signature
        else:
            kind, text, id_, name = "text", event.text, None, None
        if open_block is None or key != (kind, event.index):
            block = Block(count, kind == "tool", id_, name, thinking=kind == "thinking")
            yield BlockOpened(block, open_block)
            open_block, key, count = block, (kind, event.index), count + 1
        if text or signature:
            open_block.text += text
            yield BlockPiece(open_block, text, signature)
