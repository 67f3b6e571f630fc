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
from lowtide.types import ActorRequest

__all__ = ["check_request_text", "check_text"]

# The fields of a request that hold no text: skipped rather than walked.
_NOT_TEXT = frozenset({"max_tokens", "temperature", "top_p", "top_k", "response_model"})


def check_text(value: object, where: str) -> None:
    """Refuse `value` if a string in it is not valid Unicode, naming its place under `where`."""
    # A stack rather than recursion: a deeply nested value must not overflow the interpreter's.
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, place = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                _refuse_surrogates(item, place)
        elif isinstance(item, BaseModel):
            fields = {**{name: getattr(item, name) for name in type(item).model_fields}, **(item.model_extra or {})}
            stack.extend((field, _join(place, name)) for name, field in fields.items())
        elif isinstance(item, Mapping):
            for key, field in cast("Mapping[object, object]", item).items():
                name = str(key)
                if isinstance(key, str) and not key.isascii():
                    _refuse_surrogates(key, place or "(the request)", what="a key")
                stack.append((field, _join(place, name)))
        elif isinstance(item, list | tuple):
            stack.extend((field, _join(place, str(index))) for index, field in enumerate(cast("list[object]", item)))


def check_request_text(request: ActorRequest) -> None:
    """Every string a request would send is valid Unicode (its prompt and messages, system prompt, tools, stop
    sequences, metadata, settings)."""
    for name in type(request).model_fields:
        if name not in _NOT_TEXT:
            check_text(getattr(request, name), name)


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
