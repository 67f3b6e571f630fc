"""The server-sent events of a streamed Message, derived from the finished message so that the SDK's accumulator
(`messages.stream(...).get_final_message()`) rebuilds exactly the non-streaming reply. Pure: `lowtide serve`'s
Messages wire replays an answer with them, and the emulator streams its own answers with them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from lowtide.http.sse import compact

__all__ = ["message_events"]

_CHUNK = 24

JSON = dict[str, Any]


def message_events(message: Mapping[str, Any]) -> Iterator[tuple[str, JSON]]:
    """`(event name, data)` pairs in the API's order: message_start, ping, per block start/deltas/stop,
    message_delta with the stop reason and the cumulative usage, message_stop."""
    usage: JSON = dict(_object(message["usage"]))
    start: JSON = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        # As in the API, message_start carries the input side and a provisional output count.
        "usage": {**usage, "output_tokens": min(1, int(usage.get("output_tokens", 0)))},
    }
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
            "usage": {
                "input_tokens": usage.get("input_tokens"),
                "cache_creation_input_tokens": usage.get("cache_creation_input_tokens"),
                "cache_read_input_tokens": usage.get("cache_read_input_tokens"),
                "output_tokens": usage.get("output_tokens"),
            },
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _object(value: object) -> JSON:
    return cast(JSON, value) if isinstance(value, dict) else {}


def _chunks(text: str) -> Iterator[str]:
    for start in range(0, len(text), _CHUNK):
        yield text[start : start + _CHUNK]


def _delta(index: int, delta: JSON) -> tuple[str, JSON]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def _block_events(index: int, block: Mapping[str, Any]) -> Iterator[tuple[str, JSON]]:
    kind = block["type"]
    if kind == "text":
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
        # A cited block's citations come one per event, before its text, as the SDK's accumulator expects.
        citations = block.get("citations")
        for citation in cast(list[Any], citations) if isinstance(citations, list) else []:
            yield _delta(index, {"type": "citations_delta", "citation": citation})
        for piece in _chunks(block["text"]):
            yield _delta(index, {"type": "text_delta", "text": piece})
    elif kind == "thinking":
        empty = {"type": "thinking", "thinking": "", "signature": ""}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
        for piece in _chunks(block["thinking"]):
            yield _delta(index, {"type": "thinking_delta", "thinking": piece})
        yield _delta(index, {"type": "signature_delta", "signature": block["signature"]})
    else:
        opening: JSON = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        # The API opens tool input with an empty fragment before the JSON itself.
        yield _delta(index, {"type": "input_json_delta", "partial_json": ""})
        for piece in _chunks(compact(block["input"])):
            yield _delta(index, {"type": "input_json_delta", "partial_json": piece})
    yield "content_block_stop", {"type": "content_block_stop", "index": index}
