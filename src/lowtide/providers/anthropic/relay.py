"""A live answer relayed as the Messages API streams it, block by block as `Actor.stream` gives its pieces, so that
the SDK's `messages.stream()` shows the text while it is written and its accumulator rebuilds the answer. Pure."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import ClassVar, Literal

from lowtide.http.sse import encode_event
from lowtide.messages.relay import Block, BlockOpened, BlockPiece, MessageOf, RelayStep, StreamFinished
from lowtide.messages.wire import ServedCall
from lowtide.providers.anthropic.stream_events import message_events

__all__ = ["MessagesRelay"]


class MessagesRelay:
    """One served stream: `message_start` at its first step, a content block per block (extended thinking as
    `thinking_delta`s and its `signature_delta`), then `message_delta` with the stop reason and the usage, and
    `message_stop`."""

    relays_thinking: ClassVar[Literal[True]] = True

    def __init__(self, call: ServedCall, message: MessageOf) -> None:
        self._call = call
        self._message = message
        self._started = False

    def step(self, step: RelayStep) -> Iterator[bytes]:
        if isinstance(step, StreamFinished) and not step.streamed and not self._started:
            # A provider that gave its answer whole: replayed as a batch's answer is.
            for name, data in message_events(self._message(step.response, self._call)):
                yield encode_event(name, data)
            return
        if not self._started:
            self._started = True
            yield from self._opening()
        if isinstance(step, BlockOpened):
            if step.closing is not None:
                yield _stop(step.closing)
            yield _start(step.block)
        elif isinstance(step, BlockPiece):
            for delta in _deltas(step):
                yield encode_event(
                    "content_block_delta", {"type": "content_block_delta", "index": step.block.number, "delta": delta}
                )
        else:
            if step.closing is not None:
                yield _stop(step.closing)
            whole = self._message(step.response, self._call)
            delta = {"stop_reason": whole["stop_reason"], "stop_sequence": whole["stop_sequence"]}
            yield encode_event("message_delta", {"type": "message_delta", "delta": delta, "usage": whole["usage"]})
            yield encode_event("message_stop", {"type": "message_stop"})

    def _opening(self) -> Iterator[bytes]:
        # The API's own message_start carries the input tokens; a relay opened before the answer is whole knows them
        # only at its end, and message_delta carries them then (the SDK's accumulator takes them from it).
        start: dict[str, object] = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": str(self._call.arguments.get("model", "")),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        yield encode_event("message_start", {"type": "message_start", "message": start})
        yield encode_event("ping", {"type": "ping"})


def _deltas(piece: BlockPiece) -> Iterator[dict[str, str]]:
    if piece.block.tool:
        yield {"type": "input_json_delta", "partial_json": piece.text}
    elif not piece.block.thinking:
        yield {"type": "text_delta", "text": piece.text}
    else:
        if piece.text:
            yield {"type": "thinking_delta", "thinking": piece.text}
        if piece.signature:
            yield {"type": "signature_delta", "signature": piece.signature}


def _start(block: Block) -> bytes:
    opened: dict[str, object]
    if block.tool:
        tool_id = block.id or f"toolu_{uuid.uuid4().hex[:24]}"
        opened = {"type": "tool_use", "id": tool_id, "name": block.name or "", "input": {}}
    elif block.thinking:
        opened = {"type": "thinking", "thinking": "", "signature": ""}
    else:
        opened = {"type": "text", "text": ""}
    return encode_event(
        "content_block_start", {"type": "content_block_start", "index": block.number, "content_block": opened}
    )


def _stop(block: Block) -> bytes:
    return encode_event("content_block_stop", {"type": "content_block_stop", "index": block.number})
