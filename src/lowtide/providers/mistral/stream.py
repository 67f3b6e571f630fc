"""A streamed chat completion's chunks joined into the body `chat.complete` would have sent, so that a streamed answer
is read as a whole one is. Pure: each chunk is the API's JSON (`CompletionChunk`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from lowtide.providers import json_object, json_objects

__all__ = ["finished", "merged"]


def merged(chunks: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The completion the chunks make: the first choice's content in order (text pieces joined; content chunks, such
    as a reasoning model's thinking, kept where they came), its tool calls joined by index (arguments
    concatenated), the last finish reason and usage given, the first id and model."""
    body: dict[str, object] = {"object": "chat.completion"}
    parts: list[dict[str, object]] = []
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
                _join_text(parts, content)
            else:
                parts.extend(dict(part) for part in json_objects(content))
            for call in json_objects(delta.get("tool_calls")):
                _join_call(calls, call)
    message: dict[str, object] = {"role": "assistant"}
    if all(part.get("type") == "text" for part in parts):
        message["content"] = "".join(str(part.get("text", "")) for part in parts)
    else:
        message["content"] = parts
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    body["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return body


def finished(body: dict[str, object]) -> bool:
    """Whether the joined body has a finish reason (a stream cut short between chunks has none)."""
    choices = json_objects(body.get("choices"))
    return bool(choices) and choices[0].get("finish_reason") is not None


def _join_text(parts: list[dict[str, object]], text: str) -> None:
    """A piece of text, joined to the text part before it (pieces of one text come in many chunks)."""
    if parts and parts[-1].get("type") == "text":
        parts[-1]["text"] = str(parts[-1].get("text", "")) + text
    else:
        parts.append({"type": "text", "text": text})


def _join_call(calls: dict[int, dict[str, object]], call: Mapping[str, object]) -> None:
    """A tool call's piece: a new index starts a call (its id, name and arguments so far), a known one adds to its
    arguments (the SDK gives every piece an id and a name, which only the first one's count)."""
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
    held_arguments = held.get("arguments")
    known["function"] = {
        "name": held.get("name") or function.get("name"),
        "arguments": f"{held_arguments}{_arguments(function.get('arguments'))}",
    }


def _arguments(value: object) -> str:
    """Arguments as text: the SDK reads them as text, or as an object when a piece is one whole."""
    return value if isinstance(value, str) else json.dumps(value)
