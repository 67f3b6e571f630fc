"""The emulated OpenAI model. Responses and Chat Completions requests are read into one `ModelRequest`, which is
answered by the emulator's deterministic answer generator (`lowtide.emulator.core.answers`, the one the Messages API
uses): the same quoting reply, schema instances for structured output and tool arguments, the same
`[[emulator:tool:NAME]]` rule for calling a tool when the choice is `auto`, and the same outcome markers.

Input tokens are counted as the Anthropic side counts them (a token per four characters of text, tools and schema),
with images and files at OpenAI's rates (`lowtide.emulator.openai.content`). Prompt caching is OpenAI's automatic
kind: a prompt of 1024 tokens or more leaves its prefixes cached, and a later prompt starting with a cached prefix
reports it, in steps of 128 tokens, as `cached_tokens`; entries live 5 minutes, or 24 hours with
`prompt_cache_retention: "24h"`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from lowtide.emulator.core.answers import answer
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.jsonutil import JsonObject, canonical, compact
from lowtide.emulator.core.outcomes import Outcome, find_marker
from lowtide.emulator.core.prompt import Breakpoint
from lowtide.emulator.openai.catalogue import find
from lowtide.emulator.openai.content import text_tokens
from lowtide.emulator.openai.errors import OpenAIError, status_error

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Generated",
    "ModelRequest",
    "check_window",
    "generate",
    "input_tokens",
    "is_missing",
    "outcome_marker",
]

DEFAULT_MAX_TOKENS = 32_768
CACHE_MINIMUM = 1024
CACHE_STEP = 128
CACHE_TTLS = {"in_memory": 300.0, "24h": 86_400.0}
_MISSING = re.compile(r"\[\[emulator:missing\]\]")

Finish = Literal["stop", "length", "tool_calls"]
_FINISH: dict[str, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}


@dataclass
class ModelRequest:
    """What either API asks the model, in one form. `turns` hold text blocks (`{"type": "text"}`) and media blocks
    (`{"type": "input_media", "tokens": n, ...}`); `tools` are function tools as the answer generator reads them
    (`name`, `input_schema`), and `tool_choice` is in its terms too (`auto`, `any`, `tool`, `none`)."""

    model: str
    system: list[str] = field(default_factory=list[str])
    turns: list[tuple[str, list[JsonObject]]] = field(default_factory=list[tuple[str, list[JsonObject]]])
    tools: list[JsonObject] = field(default_factory=list[JsonObject])
    tool_choice: JsonObject | None = None
    schema: JsonObject | None = None
    stop: list[str] = field(default_factory=list[str])
    max_tokens: int | None = None
    cache_retention: str = "in_memory"
    cache_key: str | None = None
    reasoning_summary: bool = False
    """The Responses API's `reasoning.summary` asked for one (`auto`, `concise`, `detailed`): the model reasons, as
    the Messages side thinks, and its answer says so in a reasoning item with the summary."""

    def say(self, role: str, blocks: list[JsonObject]) -> None:
        """Add a turn; `system` and `developer` turns join the system prompt (their text only); a `tool` turn (a tool
        message, a `function_call_output` item) is the user's turn holding a tool's result, as the Messages API says."""
        if role in ("system", "developer"):
            self.system.extend(str(block["text"]) for block in blocks if block.get("type") == "text")
        else:
            self.turns.append((role, blocks))


@dataclass(frozen=True)
class Generated:
    """The model's answer: text and/or function calls (name, JSON arguments), why it stopped, and its usage; the
    summary of its reasoning when one was asked for (`reasoning_tokens` of the output tokens are its reasoning's)."""

    text: str | None
    calls: list[tuple[str, str]]
    finish: Finish
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning: str | None = None
    reasoning_tokens: int = 0


def generate(request: ModelRequest, answer_id: str, *, cache: PromptCache | None = None, now: float = 0.0) -> Generated:
    """Answer `request`. An `errored` marker in the user text fails the call with its error type's status; a cache,
    when given, is read and written as OpenAI's automatic prompt caching does."""
    params = _params(request)
    marker = find_marker(params)
    if marker is not None and marker.kind == "errored":
        raise status_error(ERROR_STATUS[marker.error_type], marker.error_message)
    result = answer(params, answer_id)
    texts = [str(block["text"]) for block in result.content if block["type"] == "text"]
    thoughts = [str(block["thinking"]) for block in result.content if block["type"] == "thinking"]
    calls = [(str(block["name"]), compact(block["input"])) for block in result.content if block["type"] == "tool_use"]
    prefixes = list(_prefix_tokens(request))
    cached = 0
    if cache is not None and prefixes and prefixes[-1][1] >= CACHE_MINIMUM:
        cached = _use_cache(request, prefixes, cache, now)
    return Generated(
        text="".join(texts) if texts or not calls else None,
        calls=calls,
        finish=_FINISH[result.stop_reason],
        input_tokens=prefixes[-1][1] if prefixes else 1,
        cached_tokens=cached,
        output_tokens=result.output_tokens,
        reasoning="".join(thoughts) if thoughts else None,
        reasoning_tokens=sum(text_tokens(len(thought)) for thought in thoughts),
    )


def input_tokens(request: ModelRequest) -> int:
    """What the request's prompt counts, as its usage reports it (cached or not)."""
    last = 1
    for _, tokens in _prefix_tokens(request):
        last = tokens
    return last


def check_window(request: ModelRequest, api: Literal["responses", "chat"]) -> None:
    """Refuse a prompt over its model's context window, as each API words it."""
    model = find(request.model)
    window = model.window if model is not None else None
    if window is None:
        return
    tokens = input_tokens(request)
    if tokens <= window:
        return
    if api == "responses":
        raise OpenAIError(
            400,
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
            param="input",
            code="context_length_exceeded",
        )
    raise OpenAIError(
        400,
        f"This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens."
        " Please reduce the length of the messages.",
        param="messages",
        code="context_length_exceeded",
    )


def outcome_marker(request: ModelRequest) -> Outcome | None:
    """The batch outcome the user text asks for by marker (`[[emulator:errored:TYPE]]`, `[[emulator:expired]]`)."""
    return find_marker(_params(request))


def is_missing(request: ModelRequest) -> bool:
    """Whether the user text asks, by `[[emulator:missing]]`, for the request to go missing from a batch's files."""
    return any(
        _MISSING.search(str(block.get("text", "")))
        for role, blocks in request.turns
        if role in ("user", "tool")
        for block in blocks
    )


def _params(request: ModelRequest) -> JsonObject:
    """`request` as the answer generator reads a Messages request."""
    params: JsonObject = {
        "model": request.model,
        "max_tokens": request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS,
        "messages": [_message(role, blocks) for role, blocks in request.turns],
    }
    if request.system:
        params["system"] = "\n\n".join(request.system)
    if request.tools:
        params["tools"] = request.tools
    if request.tool_choice is not None:
        params["tool_choice"] = request.tool_choice
    if request.schema is not None:
        params["output_config"] = {"format": {"type": "json_schema", "schema": request.schema}}
    if request.stop:
        params["stop_sequences"] = request.stop
    if request.reasoning_summary:
        params["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    return params


def _message(role: str, blocks: list[JsonObject]) -> JsonObject:
    """A turn as a Messages API message: a tool's output is a user turn holding a `tool_result` block."""
    if role == "tool":
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "", "content": blocks}]}
    return {"role": role, "content": blocks}


def _prefix_tokens(request: ModelRequest) -> Iterator[tuple[list[Any], int]]:
    """The prompt's prefixes in the order the model reads it (tools, schema, system, then each turn), each with
    its size in tokens; the last is the whole prompt."""
    pieces: list[Any] = [request.tools, request.schema, request.system]
    chars = len(canonical(request.tools)) if request.tools else 0
    chars += len(canonical(request.schema)) if request.schema is not None else 0
    chars += sum(len(text) for text in request.system)
    media = 0
    if not request.turns:
        yield pieces, max(1, text_tokens(chars))
    for role, blocks in request.turns:
        pieces = [*pieces, role, blocks]
        for block in blocks:
            if block.get("type") == "text":
                chars += len(str(block["text"]))
            else:
                media += int(block.get("tokens", 0))
        yield pieces, max(1, text_tokens(chars) + media)


def _use_cache(request: ModelRequest, prefixes: list[tuple[list[Any], int]], cache: PromptCache, now: float) -> int:
    ttl = CACHE_TTLS.get(request.cache_retention, CACHE_TTLS["in_memory"])
    running = hashlib.sha256(f"openai\x1f{request.model}\x1f{request.cache_key or ''}".encode())
    breakpoints: list[Breakpoint] = []
    for pieces, tokens in prefixes:
        if tokens < CACHE_MINIMUM:
            continue
        key = running.copy()
        key.update(canonical(pieces).encode())
        breakpoints.append(Breakpoint(key=key.hexdigest(), tokens=tokens, ttl=ttl))
    read = cache.use(breakpoints, now, minimum=CACHE_MINIMUM).read
    return read - read % CACHE_STEP if read >= CACHE_MINIMUM else 0
