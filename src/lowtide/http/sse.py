"""The framing of server-sent events: an event with a name, or a bare `data:` line (OpenAI's Chat Completions
stream), each ended by a blank line; the data as compact JSON."""

from __future__ import annotations

import json

__all__ = ["compact", "data_line", "encode_event"]


def compact(value: object) -> str:
    """The wire encoding of JSON bodies and stream data: no spaces, Unicode as it is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode_event(name: str, data: object) -> bytes:
    """`event: NAME` and `data: JSON`, as one event."""
    return f"event: {name}\ndata: {compact(data)}\n\n".encode()


def data_line(data: object) -> bytes:
    """`data: JSON` alone, as one event (a stream whose events have no names)."""
    return f"data: {compact(data)}\n\n".encode()
