"""The streamed answer the Chat Completions APIs share (OpenAI's, Azure's, the OpenAI-compatible ones): each chunk
read into `Actor.stream`'s pieces, and the chunks joined into the body the same answer unstreamed would have had."""

from __future__ import annotations

from collections.abc import Mapping

from lowtide.core.json_types import json_object, json_objects
from lowtide.streaming import TextDelta, ToolCallDelta

__all__ = ["INCLUDE_USAGE", "ChatChunks"]

INCLUDE_USAGE: Mapping[str, object] = {"stream_options": {"include_usage": True}}
"""What a streamed request adds for its usage to come in the last chunk, as an unstreamed answer's does."""

_HEAD = ("id", "created", "model", "system_fingerprint", "service_tier")


class ChatChunks:
    """One streamed answer's chunks, as they come: `add` gives each one's pieces, `body` the whole answer."""

    def __init__(self) -> None:
        self._head: dict[str, object] = {}
        self._text: list[str] = []
        self._calls: dict[int, dict[str, object]] = {}
        self._finish: object = None
        self._usage: object = None

    def add(self, chunk: Mapping[str, object]) -> list[TextDelta | ToolCallDelta]:
        """The pieces `chunk` carries (of the first choice: lowtide asks for one), kept for `body`."""
        self._head.update({key: chunk[key] for key in _HEAD if chunk.get(key) is not None})
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        pieces: list[TextDelta | ToolCallDelta] = []
        for choice in json_objects(chunk.get("choices")):
            if choice.get("index", 0) != 0:
                continue
            delta = json_object(choice.get("delta"))
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._text.append(content)
                pieces.append(TextDelta(content))
            for call in json_objects(delta.get("tool_calls")):
                pieces.append(self._call_piece(call))
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]
        return pieces

    def _call_piece(self, call: Mapping[str, object]) -> ToolCallDelta:
        index = _call_index(call.get("index", 0))
        function = json_object(call.get("function"))
        held = self._calls.setdefault(index, {"id": None, "type": "function", "name": "", "arguments": ""})
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        if isinstance(call_id, str):
            held["id"] = call_id
        if isinstance(name, str):
            held["name"] = f"{held['name']}{name}"
        if isinstance(arguments, str):
            held["arguments"] = f"{held['arguments']}{arguments}"
        return ToolCallDelta(
            index,
            arguments if isinstance(arguments, str) else "",
            id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else None,
        )

    def body(self) -> dict[str, object] | None:
        """The answer as one unstreamed body; None when no chunk said why it finished (the stream was cut)."""
        if self._finish is None:
            return None
        message: dict[str, object] = {"role": "assistant", "content": "".join(self._text) if self._text else None}
        if self._calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self._calls.items())
            ]
        choice = {"index": 0, "message": message, "finish_reason": self._finish, "logprobs": None}
        return {**self._head, "object": "chat.completion", "choices": [choice], "usage": self._usage}


def _call_index(value: object) -> int:
    """A tool call's index in a chunk: an integer, or one an SDK's types made a float (together's `0.0`) or text."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return int(str(value))
