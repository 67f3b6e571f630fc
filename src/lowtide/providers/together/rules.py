"""Together's rules as data, which neutral code asks for by the provider's name (`register` hands them to the
registry): how its Chat Completions answers report usage, for genai-prices (its `together` prices; genai-prices has
no extractor of its own for Together, so OpenAI's Chat Completions extractor reads the same `usage` object), and
what its requests can carry of lowtide's content blocks. Pure, and light: no SDK."""

from __future__ import annotations

from lowtide import Usage
from lowtide.providers import PROBE_TOKENS, ContentRules, UsageShape
from lowtide.providers.openai_compatible.usage import chat_usage_fields, chat_usage_from_neutral

__all__ = ["CONTENT", "USAGE"]

CONTENT = ContentRules(provider="Together", skipped=frozenset({"thinking", "redacted_thinking"}))
"""No Together model reads back another provider's signed thinking: left out. No document is cited."""


def _probe(**counts: int) -> dict[str, object]:
    return chat_usage_from_neutral(Usage(**counts))


USAGE = UsageShape(
    genai_provider="together",
    owner="Together AI",
    fields=chat_usage_fields,
    probes=(
        ("input_tokens", _probe(input_tokens=PROBE_TOKENS)),
        ("output_tokens", _probe(output_tokens=PROBE_TOKENS)),
        ("cached_tokens", _probe(cache_read_input_tokens=PROBE_TOKENS)),
    ),
    from_neutral=chat_usage_from_neutral,
    flavor=lambda _: "chat",
    extracted_as="openai",
)
"""How Together's usage is priced by genai-prices (its `together` prices, the usage read by OpenAI's Chat
Completions extractor; batch at Together's 50% discount where genai-prices lists no batch price)."""
