"""The settings only Groq has, as an actor gives them under `provider_options: {groq: ...}`, checked before anything
is sent."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lowtide import ConfigurationError
from lowtide.providers import Parameters

__all__ = [
    "MAX_WINDOW_HOURS",
    "MIN_WINDOW_HOURS",
    "PROVIDER_NAME",
    "GroqOptions",
    "options_in",
    "options_of",
    "window_hours",
]

PROVIDER_NAME = "groq"
GEN_AI_PROVIDER_NAME = "groq"
"""`gen_ai.provider.name` of its spans: the OpenTelemetry GenAI semantic conventions' value (1.44)."""
MIN_WINDOW_HOURS = 24
MAX_WINDOW_HOURS = 7 * 24
"""Groq's batch completion windows: from `24h` to `7d`."""
_WINDOW = re.compile(r"^([1-9][0-9]*)([hd])$")


def window_hours(window: str) -> int | None:
    """The hours a completion window (`24h`, `3d`) stands for; None when it is not written as Groq takes it."""
    matched = _WINDOW.match(window)
    if matched is None:
        return None
    count = int(matched.group(1))
    return count * 24 if matched.group(2) == "d" else count


class GroqOptions(BaseModel):
    """Groq's own settings of one actor or call. Further body parameters travel in `extra_params`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    completion_window: str = "24h"
    """Batch mode: the time Groq has to finish a batch, from `24h` to `7d` (hours as `36h`, days as `3d`); what it
    has not finished by then expires. Ignored in live mode."""
    reasoning_effort: Literal["none", "default", "low", "medium", "high"] | None = None
    """How much a reasoning model thinks (the API's default when not given)."""
    reasoning_format: Literal["hidden", "raw", "parsed"] | None = None
    """How a reasoning model's thinking comes back: `parsed` as its own field (lowtide keeps it as thinking)."""
    service_tier: Literal["auto", "on_demand", "flex", "performance"] | None = None

    @field_validator("completion_window")
    @classmethod
    def _window(cls, value: str) -> str:
        hours = window_hours(value)
        if hours is None or not MIN_WINDOW_HOURS <= hours <= MAX_WINDOW_HOURS:
            raise ValueError("Groq takes a completion window from 24h to 7d, written as hours (36h) or days (3d)")
        return value


_PREFIX = f"provider_options.{PROVIDER_NAME}"


def options_of(request: Parameters) -> GroqOptions:
    """The Groq settings of a request (or an actor), or the `ConfigurationError` naming the first wrong one."""
    return options_in(request.provider_options)


def options_in(provider_options: Mapping[str, Mapping[str, object]]) -> GroqOptions:
    """The Groq section of `provider_options`, checked (`ConfigurationError` naming the first wrong one)."""
    given = provider_options.get(PROVIDER_NAME) or {}
    try:
        return GroqOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join([_PREFIX, *(str(part) for part in first["loc"])])
        # The value is never echoed: a misplaced key must not reach an error message or a log.
        raise ConfigurationError(f"Invalid Groq setting {where}: {first['msg']}.", field=where) from None
