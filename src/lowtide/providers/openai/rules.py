"""OpenAI's rules as data, which neutral code asks for by the provider's name (`register` hands them to the
registry): how the Responses and Chat Completions APIs report usage, for genai-prices; and what they can carry of
lowtide's content blocks, for the neutral reader its request encoders use. Pure, and light: no SDK."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lowtide.cost.pricing import UsageShape, neutral_probes
from lowtide.messages.content import ContentRules
from lowtide.types import Usage

__all__ = ["CONTENT", "IMAGE_TYPES", "USAGE"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The images OpenAI's models read inline (its vision guide: PNG, JPEG, WEBP, non-animated GIF); Azure's, Groq's and
Together's Chat Completions read the same."""

CONTENT = ContentRules(provider="OpenAI", skipped=frozenset({"thinking", "redacted_thinking"}), image_types=IMAGE_TYPES)
"""No OpenAI model can read back another provider's thinking (signed for it): left out. No document is cited."""


# Input tokens include the cached ones and those written to the cache; the Responses API reports
# `input_tokens`/`output_tokens` with `input_tokens_details`, Chat Completions `prompt_tokens`/`completion_tokens`
# with `prompt_tokens_details`.
def _from_neutral(usage: Usage) -> dict[str, object]:
    return {
        "input_tokens": usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
        "output_tokens": usage.output_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_input_tokens,
            "cache_write_tokens": usage.cache_creation_input_tokens,
        },
    }


def _flavor(raw: Mapping[str, object]) -> str:
    return "chat" if "prompt_tokens" in raw else "responses"


def _fields(raw: Mapping[str, Any]) -> dict[str, int]:
    chat = "prompt_tokens" in raw
    details: Mapping[str, Any] = raw.get("prompt_tokens_details" if chat else "input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    written = int(details.get("cache_write_tokens") or 0)
    return {
        "input_tokens": int(raw.get("prompt_tokens" if chat else "input_tokens") or 0) - cached - written,
        "output_tokens": int(raw.get("completion_tokens" if chat else "output_tokens") or 0),
        "cached_tokens": cached,
        "cache_write_tokens": written,
    }


USAGE = UsageShape(
    genai_provider="openai",
    owner="OpenAI",
    fields=_fields,
    probes=neutral_probes(_from_neutral, "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"),
    from_neutral=_from_neutral,
    flavor=_flavor,
    priced_tiers=frozenset({"flex", "priority"}),
)
"""How OpenAI's APIs report usage, for genai-prices (flex and priority tiers priced apart)."""
