"""Text no API can take: a lone surrogate (one half of a UTF-16 pair, as `"x \\ud800"` in Python) is not Unicode
text, so no UTF-8 request body can carry it, and an API that receives it escaped in JSON answers with something
lowtide cannot read back. Every provider's rule, so it is checked here, before anything is recorded or sent.

`check_text` walks a value (strings, lists and mappings of them, keys included, and pydantic models' fields) and
raises a `ConfigurationError` naming the first bad string's place (`messages.0.content.1.text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pydantic import BaseModel

from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest, ChatMessage

__all__ = ["check_request_text", "check_text"]

# The fields of a request that may hold text, but its messages (walked apart), in their order.
_TEXT_FIELDS = tuple(
    name
    for name in ActorRequest.model_fields
    if name not in {"messages", "max_tokens", "temperature", "top_p", "top_k", "response_model"}
)


def check_text(value: object, where: str) -> None:
    """Refuse `value` if a string in it is not valid Unicode, naming its place under `where`."""
    # A stack rather than recursion: a deeply nested value must not overflow the interpreter's.
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, place = stack.pop()
        kind = type(item)
        if kind is str:
            if not cast("str", item).isascii():
                _refuse_surrogates(cast("str", item), place)
        elif kind is dict or (kind is not list and isinstance(item, Mapping)):
            for key, field in cast("Mapping[object, object]", item).items():
                if isinstance(key, str) and not key.isascii():
                    _refuse_surrogates(key, place or "(the request)", what="a key")
                stack.append((field, _join(place, str(key))))
        elif kind is list or kind is tuple:
            stack.extend((field, _join(place, str(index))) for index, field in enumerate(cast("list[object]", item)))
        elif isinstance(item, BaseModel):
            # A model's fields are its `__dict__`; a model that allows more keeps them apart.
            stack.extend((field, _join(place, name)) for name, field in vars(item).items())
            stack.extend((field, _join(place, name)) for name, field in (item.model_extra or {}).items())


def check_request_text(request: ActorRequest) -> None:
    """Every string a request would send is valid Unicode (its prompt and messages, system prompt, tools, stop
    sequences, metadata, settings)."""
    messages = request.messages
    if len(messages) != 1 or not _ascii_text(messages[0]):  # a prompt alone, the common call, needs no walk
        check_text(messages, "messages")
    for name in _TEXT_FIELDS:
        value: object = getattr(request, name)
        if value is None or (type(value) is str and value.isascii()):
            continue
        if value:
            check_text(value, name)


def _ascii_text(message: ChatMessage) -> bool:
    content = message.content
    return isinstance(content, str) and content.isascii()


def _refuse_surrogates(text: str, where: str, *, what: str = "the text") -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise ConfigurationError(
            f"{where}: {what} is not valid Unicode: a lone surrogate (U+{code:04X}) at character {exc.start}; no"
            " API can take it (decode bytes with errors='replace', or drop it).",
            field=where,
        ) from None


def _join(place: str, name: str) -> str:
    return f"{place}.{name}" if place else name
