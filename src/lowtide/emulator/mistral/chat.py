"""Mistral's chat completions, emulated: a body read as Mistral's API reads it (unknown fields refused with its 422,
an unknown model with its 400), answered by the emulator's deterministic answer generator
(`lowtide.emulator.core.answers`, which every emulation uses) through a Messages-shaped request, and written back as a
`ChatCompletionResponse`, whole or as the chunks of a stream (`data: ...` events ending `data: [DONE]`).

Tokens are counted at four characters a token (text, tools and schema), an image at 256. The markers of
`core.outcomes` work as everywhere: `[[emulator:errored:TYPE]]` fails the call with that type's status."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from lowtide.emulator.core.answers import answer
from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object, canonical, compact, is_int, is_number
from lowtide.emulator.core.outcomes import Outcome, find_marker
from lowtide.emulator.mistral.catalogue import served
from lowtide.emulator.mistral.errors import MistralError, invalid, validation

__all__ = ["ChatCall", "complete", "outcome_of", "read_chat", "stream_chunks"]

_KEYS = frozenset(
    {
        "model", "messages", "max_tokens", "temperature", "top_p", "stream", "stop", "random_seed", "response_format",
        "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction", "parallel_tool_calls",
        "prompt_mode", "safe_prompt", "metadata",
    }
)  # fmt: skip
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
_IMAGE_TOKENS = 256
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@dataclass(frozen=True)
class ChatCall:
    """A chat body as the model reads it: the Messages-shaped params, its input tokens and whether it streams."""

    model: str
    params: JsonObject
    input_tokens: int
    stream: bool


def read_chat(
    body: object, extra_models: Iterable[str], *, model: str | None = None, in_batch: bool = False
) -> ChatCall:
    """The call `body` asks for (`model`: the batch job's, when the body names none), or Mistral's refusal."""
    params = as_object(body)
    if params is None:
        raise validation([], "Input should be a valid dictionary")
    unknown = sorted(set(params) - _KEYS)
    if unknown:
        raise validation([unknown[0]], "Extra inputs are not permitted", "extra_forbidden")
    name = params.get("model", model)
    found = served(name, extra_models)
    stream = params.get("stream") is True
    if stream and in_batch:
        raise invalid("A batch request cannot stream.", param="stream")
    messages = as_array(params.get("messages"))
    if not messages:
        raise validation(["messages"], "Field required" if messages is None else "List should have at least 1 item")
    converted: JsonObject = {"model": found.id, "messages": []}
    system: list[str] = []
    images = 0
    for index, raw in enumerate(messages):
        images += _message(as_object(raw), index, converted, system)
    if system:
        converted["system"] = "\n\n".join(system)
    max_tokens = params.get("max_tokens")
    if max_tokens is not None and not (is_int(max_tokens) and max_tokens >= 0):
        raise validation(["max_tokens"], "Input should be greater than or equal to 0")
    converted["max_tokens"] = max_tokens if is_int(max_tokens) and max_tokens > 0 else 32_768
    for field, high in (("temperature", 1.5), ("top_p", 1.0)):
        value = params.get(field)
        if value is not None and not (is_number(value) and 0 <= value <= high):
            raise validation([field], f"Input should be less than or equal to {high:g}")
    stop = params.get("stop")
    if stop is not None:
        converted["stop_sequences"] = [stop] if isinstance(stop, str) else [str(item) for item in as_array(stop) or []]
    _tools(params, converted)
    _response_format(params.get("response_format"), converted)
    tokens = _tokens(converted) + images * _IMAGE_TOKENS
    if tokens > found.window:
        raise invalid(
            f"Prompt contains {tokens} tokens, too large for model with {found.window} maximum context length",
            code="3051",
        )
    return ChatCall(str(name), converted, tokens, stream)


def outcome_of(call: ChatCall) -> Outcome | None:
    """The outcome a marker in the user text asks for (`[[emulator:errored:TYPE]]`, ...)."""
    return find_marker(call.params)


def complete(call: ChatCall, completion_id: str, created: float) -> JsonObject:
    """The `ChatCompletionResponse` of `call` (an `errored` marker raises its error)."""
    marker = outcome_of(call)
    if marker is not None and marker.kind == "errored":
        raise MistralError(ERROR_STATUS[marker.error_type], marker.error_message)
    result = answer(call.params, completion_id)
    text = "".join(str(block["text"]) for block in result.content if block["type"] == "text")
    calls = [
        {
            "id": _call_id(completion_id, index),
            "type": "function",
            "function": {"name": block["name"], "arguments": compact(block["input"])},
            "index": index,
        }
        for index, block in enumerate(block for block in result.content if block["type"] == "tool_use")
    ]
    message: JsonObject = {"role": "assistant", "content": text, "tool_calls": calls or None, "prefix": False}
    return {
        "id": completion_id,
        "object": "chat.completion",
        "model": call.model,
        "created": int(created),
        "choices": [{"index": 0, "message": message, "finish_reason": _FINISH[result.stop_reason]}],
        "usage": {
            "prompt_tokens": call.input_tokens,
            "completion_tokens": result.output_tokens,
            "total_tokens": call.input_tokens + result.output_tokens,
        },
    }


def stream_chunks(completion: JsonObject) -> Iterator[bytes]:
    """The completion as Mistral streams it: the text in pieces, tool calls whole, the finish reason and usage in
    the last chunk, then `[DONE]`."""
    choice = cast(JsonObject, completion["choices"][0])
    message = cast(JsonObject, choice["message"])
    head = {key: completion[key] for key in ("id", "model", "created")}
    text = str(message.get("content") or "")
    pieces = [text[at : at + 24] for at in range(0, len(text), 24)] or [""]
    for number, piece in enumerate(pieces):
        delta: JsonObject = {"role": "assistant", "content": piece} if number == 0 else {"content": piece}
        yield _event({**head, "object": "chat.completion.chunk", "choices": [_chunk(delta, None)]})
    last: JsonObject = {"content": ""}
    if message.get("tool_calls"):
        last["tool_calls"] = message["tool_calls"]
    final = {**head, "object": "chat.completion.chunk", "choices": [_chunk(last, choice["finish_reason"])]}
    final["usage"] = completion["usage"]
    yield _event(final)
    yield b"data: [DONE]\n\n"


def _chunk(delta: JsonObject, finish: object) -> JsonObject:
    return {"index": 0, "delta": delta, "finish_reason": finish}


def _event(chunk: JsonObject) -> bytes:
    return f"data: {compact(chunk)}\n\n".encode()


def _call_id(completion_id: str, index: int) -> str:
    """A tool call id as Mistral gives them: nine letters and digits."""
    digest = hashlib.sha256(f"{completion_id}\x1f{index}".encode()).digest()
    return "".join(_ALNUM[byte % len(_ALNUM)] for byte in digest[:9])


def _message(message: JsonObject | None, index: int, params: JsonObject, system: list[str]) -> int:
    """Add one message to the Messages-shaped `params`; the images it holds."""
    if message is None:
        raise validation(["messages", index], "Input should be a valid dictionary")
    role = message.get("role")
    turns = cast(list[JsonObject], params["messages"])
    blocks, images = _blocks(message.get("content"), index)
    if role == "system":
        system.extend(str(block["text"]) for block in blocks if block.get("type") == "text")
    elif role == "user":
        turns.append({"role": "user", "content": blocks})
    elif role == "assistant":
        for raw_call in as_array(message.get("tool_calls")) or []:
            call = as_object(raw_call) or {}
            function = as_object(call.get("function")) or {}
            arguments = function.get("arguments")
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) and arguments else arguments
            except ValueError:
                raise validation(["messages", index, "tool_calls"], "arguments are not JSON") from None
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(call.get("id")),
                    "name": str(function.get("name")),
                    "input": parsed if isinstance(parsed, dict) else {},
                }
            )
        turns.append({"role": "assistant", "content": blocks})
    elif role == "tool":
        text = "".join(str(block.get("text", "")) for block in blocks)
        result: JsonObject = {"type": "tool_result", "tool_use_id": str(message.get("tool_call_id")), "content": text}
        turns.append({"role": "user", "content": [result]})
    else:
        raise validation(["messages", index, "role"], f"Input tag '{role}' found using 'role' does not match")
    return images


def _blocks(content: object, index: int) -> tuple[list[JsonObject], int]:
    if content is None:
        return [], 0
    if isinstance(content, str):
        return ([{"type": "text", "text": content}] if content else []), 0
    chunks = as_array(content)
    if chunks is None:
        raise validation(["messages", index, "content"], "Input should be a valid string or list")
    blocks: list[JsonObject] = []
    images = 0
    for chunk in chunks:
        held = as_object(chunk) or {}
        kind = held.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(held.get("text", ""))})
        elif kind in ("image_url", "document_url"):
            images += 1
        else:
            raise validation(["messages", index, "content"], f"Input tag '{kind}' found using 'type' does not match")
    return blocks, images


def _tools(params: JsonObject, converted: JsonObject) -> None:
    tools = as_array(params.get("tools"))
    if tools:
        specs: list[JsonObject] = []
        for tool in tools:
            function = as_object((as_object(tool) or {}).get("function")) or {}
            name = function.get("name")
            if not isinstance(name, str) or not name:
                raise validation(["tools", "function", "name"], "Field required")
            specs.append({"name": name, "input_schema": as_object(function.get("parameters")) or {"type": "object"}})
        converted["tools"] = specs
    choice = params.get("tool_choice")
    if isinstance(choice, str):
        kinds = {"auto": "auto", "any": "any", "required": "any", "none": "none"}
        if choice not in kinds:
            raise validation(["tool_choice"], "Input should be 'auto', 'none', 'any' or 'required'")
        converted["tool_choice"] = {"type": kinds[choice]}
    elif choice is not None:
        function = as_object((as_object(choice) or {}).get("function")) or {}
        converted["tool_choice"] = {"type": "tool", "name": str(function.get("name"))}


def _response_format(value: object, converted: JsonObject) -> None:
    spec = as_object(value)
    if spec is None or spec.get("type") != "json_schema":
        return
    schema = as_object((as_object(spec.get("json_schema")) or {}).get("schema"))
    if schema is None:
        raise validation(["response_format", "json_schema", "schema"], "Field required")
    converted["output_config"] = {"format": {"type": "json_schema", "schema": schema}}


def _tokens(params: JsonObject) -> int:
    chars = len(canonical(params.get("tools") or [])) + len(str(params.get("system") or ""))
    chars += len(canonical(params.get("output_config") or {}))
    for turn in cast(list[JsonObject], params["messages"]):
        chars += len(canonical(turn["content"]))
    return max(1, chars // 4)
