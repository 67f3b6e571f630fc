"""Gemini's rules as data, which neutral code asks for by the provider's name (`register` hands them to the
registry): how its usage is priced through genai-prices, and what it can carry of lowtide's content blocks. Pure, and
light: no SDK.

genai-prices reads Google's own usage (`usageMetadata`) from a response's top level, where lowtide hands it a usage
object alone; its `anthropic` flavor for Google (input with the cache reads inside it, cache reads, output) reads the
same counts from a usage object, and Gemini bills thinking as output, so the thinking tokens are priced in it.
"""

from __future__ import annotations

from collections.abc import Mapping

from lowtide import Usage
from lowtide.providers import ContentRules, UsageShape, json_count, neutral_probes

__all__ = ["CONTENT", "USAGE", "usage_of"]

CONTENT = ContentRules(provider="Gemini", skipped=frozenset({"thinking", "redacted_thinking"}))
"""No Gemini model reads back another model's signed thinking: left out. No document is cited."""


def usage_of(metadata: Mapping[str, object]) -> Usage:
    """Gemini's `usageMetadata` in lowtide's terms: input without the cached tokens (read apart), output with the
    thinking tokens (billed as output, as Anthropic's output counts its thinking)."""
    prompt = _count(metadata, "promptTokenCount") + _count(metadata, "toolUsePromptTokenCount")
    cached = _count(metadata, "cachedContentTokenCount")
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=_count(metadata, "candidatesTokenCount") + _count(metadata, "thoughtsTokenCount"),
        cache_read_input_tokens=cached,
    )


def _count(holder: Mapping[str, object], name: str) -> int:
    return json_count(holder.get(name), name)


def _from_neutral(usage: Usage) -> dict[str, object]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": 0,
        "output_tokens": usage.output_tokens,
    }


def _fields(raw: Mapping[str, object]) -> dict[str, int]:
    return {
        "input_tokens": _count(raw, "input_tokens"),
        "output_tokens": _count(raw, "output_tokens"),
        "cached_tokens": _count(raw, "cache_read_input_tokens"),
    }


USAGE = UsageShape(
    genai_provider="google",
    owner="Google",
    fields=_fields,
    probes=neutral_probes(_from_neutral, "input_tokens", "output_tokens", "cached_tokens"),
    from_neutral=_from_neutral,
    flavor=lambda _: "anthropic",
)
"""How Gemini's usage is priced by genai-prices (Google's prices, read in its `anthropic` flavor)."""
