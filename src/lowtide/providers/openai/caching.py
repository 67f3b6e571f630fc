"""Prompt caching in OpenAI's APIs, as a batch run uses it: prompts of 1,024 tokens or more are cached on their own,
and requests sharing a prefix are routed to the same cache by a `prompt_cache_key`, which lowtide gives each prefix
its requests share (tools, then the instructions or leading system messages). No primer: the API caches a prefix
as it processes it, and a batch's requests read what the key gathers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from lowtide.batching.prompt_caching import CachePrefix, PromptCaching
from lowtide.core.json_types import json_object, json_objects
from lowtide.providers.openai.rules import USAGE
from lowtide.types import Usage

__all__ = ["MINIMUM_CACHED_TOKENS", "OpenAICaching"]

MINIMUM_CACHED_TOKENS = 1024
_CHARS_PER_TOKEN = 4
_LEADING_ROLES = ("system", "developer")


class OpenAICaching(PromptCaching):
    """A `prompt_cache_key` per shared prefix; a request that names its own key is left as written."""

    lifetime_seconds = 300.0  # in memory, 5 to 10 minutes of inactivity (up to an hour off-peak)
    primes = False

    def prefix(self, params: Mapping[str, Any]) -> CachePrefix | None:
        body = json_object(params.get("body")) or {}
        if body.get("prompt_cache_key") is not None:
            return None
        model = str(body.get("model", ""))
        leading = [
            message for message in json_objects(body.get("messages")) if message.get("role") in _LEADING_ROLES
        ]  # (Chat Completions; the Responses API's are its `instructions`)
        parts = [model, body.get("tools") or [], body.get("instructions") or "", leading]
        text = json.dumps(parts[1:], sort_keys=True, separators=(",", ":"))
        tokens = len(text) // _CHARS_PER_TOKEN
        if tokens < MINIMUM_CACHED_TOKENS:
            return None
        key = hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        return CachePrefix(key=key, tokens=tokens, model=model)

    def mark(self, params: Mapping[str, Any], prefix: CachePrefix) -> dict[str, Any]:
        body = dict(json_object(params.get("body")) or {})
        body["prompt_cache_key"] = f"lowtide-{prefix.key[:40]}"
        return {**params, "body": body}

    def usage(self, *, read: int, written: int) -> dict[str, object]:
        return USAGE.from_neutral(Usage(cache_read_input_tokens=read, cache_creation_input_tokens=written))

    def uncached_usage(self, tokens: int) -> dict[str, object]:
        return USAGE.from_neutral(Usage(input_tokens=tokens))
