"""A complete `Message` object, as `anthropic.types.Message` expects it, from an answer and the request's usage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from lowtide.emulator.core.answers import answer
from lowtide.emulator.core.cache import CacheUsage
from lowtide.emulator.core.jsonutil import JsonObject

__all__ = ["build_message"]


def build_message(
    params: Mapping[str, Any],
    *,
    model: str,
    message_id: str,
    prompt_tokens: int,
    cache: CacheUsage,
    service_tier: Literal["standard", "batch"],
) -> JsonObject:
    """The reply to validated `params`, made by `model` (the dated id the request's model resolves to: the API names
    it, not the alias asked for). `input_tokens` excludes what the cache read or wrote, as in the API; `inference_geo`
    is what the API reports for a request that named no geography."""
    result = answer(params, message_id)
    message: JsonObject = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": result.content,
        "stop_reason": result.stop_reason,
        "stop_sequence": result.stop_sequence,
        "usage": {
            "input_tokens": max(0, prompt_tokens - cache.read - cache.created),
            "output_tokens": result.output_tokens,
            "cache_creation_input_tokens": cache.created,
            "cache_read_input_tokens": cache.read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": cache.created_5m,
                "ephemeral_1h_input_tokens": cache.created_1h,
            },
            "service_tier": service_tier,
            "inference_geo": "not_available",
        },
    }
    if params.get("context_management") is not None:
        # The beta's report of what it cleared: the emulated conversations never need clearing.
        message["context_management"] = {"applied_edits": []}
    return message
