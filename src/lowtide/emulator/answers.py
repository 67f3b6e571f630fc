"""The emulated model: a deterministic answer to a Messages request, a pure function of its params.
Text quotes the last user text, structured outputs and tool inputs are schema instances, thinking comes first, and
output is counted at four characters a token and cut at `max_tokens` or at a stop sequence."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lowtide.emulator.content import last_user_text
from lowtide.emulator.ids import derived_id
from lowtide.emulator.jsonutil import JsonObject, as_array, as_object, canonical
from lowtide.emulator.prompt import tokens_for_chars
from lowtide.emulator.schema import generate_instance

__all__ = ["Answer", "answer", "request_digest"]

_QUOTE_LIMIT = 200
_CHARS_PER_TOKEN = 4
# Params that do not change what the model writes, only where it stops or how it is billed.
_NOT_ANSWER_KEYS = frozenset(
    {"stream", "max_tokens", "stop_sequences", "metadata", "cache_control", "service_tier", "inference_geo", "speed"}
)
_TOOL_MARKER = re.compile(r"\[\[emulator:tool:([a-zA-Z0-9_-]{1,128})\]\]")


@dataclass(frozen=True)
class Answer:
    content: list[JsonObject]
    stop_reason: str
    stop_sequence: str | None
    output_tokens: int


def request_digest(params: Mapping[str, Any]) -> str:
    """A hash of everything in the request that shapes the answer; cache breakpoints do not."""
    relevant = {key: value for key, value in params.items() if key not in _NOT_ANSWER_KEYS}
    return hashlib.sha256(canonical(_strip_cache_control(relevant)).encode()).hexdigest()


def answer(params: Mapping[str, Any], message_id: str) -> Answer:
    """The content, stop reason and output tokens for validated `params`; tool use ids derive from `message_id`."""
    digest = request_digest(params)
    last_text = last_user_text(params)
    quote = _quote(last_text)
    planned: list[tuple[JsonObject, int]] = []
    if _thinking_enabled(params):
        planned.append(_thinking(params, quote, digest))
    tool = _tool_to_call(params, last_text)
    if tool is not None:
        schema = as_object(tool.get("input_schema")) or {"type": "object"}
        block: JsonObject = {
            "type": "tool_use",
            "id": derived_id("toolu", message_id),
            "name": tool["name"],
            "input": generate_instance(schema, seed=digest[:8]),
        }
        planned.append((block, len(block["name"]) + len(canonical(block["input"]))))
    else:
        text = _reply_text(params, quote, digest)
        planned.append(({"type": "text", "text": text}, len(text)))
    return _limit(planned, params, natural_stop="tool_use" if tool is not None else "end_turn")


def _strip_cache_control(value: object) -> object:
    mapping = as_object(value)
    if mapping is not None:
        return {key: _strip_cache_control(item) for key, item in mapping.items() if key != "cache_control"}
    items = as_array(value)
    if items is not None:
        return [_strip_cache_control(item) for item in items]
    return value


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTE_LIMIT else flat[: _QUOTE_LIMIT - 1] + "…"


def _thinking_enabled(params: Mapping[str, Any]) -> bool:
    thinking = as_object(params.get("thinking"))
    return thinking is not None and thinking.get("type") in ("enabled", "adaptive")


def _thinking(params: Mapping[str, Any], quote: str, digest: str) -> tuple[JsonObject, int]:
    text = f'The user wrote: "{quote}". A short, direct answer fits; reasoning trace {digest[:8]}.'
    signature = base64.b64encode(hashlib.sha512(f"{digest}:{text}".encode()).digest()).decode()
    shown = "" if (as_object(params.get("thinking")) or {}).get("display") == "omitted" else text
    # Omitted thinking is still generated, and billed, in full.
    return {"type": "thinking", "thinking": shown, "signature": signature}, len(text)


def _tool_to_call(params: Mapping[str, Any], last_text: str) -> JsonObject | None:
    tools = [tool for tool in (as_object(item) for item in as_array(params.get("tools")) or []) if tool is not None]
    choice = as_object(params.get("tool_choice")) or {"type": "auto"}
    by_name = {str(tool.get("name")): tool for tool in tools}
    kind = choice.get("type")
    if not tools or kind == "none":
        return None
    if kind == "tool":
        return by_name.get(str(choice.get("name")))
    if kind == "any":
        custom = [tool for tool in tools if "input_schema" in tool]
        return (custom or tools)[0]
    # With `auto` the emulated model calls a tool only when the last user turn asks for it by marker.
    marker = _TOOL_MARKER.search(last_text)
    return by_name.get(marker.group(1)) if marker else None


def _reply_text(params: Mapping[str, Any], quote: str, digest: str) -> str:
    output_format = as_object((as_object(params.get("output_config")) or {}).get("format"))
    schema = as_object(output_format.get("schema")) if output_format is not None else None
    if schema is not None:
        return json.dumps(generate_instance(schema, seed=digest[:8]), ensure_ascii=False)
    return f'Emulated reply to "{quote}": {digest[:16]}'


def _first_stop(text: str, stops: list[str]) -> tuple[int, str] | None:
    """Where generation would stop: the stop sequence whose end comes first in `text`."""
    best: tuple[int, int, str] | None = None
    for stop in stops:
        start = text.find(stop)
        if start >= 0 and (best is None or start + len(stop) < best[0]):
            best = (start + len(stop), start, stop)
    return (best[1], best[2]) if best is not None else None


def _limit(planned: list[tuple[JsonObject, int]], params: Mapping[str, Any], *, natural_stop: str) -> Answer:
    max_tokens = int(params["max_tokens"])
    budget = max_tokens * _CHARS_PER_TOKEN
    stops = [str(stop) for stop in as_array(params.get("stop_sequences")) or []]
    content: list[JsonObject] = []
    used = 0
    for block, cost in planned:
        remaining = budget - used
        if block["type"] == "text":
            text: str = block["text"]
            found = _first_stop(text, stops)
            if found is not None:
                text = text[: found[0]]
            if len(text) > remaining:
                content.append({**block, "text": text[:remaining]})
                return Answer(content, "max_tokens", None, max_tokens)
            content.append({**block, "text": text})
            used += len(text)
            if found is not None:
                return Answer(content, "stop_sequence", found[1], max(1, tokens_for_chars(used)))
        elif cost > remaining:
            # Thinking is cut where the budget ends; a tool call that does not fit is not emitted at all.
            if block["type"] == "thinking":
                content.append({**block, "thinking": block["thinking"][:remaining]})
            return Answer(content, "max_tokens", None, max_tokens)
        else:
            content.append(block)
            used += cost
    return Answer(content, natural_stop, None, max(1, tokens_for_chars(used)))
