"""Reading the text out of a Messages request: what the user said, wherever in the content blocks they said it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from lowtide.emulator.core.jsonutil import as_array, as_object

__all__ = ["last_user_text", "text_of", "user_texts"]


def text_of(content: object) -> Iterator[str]:
    """The text in a message's `content`: a plain string, text blocks, and the text inside tool results."""
    if isinstance(content, str):
        yield content
        return
    for item in as_array(content) or []:
        block = as_object(item)
        if block is None:
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            yield block["text"]
        elif kind == "tool_result":
            yield from text_of(block.get("content"))


def _user_messages(params: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for item in as_array(params.get("messages")) or []:
        message = as_object(item)
        if message is not None and message.get("role") == "user":
            yield message


def user_texts(params: Mapping[str, Any]) -> Iterator[str]:
    for message in _user_messages(params):
        yield from text_of(message.get("content"))


def last_user_text(params: Mapping[str, Any]) -> str:
    last: Mapping[str, Any] | None = None
    for message in _user_messages(params):
        last = message
    return "\n".join(text_of(last.get("content"))) if last is not None else ""
