"""Prompt caching in the Messages API, as a batch run primes it: the prefix requests share (tools, then the system
prompt, then the first message's leading documents when the system prompt alone is too short), each model's minimum
cacheable length, and a `cache_control` breakpoint with the one-hour lifetime, the longest the API offers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, cast

from lowtide.batching.prompt_caching import CachePrefix, PromptCaching
from lowtide.core.json_types import json_objects

__all__ = ["MINIMUM_CACHEABLE_TOKENS", "AnthropicCaching", "minimum_cacheable"]

# The prompt caching guide's minimum per model family (a model id starting with a key); any other caches from 1,024.
MINIMUM_CACHEABLE_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-sonnet-4-6", 2048),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
_OTHER_MODELS = 1024
_CHARS_PER_TOKEN = 4
_ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
_LEADING = ("document", "image")


def minimum_cacheable(model: str) -> int:
    """The fewest tokens a prefix needs before `model` caches it."""
    for family, minimum in MINIMUM_CACHEABLE_TOKENS:
        if model.startswith(family):
            return minimum
    return _OTHER_MODELS


class AnthropicCaching(PromptCaching):
    """A breakpoint at the end of the shared prefix, written for an hour; requests already marked are left alone."""

    lifetime_seconds = 3600.0

    def prefix(self, params: Mapping[str, Any]) -> CachePrefix | None:
        if _marked(params):
            return None
        model = str(params.get("model", ""))
        minimum = minimum_cacheable(model)
        parts: list[object] = [model, params.get("tools") or [], params.get("system") or ""]
        chars = _chars(params.get("tools")) + _chars(params.get("system"))
        if chars // _CHARS_PER_TOKEN < minimum:
            leading = _leading_documents(params)
            if not leading:
                return None
            parts.append(leading)
            chars += _chars(leading)
        tokens = chars // _CHARS_PER_TOKEN
        if tokens < minimum:
            return None
        key = hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        return CachePrefix(key=key, tokens=tokens, model=model)

    def mark(self, params: Mapping[str, Any], prefix: CachePrefix) -> dict[str, Any]:
        marked = dict(params)
        # `prefix` took the leading documents in only when the tools and system prompt alone were too short.
        before_documents = (_chars(params.get("tools")) + _chars(params.get("system"))) // _CHARS_PER_TOKEN
        leading = _leading_documents(params) if before_documents < minimum_cacheable(prefix.model) else []
        if leading:
            messages = [dict(message) for message in json_objects(params.get("messages"))]
            content = [dict(block) for block in json_objects(messages[0].get("content"))]
            content[len(leading) - 1]["cache_control"] = dict(_ONE_HOUR)
            messages[0]["content"] = content
            marked["messages"] = messages
            return marked
        system = params.get("system")
        if isinstance(system, str) and system:
            marked["system"] = [{"type": "text", "text": system, "cache_control": dict(_ONE_HOUR)}]
        elif system:
            blocks = [dict(block) for block in json_objects(system)]
            blocks[-1]["cache_control"] = dict(_ONE_HOUR)
            marked["system"] = blocks
        else:
            tools = [dict(tool) for tool in json_objects(params.get("tools"))]
            tools[-1]["cache_control"] = dict(_ONE_HOUR)
            marked["tools"] = tools
        return marked

    def usage(self, *, read: int, written: int) -> dict[str, object]:
        return {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": written},
        }

    def uncached_usage(self, tokens: int) -> dict[str, object]:
        return {"input_tokens": tokens, "output_tokens": 0, "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0}  # fmt: skip


def _chars(value: object) -> int:
    """What a part of the prompt weighs in characters: a text's own, anything else as its JSON."""
    if not value:
        return 0
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_chars(item) for item in cast("list[object]", value))
    if isinstance(value, Mapping):
        block = cast("Mapping[str, object]", value)
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            return len(text)
    return len(json.dumps(value, separators=(",", ":"), default=str))


def _leading_documents(params: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The document and image blocks the first user message opens with, when something follows them."""
    messages = json_objects(params.get("messages"))
    if not messages or messages[0].get("role") != "user":
        return []
    content = json_objects(messages[0].get("content"))
    leading: list[Mapping[str, Any]] = []
    for block in content:
        if block.get("type") not in _LEADING:
            break
        leading.append(block)
    return leading if len(leading) < len(content) else []


def _marked(params: Mapping[str, Any]) -> bool:
    """Whether the caller placed breakpoints of its own (top level, tools, system or messages)."""
    if params.get("cache_control") is not None:
        return True
    blocks = [*json_objects(params.get("tools")), *json_objects(params.get("system"))]
    for message in json_objects(params.get("messages")):
        blocks += json_objects(message.get("content"))
    return any(block.get("cache_control") is not None for block in blocks)
