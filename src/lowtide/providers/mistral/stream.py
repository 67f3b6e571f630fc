"""A streamed chat completion's chunks joined into the body `chat.complete` would have sent, so that a streamed answer
is read as a whole one is. Pure: each chunk is the API's JSON (`CompletionChunk`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from lowtide.providers import json_object, json_objects

__all__ = ["finished", "merged"]


def merged(chunks: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The completion the chunks make: the first choice's text (or content chunks) in order, its tool calls joined by
    index (arguments concatenated), the last finish reason and usage given, the first id and model."""
    body: dict[str, object] = {"object": "chat.completion"}
    texts: list[str] = []
    parts: list[Mapping[str, object]] = []
    calls: dict[int, dict[str, object]] = {}
    finish: object = None
    for chunk in chunks:
        for name in ("id", "model", "created"):
            if name in chunk and name not in body:
                body[name] = chunk[name]
        if chunk.get("usage") is not None:
            body["usage"] = chunk["usage"]
        for choice in json_objects(chunk.get("choices")):
            if choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason") or finish
            delta = json_object(choice.get("delta"))
            content = delta.get("content")
            if isinstance(content, str):
                texts.append(content)
            else:
                parts.extend(json_objects(content))
            for call in json_objects(delta.get("tool_calls")):
                _join_call(calls, call)
    message: dict[str, object] = {"role": "assistant"}
    if parts:
        head: list[Mapping[str, object]] = [{"type": "text", "text": "".join(texts)}] if texts else []
        message["content"] = head + parts
    else:
        message["content"] = "".join(texts)
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    body["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return body


def finished(body: dict[str, object]) -> bool:
    """Whether the joined body has a finish reason (a stream cut short between chunks has none)."""
    choices = json_objects(body.get("choices"))
    return bool(choices) and choices[0].get("finish_reason") is not None


def _join_call(calls: dict[int, dict[str, object]], call: Mapping[str, object]) -> None:
    index = call.get("index")
    at = index if isinstance(index, int) else len(calls)
    function = json_object(call.get("function"))
    known = calls.get(at)
    if known is None:
        calls[at] = {
            "id": call.get("id"),
            "type": "function",
            "function": {"name": function.get("name"), "arguments": _arguments(function.get("arguments"))},
        }
        return
    held = json_object(known.get("function"))
    known["function"] = {
        "name": held.get("name") or function.get("name"),
        "arguments": str(held.get("arguments") or "") + _arguments(function.get("arguments")),
    }
    if known.get("id") is None:
        known["id"] = call.get("id")


def _arguments(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value)
