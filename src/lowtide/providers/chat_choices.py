"""The answer shape the Chat Completions APIs share (OpenAI's, the OpenAI-compatible ones, Mistral's): a body's first
choice and its message, and a choice's `finish_reason` as lowtide's stop reason."""

from __future__ import annotations

from collections.abc import Mapping

from lowtide.core.json_types import json_object, json_objects

__all__ = ["first_choice", "stop_reason"]


def first_choice(body: Mapping[str, object]) -> tuple[Mapping[str, object], Mapping[str, object]]:
    """`body`'s first choice and its message; both empty when it has none, which reads as an answer of nothing
    with no stop reason."""
    choices = json_objects(body.get("choices"))
    if not choices:
        return {}, {}
    return choices[0], json_object(choices[0].get("message"))


def stop_reason(finish: object, reasons: Mapping[str, str]) -> str | None:
    """A `finish_reason` as the stop reason `reasons` maps it to; one it does not know kept as the API said it."""
    return reasons.get(str(finish), finish if isinstance(finish, str) else None)
