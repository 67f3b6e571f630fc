"""The emulated model: a deterministic answer to a Messages request, a pure function of its params.
Text quotes the last user text, structured outputs and tool inputs are schema instances, thinking comes first, and
output is counted at four characters a token and cut at `max_tokens` or at a stop sequence.

With citation-enabled documents, the answer quotes the sentences (or content blocks) that share the most words
with the question, each in a text block of its own carrying its citation. A request that asks in words for JSON
following a schema (`lowtide.emulator.core.instructions`: between `<json_schema>` tags, or an instruction with the
schema inline or in a fenced block) is answered with an instance of it, as text; with citation-enabled documents
its free-text strings are quoted sentences, and the answer is split so that each quoted value's block carries the
citation of its sentence."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from lowtide.emulator.core.content import last_user_text
from lowtide.emulator.core.cooperative import asked_tool, prompt_arguments
from lowtide.emulator.core.documents import Passage, documents_of
from lowtide.emulator.core.ids import derived_id
from lowtide.emulator.core.instructions import instructed_schema
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, canonical
from lowtide.emulator.core.prompt import tokens_for_chars
from lowtide.emulator.core.schema import generate_instance

__all__ = ["Answer", "answer", "request_digest"]

_QUOTE_LIMIT = 200
_CHARS_PER_TOKEN = 4
# Params that do not change what the model writes, only where it stops or how it is billed.
_NOT_ANSWER_KEYS = frozenset(
    {"stream", "max_tokens", "stop_sequences", "metadata", "cache_control", "service_tier", "inference_geo", "speed"}
)
_TOOL_MARKER = re.compile(r"\[\[emulator:tool:([a-zA-Z0-9_-]{1,128})\]\]")
_WORD = re.compile(r"\w+")
# Words too common to tell which passage a question is about.
_COMMON_WORDS = frozenset(
    _WORD.findall(
        "the and for are was were what who whom when where which why how does did this that these "
        "those with from has have had its into about there their they them you your our can"
    )
)
# How many passages a prose answer quotes.
_CITED_PASSAGES = 3


@dataclass(frozen=True)
class Answer:
    content: list[JsonObject]
    stop_reason: str
    stop_sequence: str | None
    output_tokens: int


def request_digest(params: Mapping[str, object]) -> str:
    """A hash of everything in the request that shapes the answer; cache breakpoints do not."""
    relevant = {key: value for key, value in params.items() if key not in _NOT_ANSWER_KEYS}
    return hashlib.sha256(canonical(_strip_cache_control(relevant)).encode()).hexdigest()


def answer(params: Mapping[str, object], message_id: str) -> Answer:
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
            "input": prompt_arguments(schema, generate_instance(schema, seed=digest[:8]), last_text),
        }
        planned.append((block, len(block["name"]) + len(canonical(block["input"]))))
    else:
        for reply in _reply(params, quote, digest, _cited_passages(params, last_text)):
            planned.append((reply, len(reply["text"])))
    return _limit(planned, params, natural_stop="tool_use" if tool is not None else "end_turn")


def _strip_cache_control(value: object) -> object:
    # isinstance inline rather than as_object/as_array: this runs on every node of every request's params.
    if isinstance(value, dict):
        mapping = cast(JsonObject, value)
        return {key: _strip_cache_control(item) for key, item in mapping.items() if key != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(item) for item in cast(list[object], value)]
    return value


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTE_LIMIT else flat[: _QUOTE_LIMIT - 1] + "…"


def _thinking_enabled(params: Mapping[str, object]) -> bool:
    thinking = as_object(params.get("thinking"))
    return thinking is not None and thinking.get("type") in ("enabled", "adaptive")


def _thinking(params: Mapping[str, object], quote: str, digest: str) -> tuple[JsonObject, int]:
    text = f'The user wrote: "{quote}". A short, direct answer fits; reasoning trace {digest[:8]}.'
    signature = base64.b64encode(hashlib.sha512(f"{digest}:{text}".encode()).digest()).decode()
    shown = "" if (as_object(params.get("thinking")) or {}).get("display") == "omitted" else text
    # Omitted thinking is still generated, and billed, in full.
    return {"type": "thinking", "thinking": shown, "signature": signature}, len(text)


def _tool_to_call(params: Mapping[str, object], last_text: str) -> JsonObject | None:
    tools = [tool for tool in (as_object(item) for item in as_array(params.get("tools")) or []) if tool is not None]
    choice = as_object(params.get("tool_choice")) or {"type": "auto"}
    by_name = {str(tool.get("name")): tool for tool in tools}
    kind = choice.get("type")
    if not tools or kind == "none":
        return None
    if kind == "tool":
        return by_name.get(str(choice.get("name")))
    # The last user turn (a tool's result too) may ask for a tool by marker; a user turn that is not a tool's result
    # also by naming it (`cooperative.asked_tool`): with `auto` the emulated model calls a tool only then, and answers
    # in text once the tool has answered. With `any`, the tool so asked for, else the first custom tool; once a tool
    # has answered, `any` moves on to the last tool not called yet in the conversation (an agent's output tool, listed
    # after its function tools), so that an agent which must call a tool every step reaches its final answer.
    marker = _TOOL_MARKER.search(last_text)
    asked = by_name.get(marker.group(1)) if marker else None
    if asked is None and not _answers_tool(params):
        asked = asked_tool(tools, last_text)
    if kind == "any" and asked is None:
        custom = [tool for tool in tools if "input_schema" in tool] or tools
        called = _called_tools(params)
        if not called:
            return custom[0]
        fresh = [tool for tool in custom if tool.get("name") not in called]
        return (fresh or custom)[-1]
    return asked


def _answers_tool(params: Mapping[str, object]) -> bool:
    """Whether the last user turn holds a tool's result."""
    turns = [as_object(item) for item in as_array(params.get("messages")) or []]
    users = [turn for turn in turns if turn is not None and turn.get("role") == "user"]
    if not users:
        return False
    blocks = [as_object(item) for item in as_array(users[-1].get("content")) or []]
    return any(block is not None and block.get("type") == "tool_result" for block in blocks)


def _called_tools(params: Mapping[str, object]) -> set[str]:
    """The names of the tools the assistant turns of the conversation called."""
    called: set[str] = set()
    for message in as_array(params.get("messages")) or []:
        turn = as_object(message)
        if turn is None or turn.get("role") != "assistant":
            continue
        for block in as_array(turn.get("content")) or []:
            item = as_object(block)
            if item is not None and item.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use"):
                called.add(str(item.get("name")))
    return called


def _reply(params: Mapping[str, object], quote: str, digest: str, passages: list[Passage]) -> list[JsonObject]:
    output_format = as_object((as_object(params.get("output_config")) or {}).get("format"))
    schema = as_object(output_format.get("schema")) if output_format is not None else None
    if schema is not None:
        return [_text(json.dumps(generate_instance(schema, seed=digest[:8]), ensure_ascii=False))]
    instructed = instructed_schema(params)
    if instructed is not None:
        value = generate_instance(instructed, seed=digest[:8], quotes=[passage.text for passage in passages])
        return _json_blocks(value, {passage.text: passage.citation for passage in reversed(passages)})
    opening = f'Emulated reply to "{quote}": {digest[:16]}'
    if not passages:
        return [_text(opening)]
    chosen = passages[:_CITED_PASSAGES]
    blocks = [_text(f"{opening}. The documents say: ")]
    for number, passage in enumerate(chosen, start=1):
        ending = "" if number == len(chosen) else " "
        blocks.append({"type": "text", "text": passage.text + ending, "citations": [passage.citation]})
    return blocks


def _text(text: str) -> JsonObject:
    return {"type": "text", "text": text}


def _cited_passages(params: Mapping[str, object], question: str) -> list[Passage]:
    """The passages of citation-enabled documents, those sharing the most words with `question` first."""
    passages = [passage for document in documents_of(params) if document.cited for passage in document.passages]
    if not passages:
        return []
    asked = _words(question)
    return sorted(passages, key=lambda passage: -len(_words(passage.text) & asked))


def _words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if len(word) > 2 and word not in _COMMON_WORDS}


def _json_blocks(value: object, citations: Mapping[str, JsonObject]) -> list[JsonObject]:
    """`value` as JSON text (as `json.dumps` writes it), split into text blocks so that each string value quoted
    from a document is a block of its own, carrying that passage's citation."""
    pieces: list[tuple[str, JsonObject | None]] = []

    def plain(text: str) -> None:
        if pieces and pieces[-1][1] is None:
            pieces[-1] = (pieces[-1][0] + text, None)
        else:
            pieces.append((text, None))

    def emit(node: object) -> None:
        mapping = as_object(node)
        items = as_array(node)
        if isinstance(node, str) and node in citations:
            pieces.append((json.dumps(node, ensure_ascii=False), citations[node]))
        elif mapping is not None:
            plain("{")
            for position, (key, item) in enumerate(mapping.items()):
                plain((", " if position else "") + json.dumps(key, ensure_ascii=False) + ": ")
                emit(item)
            plain("}")
        elif items is not None:
            plain("[")
            for position, item in enumerate(items):
                if position:
                    plain(", ")
                emit(item)
            plain("]")
        else:
            plain(json.dumps(node, ensure_ascii=False))

    emit(value)
    return [_text(text) if citation is None else {**_text(text), "citations": [citation]} for text, citation in pieces]


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
