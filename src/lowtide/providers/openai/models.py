"""What lowtide knows of OpenAI's models without asking the API: each one's context window, as the most input tokens
a request may hold. OpenAI's models endpoint names the models an account may use but not their windows, so they come
from OpenAI's model pages: a model of the GPT-5 family reads 272,000 tokens (of its 400,000-token window, the rest
kept for its answer), GPT-4.1 1,047,576, o-series reasoning models 200,000 (o1-mini 128,000), GPT-4o 128,000. A
model not listed here is not checked against a window (the API has the last word).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["CONTEXT_WINDOWS", "context_window", "undated"]

_GPT5_INPUT = 272_000
_GPT41 = 1_047_576
_O_SERIES = 200_000
_GPT4O = 128_000

CONTEXT_WINDOWS: Mapping[str, int] = {
    **dict.fromkeys(
        (
            "gpt-5.5",
            "gpt-5.4",
            "gpt-5.4-mini",
            "gpt-5.4-nano",
            "gpt-5.2",
            "gpt-5.2-pro",
            "gpt-5.1",
            "gpt-5.1-codex",
            "gpt-5.1-mini",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
        ),
        _GPT5_INPUT,
    ),
    **dict.fromkeys(("gpt-5.3-chat-latest", "gpt-5.2-chat-latest", "gpt-5.1-chat-latest", "gpt-5-chat-latest"), _GPT4O),
    **dict.fromkeys(("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"), _GPT41),
    **dict.fromkeys(("o4-mini", "o3", "o3-mini", "o1"), _O_SERIES),
    **dict.fromkeys(("o1-mini", "o1-preview", "gpt-4o", "gpt-4o-mini", "chatgpt-4o-latest"), _GPT4O),
    **dict.fromkeys(("gpt-4-turbo", "gpt-4-turbo-preview", "gpt-4-0125-preview", "gpt-4-1106-preview"), _GPT4O),
    "gpt-4": 8_192,
    "gpt-4-0613": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-0125": 16_385,
}

_DATED = re.compile(r"^(?P<name>.+)-\d{4}-\d{2}-\d{2}$")


def undated(model: str) -> str:
    """A model id without its snapshot date (`gpt-4.1-mini-2025-04-14` -> `gpt-4.1-mini`)."""
    match = _DATED.match(model)
    return match["name"] if match else model


def context_window(model: str) -> int | None:
    """The most input tokens `model` reads, as far as lowtide knows; None for a model it does not know."""
    return CONTEXT_WINDOWS.get(model) or CONTEXT_WINDOWS.get(undated(model))
