"""Bedrock's rules as data, which neutral code asks for by the provider's name: how its usage is priced through
genai-prices (provider `aws`, whose default extractor reads Converse's `usage`: `inputTokens`, `outputTokens`,
`cacheReadInputTokens`, `cacheWriteInputTokens`), and what it can carry of lowtide's content blocks. Pure, and light:
no SDK."""

from __future__ import annotations

from collections.abc import Mapping

from lowtide import Usage
from lowtide.providers import ContentRules, UsageShape, json_count, neutral_probes

__all__ = ["CONTENT", "USAGE", "usage_of"]

CONTENT = ContentRules(provider="Bedrock", skipped=frozenset({"thinking", "redacted_thinking"}))


def usage_of(usage: Mapping[str, object]) -> Usage:
    """Converse's `usage` in lowtide's terms (its `inputTokens` exclude the cache's reads and writes, as lowtide's)."""
    return Usage(
        input_tokens=json_count(usage.get("inputTokens"), "inputTokens"),
        output_tokens=json_count(usage.get("outputTokens"), "outputTokens"),
        cache_read_input_tokens=json_count(usage.get("cacheReadInputTokens"), "cacheReadInputTokens"),
        cache_creation_input_tokens=json_count(usage.get("cacheWriteInputTokens"), "cacheWriteInputTokens"),
    )


def _from_neutral(usage: Usage) -> dict[str, object]:
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cache_read_input_tokens,
        "cacheWriteInputTokens": usage.cache_creation_input_tokens,
    }


def _fields(raw: Mapping[str, object]) -> dict[str, int]:
    return {
        "input_tokens": json_count(raw.get("inputTokens"), "inputTokens"),
        "output_tokens": json_count(raw.get("outputTokens"), "outputTokens"),
        "cached_tokens": json_count(raw.get("cacheReadInputTokens"), "cacheReadInputTokens"),
        "cache_write_tokens": json_count(raw.get("cacheWriteInputTokens"), "cacheWriteInputTokens"),
    }


USAGE = UsageShape(
    genai_provider="aws",
    owner="AWS Bedrock",
    fields=_fields,
    probes=neutral_probes(_from_neutral, "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"),
    from_neutral=_from_neutral,
    flavor=lambda _: "default",
)
"""How Bedrock's usage is priced by genai-prices (AWS's on-demand prices; batch at AWS's 50% discount, which
genai-prices does not list)."""
