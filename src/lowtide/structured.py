"""Structured answers: the JSON of an answer's text, whichever provider gave it."""

from __future__ import annotations

import re

__all__ = ["json_text"]

_FENCE = re.compile(r"\A\s*```[A-Za-z]*[ \t]*\n(.*?)\n?[ \t]*```\s*\Z", re.S)


def json_text(text: str) -> str:
    """The JSON of an answer, taken out of the Markdown code fence a model may wrap JSON asked for by prompt in."""
    match = _FENCE.match(text)
    return match.group(1) if match is not None else text
