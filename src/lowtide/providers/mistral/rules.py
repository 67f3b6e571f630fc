"""Mistral's rules as data, which neutral code asks for by the provider's name (`register` hands them to the
registry): how its chat completions report usage, for genai-prices (provider `mistral`), and what it can carry of
lowtide's content blocks. Pure, and light: no SDK."""

from __future__ import annotations

from collections.abc import Mapping

from lowtide import Usage
from lowtide.providers import ContentRules, UsageShape, json_count, neutral_probes

__all__ = ["CONTENT", "USAGE", "usage_of"]

CONTENT = ContentRules(
    provider="Mistral",
    skipped=frozenset({"thinking", "redacted_thinking"}),
    image_types=frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"}),
)
"""No Mistral model reads back another provider's signed thinking: left out. No document is cited. Images: PNG,
JPEG, WEBP and non-animated GIF (Mistral's vision documentation)."""


def usage_of(raw: Mapping[str, object]) -> Usage:
    """Mistral's `usage` (`prompt_tokens`, `completion_tokens`) in lowtide's terms; Mistral reports no cache."""
    return Usage(
        input_tokens=json_count(raw.get("prompt_tokens"), "prompt_tokens"),
        output_tokens=json_count(raw.get("completion_tokens"), "completion_tokens"),
    )


def _from_neutral(usage: Usage) -> dict[str, object]:
    return {
        "prompt_tokens": usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
        "completion_tokens": usage.output_tokens,
    }


def _fields(raw: Mapping[str, object]) -> dict[str, int]:
    counted = usage_of(raw)
    return {"input_tokens": counted.input_tokens, "output_tokens": counted.output_tokens}


USAGE = UsageShape(
    genai_provider="mistral",
    owner="Mistral",
    fields=_fields,
    probes=neutral_probes(_from_neutral, "input_tokens", "output_tokens"),
    from_neutral=_from_neutral,
)
"""How Mistral's usage is priced by genai-prices (batch at Mistral's 50% discount where it lists no batch price)."""
