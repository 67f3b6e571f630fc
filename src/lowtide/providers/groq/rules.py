"""Groq's rules as data, which neutral code asks for by the provider's name (`register` hands them to the registry):
how its Chat Completions answers report usage, for genai-prices (its `groq` provider, whose extractor reads the
`usage` object as the API sends it), and what its requests can carry of lowtide's content blocks. Pure, and light:
no SDK."""

from __future__ import annotations

from collections.abc import Mapping

from lowtide import Usage
from lowtide.providers import PROBE_TOKENS, ContentRules, UsageShape, json_count, json_object

__all__ = ["CONTENT", "USAGE", "chat_usage_fields", "chat_usage_from_neutral"]

CONTENT = ContentRules(provider="Groq", skipped=frozenset({"thinking", "redacted_thinking"}))
"""No Groq model reads back another provider's signed thinking: left out. No document is cited."""


def chat_usage_from_neutral(usage: Usage) -> dict[str, object]:
    """A neutral usage as a Chat Completions `usage` object: the prompt tokens with the cached ones inside them."""
    return {
        "prompt_tokens": usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
        "completion_tokens": usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
    }


def chat_usage_fields(raw: Mapping[str, object]) -> dict[str, int]:
    """The token kinds a Chat Completions `usage` object prices apart: input without the cached tokens, output,
    cached."""
    cached = json_count(json_object(raw.get("prompt_tokens_details")).get("cached_tokens"), "cached_tokens")
    return {
        "input_tokens": json_count(raw.get("prompt_tokens"), "prompt_tokens") - cached,
        "output_tokens": json_count(raw.get("completion_tokens"), "completion_tokens"),
        "cached_tokens": cached,
    }


def _probe(**counts: int) -> dict[str, object]:
    return chat_usage_from_neutral(Usage(**counts))


USAGE = UsageShape(
    genai_provider="groq",
    owner="Groq",
    fields=chat_usage_fields,
    probes=(
        ("input_tokens", _probe(input_tokens=PROBE_TOKENS)),
        ("output_tokens", _probe(output_tokens=PROBE_TOKENS)),
        ("cached_tokens", _probe(cache_read_input_tokens=PROBE_TOKENS)),
    ),
    from_neutral=chat_usage_from_neutral,
)
"""How Groq's usage is priced by genai-prices (its `groq` prices; batch at Groq's 50% discount where genai-prices
lists no batch price)."""
