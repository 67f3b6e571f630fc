"""Groq as an OpenAI-compatible dialect: its settings (`provider_options: {groq: ...}`), what its Chat Completions
refuse, its limits and its prices, as data. Light: no SDK (registering Groq imports this alone).

Its parameter rules, checked as an actor loads and on every request as it is encoded: `temperature` from 0 to 2,
`top_p` from 0 to 1; no `top_k`, `thinking`, `output_config`, `cache_control` or `metadata` (the refusal names
Groq's means); at most 4 stop sequences; `provider_options.groq` as `GroqOptions` reads it. Its usage is priced by
genai-prices' `groq` provider (whose extractor reads the `usage` object as the API sends it), batch at Groq's 50%
discount where genai-prices lists no batch price.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from lowtide.providers import BatchLimits
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.usage import chat_usage_shape

__all__ = ["GROQ", "MAX_WINDOW_HOURS", "MIN_WINDOW_HOURS", "GroqOptions", "window_hours"]

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


GROQ = Dialect(
    name="groq",
    owner="Groq",
    usage=chat_usage_shape("groq", "Groq"),
    options=GroqOptions,
    body_options=("reasoning_effort", "reasoning_format", "service_tier"),
    api_key_env="GROQ_API_KEY",
    base_url_env="GROQ_BASE_URL",
    sdk_paths=("/openai/v1", "/openai", "/v1"),
    refused={
        "top_k": "Groq has no top_k; use temperature or top_p.",
        "thinking": "Groq's reasoning models think by `provider_options.groq.reasoning_effort`, not `thinking`.",
        "output_config": "Groq has no output_config: give `response_model` for structured output.",
        "cache_control": "Groq caches prompts by itself; cache_control has no meaning there.",
        "metadata": "Groq's Chat Completions take no request metadata.",
    },
    max_stop_sequences=4,
    # Groq's model pages: of its chat models, Llama 4 Scout and Maverick read images; these take text only.
    text_only_models=frozenset(
        {
            "llama-3.1-8b-instant",
            "llama-3.3-70b-versatile",
            "openai/gpt-oss-20b",
            "openai/gpt-oss-120b",
            "qwen/qwen3-32b",
            "moonshotai/kimi-k2-instruct",
            "moonshotai/kimi-k2-instruct-0905",
            "allam-2-7b",
            "groq/compound",
            "groq/compound-mini",
        }
    ),
    vision_example="meta-llama/llama-4-scout-17b-16e-instruct",
    gen_ai_provider_name="groq",  # the OpenTelemetry GenAI semantic conventions' value (1.44)
    # 50,000 requests, the file at most 100 MB (the SDK's own word); a window of up to 7 days.
    batch=BatchLimits(max_requests=50_000, max_bytes=100 * 1024 * 1024, max_hours=float(MAX_WINDOW_HOURS)),
)
"""Groq's Chat Completions under `/openai/v1/`; a request body over 20 MB is refused with a 413."""
