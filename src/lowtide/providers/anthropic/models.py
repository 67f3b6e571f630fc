"""What lowtide knows of Anthropic's models without asking the API: the most output tokens each may write
(`max_tokens`), the most input tokens each reads (its context window), and which are deprecated, with their end of
life and what to use instead.

The deprecations are the SDK's own table (`DEPRECATED_MODELS` of `anthropic.resources.messages`, anthropic 2.13),
with dates written as dates and a replacement for each: the current model of the same line. The limits are those of
Anthropic's model pages. The API's models endpoint, when it can be reached, has the last word on them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

__all__ = [
    "CONTEXT_WINDOWS",
    "DEPRECATIONS",
    "MAX_OUTPUT_TOKENS",
    "Deprecation",
    "context_window",
    "deprecation",
    "max_output_tokens",
    "undated",
]


@dataclass(frozen=True)
class Deprecation:
    """A deprecated model: the day it reaches end of life (after which the API refuses it) and its replacement."""

    end_of_life: date
    replacement: str


_SONNET = "claude-sonnet-5-5"
_OPUS = "claude-opus-5-5"
_HAIKU = "claude-haiku-5-5"


def _until(day: str, replacement: str) -> Deprecation:
    return Deprecation(date.fromisoformat(day), replacement)


DEPRECATIONS: Mapping[str, Deprecation] = {
    "claude-1.3": _until("2024-11-06", _SONNET),
    "claude-1.3-100k": _until("2024-11-06", _SONNET),
    "claude-instant-1.1": _until("2024-11-06", _HAIKU),
    "claude-instant-1.1-100k": _until("2024-11-06", _HAIKU),
    "claude-instant-1.2": _until("2024-11-06", _HAIKU),
    "claude-3-sonnet-20240229": _until("2025-07-21", _SONNET),
    "claude-3-opus-20240229": _until("2026-01-05", _OPUS),
    "claude-2.1": _until("2025-07-21", _SONNET),
    "claude-2.0": _until("2025-07-21", _SONNET),
    "claude-3-7-sonnet-latest": _until("2026-02-19", _SONNET),
    "claude-3-7-sonnet-20250219": _until("2026-02-19", _SONNET),
    "claude-3-5-haiku-latest": _until("2026-02-19", _HAIKU),
    "claude-3-5-haiku-20241022": _until("2026-02-19", _HAIKU),
    "claude-opus-4-0": _until("2026-06-15", _OPUS),
    "claude-opus-4-20250514": _until("2026-06-15", _OPUS),
    "claude-sonnet-4-0": _until("2026-06-15", _SONNET),
    "claude-sonnet-4-20250514": _until("2026-06-15", _SONNET),
    "claude-mythos-preview": _until("2026-06-30", "claude-mythos-5-2"),
    "claude-sonnet-4-5": _until("2026-11-30", _SONNET),
    "claude-sonnet-4-5-20250929": _until("2026-11-30", _SONNET),
    "claude-opus-4-5": _until("2027-01-22", _OPUS),
    "claude-opus-4-5-20251101": _until("2027-01-22", _OPUS),
}

# The most output tokens (`max_tokens`) of each model the installed SDK names, by id without a date suffix.
MAX_OUTPUT_TOKENS: Mapping[str, int] = {
    "claude-fable-5-2": 128_000,
    "claude-mythos-5-2": 128_000,
    "claude-haiku-5-5": 128_000,
    "claude-sonnet-5-5": 128_000,
    "claude-fable-5-1": 128_000,
    "claude-opus-5-5": 128_000,
    "claude-mythos-5-1": 128_000,
    "claude-sonnet-5": 128_000,
    "claude-fable-5": 128_000,
    "claude-mythos-5": 128_000,
    "claude-opus-5": 128_000,
    "claude-opus-4-8": 128_000,
    "claude-opus-4-7": 128_000,
    "claude-opus-4-6": 128_000,
    "claude-sonnet-4-6": 128_000,
    "claude-haiku-4-5": 64_000,
    "claude-opus-4-5": 64_000,
    "claude-sonnet-4-5": 64_000,
}

# The context window (the most input tokens) of each model, by id without a date suffix: a million tokens for the
# current models, 200,000 for the 4.5 generation.
CONTEXT_WINDOWS: Mapping[str, int] = {
    **dict.fromkeys(MAX_OUTPUT_TOKENS, 1000000),
    "claude-haiku-4-5": 200_000,
    "claude-opus-4-5": 200_000,
    "claude-sonnet-4-5": 200_000,
}

_DATED = re.compile(r"^(?P<name>.+)-\d{8}$")


def undated(model: str) -> str:
    """A model id without its snapshot date (`claude-haiku-4-5-20251001` -> `claude-haiku-4-5`): the alias the API
    resolves to it."""
    match = _DATED.match(model)
    return match["name"] if match else model


def max_output_tokens(model: str) -> int | None:
    """The most output tokens `model` may write, as far as lowtide knows; None for a model it does not know."""
    return MAX_OUTPUT_TOKENS.get(undated(model))


def context_window(model: str) -> int | None:
    """The most input tokens `model` reads, as far as lowtide knows; None for a model it does not know."""
    return CONTEXT_WINDOWS.get(undated(model))


def deprecation(model: str) -> Deprecation | None:
    return DEPRECATIONS.get(model)
