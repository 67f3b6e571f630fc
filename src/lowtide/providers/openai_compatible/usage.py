"""How an OpenAI-compatible Chat Completions answer reports usage, as genai-prices reads it: the `usage` object's
token kinds priced apart (input without the cached tokens, output, cached), and a dialect's `UsageShape` made from
its genai-prices provider name. Pure, and light: no SDK."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lowtide import Usage
from lowtide.providers import UsageShape, json_count, json_object, neutral_probes

__all__ = ["chat_usage_fields", "chat_usage_from_neutral", "chat_usage_shape"]


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


def chat_usage_shape(
    genai_provider: str,
    owner: str,
    *,
    flavor: Callable[[Mapping[str, object]], str] = lambda _: "default",
    extracted_as: str | None = None,
) -> UsageShape:
    """How genai-prices prices a Chat Completions API's usage: its prices under `genai_provider`, read by that
    provider's extractor (or by `extracted_as`'s, where genai-prices has none of its own, with its `flavor`)."""
    return UsageShape(
        genai_provider=genai_provider,
        owner=owner,
        fields=chat_usage_fields,
        probes=neutral_probes(chat_usage_from_neutral, "input_tokens", "output_tokens", "cached_tokens"),
        from_neutral=chat_usage_from_neutral,
        flavor=flavor,
        extracted_as=extracted_as,
    )
