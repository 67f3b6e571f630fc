"""The checks OpenAI makes on a `POST /v1/responses` body, and the body read into a `ModelRequest` plus what the
`Response` object echoes back (instructions, tools, text format, sampling settings, metadata)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.openai.checks import (
    check_bool,
    check_integer,
    check_keys,
    check_metadata,
    check_model,
    check_number,
    check_string,
    function_schema,
    require_object,
    required,
    unique_names,
)
from lowtide.emulator.openai.content import FileLookup, file_media, image_media
from lowtide.emulator.openai.errors import OpenAIError, invalid_type, invalid_value, missing_parameter
from lowtide.emulator.openai.model import ModelRequest, check_window

__all__ = ["RESPONSES_PARAMS", "Conversations", "ResponsesCall", "read_responses_call"]

Conversations = Callable[[str], "list[object] | None"]
"""The items a request continuing a stored response (`previous_response_id`) reads before its own input; None when
no such response is kept."""

# The body keys of `POST /v1/responses` in openai 3.54, and `stream`.
RESPONSES_PARAMS = frozenset(
    {
        "access_programs", "background", "background_options", "context_management", "conversation", "image",
        "include", "input", "instructions", "max_output_tokens", "max_tool_calls", "metadata", "model", "moderation",
        "parallel_tool_calls", "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_options",
        "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store", "stream",
        "stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user",
    }
)  # fmt: skip
_ROLES = ("user", "assistant", "system", "developer")
_TOOL_CHOICES = ("none", "auto", "required")
_FORMATS = ("text", "json_object", "json_schema")
# What `json_object` asks for, as a schema the answer generator can fill.
JSON_OBJECT_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


@dataclass
class ResponsesCall:
    """A checked Responses request: what the model is asked, whether to stream, and what the answer echoes."""

    request: ModelRequest
    stream: bool
    echo: JsonObject = field(default_factory=dict[str, object])


def read_responses_call(
    body: object,
    files: FileLookup,
    *,
    in_batch: bool = False,
    counting: bool = False,
    conversations: Conversations | None = None,
) -> ResponsesCall:
    """The checked request, or the `OpenAIError` OpenAI answers with. The model is checked last, as OpenAI reports a
    malformed request before an unknown model, then the prompt against its context window (unless `counting` its
    tokens, which tells how far over it is). A request continuing a stored response reads that response's
    conversation first (`conversations`; none in a batch)."""
    params = require_object(body)
    check_keys(params, RESPONSES_PARAMS)
    required(params, "model")
    request = ModelRequest(model=str(params["model"]))
    instructions = check_string(params.get("instructions"), "instructions")
    if instructions:
        request.system.append(instructions)
    previous_id = params.get("previous_response_id")
    prior = _prior(previous_id, None if in_batch else conversations)
    if prior:
        _read_input(prior, request, files)
    _read_input(required(params, "input"), request, files)
    request.max_tokens = check_integer(params.get("max_output_tokens"), "max_output_tokens", minimum=16)
    reasoning = as_object(params.get("reasoning")) or {}
    request.reasoning_summary = reasoning.get("summary") in ("auto", "concise", "detailed")
    temperature = check_number(params.get("temperature"), "temperature", 0, 2)
    top_p = check_number(params.get("top_p"), "top_p", 0, 1)
    tools = _read_tools(params.get("tools"), request)
    tool_choice = _read_tool_choice(params.get("tool_choice"), request)
    text = _read_text(params.get("text"), request)
    metadata = check_metadata(params.get("metadata"))
    stream = check_bool(params.get("stream"), "stream") or False
    if stream and in_batch:
        raise invalid_value("stream", True)
    parallel = check_bool(params.get("parallel_tool_calls"), "parallel_tool_calls")
    store = check_bool(params.get("store"), "store")
    retention = params.get("prompt_cache_retention")
    if retention is not None and retention not in ("in_memory", "24h"):
        raise invalid_value("prompt_cache_retention", retention, ("in_memory", "24h"))
    request.cache_retention = str(retention or "in_memory")
    request.cache_key = check_string(params.get("prompt_cache_key"), "prompt_cache_key")
    background = check_bool(params.get("background"), "background") or False
    if background and in_batch:
        raise invalid_value("background", True)
    if prior is None:
        raise OpenAIError(
            400,
            f"Previous response with id '{previous_id}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    check_model(params["model"])
    echo: JsonObject = {
        "instructions": instructions,
        "max_output_tokens": request.max_tokens,
        "metadata": metadata or {},
        "model": request.model,
        "parallel_tool_calls": True if parallel is None else parallel,
        "temperature": 1.0 if temperature is None else temperature,
        "top_p": 1.0 if top_p is None else top_p,
        "tools": tools,
        "tool_choice": tool_choice,
        "text": text,
        "store": True if store is None else store,
        "user": check_string(params.get("user"), "user"),
        "prompt_cache_key": request.cache_key,
        "prompt_cache_retention": retention,
        "reasoning": as_object(params.get("reasoning")) or {"effort": None, "summary": None},
        "truncation": params.get("truncation") or "disabled",
        "background": background,
        "previous_response_id": previous_id,
    }
    if not counting:
        check_window(request, "responses")
    return ResponsesCall(request, stream, echo)


def _prior(previous_id: object, conversations: Conversations | None) -> list[object] | None:
    """The conversation `previous_id` continues (empty when it names none); None when it names one not kept."""
    if previous_id is None:
        return []
    if conversations is None or not isinstance(previous_id, str):
        return None
    return conversations(previous_id)


def _read_input(value: object, request: ModelRequest, files: FileLookup) -> None:
    if isinstance(value, str):
        request.say("user", [{"type": "text", "text": value}])
        return
    items = as_array(value)
    if items is None:
        raise invalid_type("input", "a string or an array", value)
    for index, item in enumerate(items):
        where = f"input[{index}]"
        entry = require_object(item, where)
        kind = entry.get("type", "message")
        if kind == "message":
            role = entry.get("role")
            if role not in _ROLES:
                raise invalid_value(f"{where}.role", role, _ROLES)
            request.say(str(role), _content(required(entry, "content", f"{where}."), f"{where}.content", files))
        elif kind == "function_call":
            call = f"[called {entry.get('name')}({entry.get('arguments')})]"
            request.say("assistant", [{"type": "text", "text": call}])
        elif kind == "function_call_output":
            output = entry.get("output")
            shown = output if isinstance(output, str) else str(output)
            request.say("tool", [{"type": "text", "text": shown}])
        elif kind != "reasoning":
            raise invalid_value(f"{where}.type", kind, ("message", "function_call", "function_call_output"))


def _content(value: object, where: str, files: FileLookup) -> list[JsonObject]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    parts = as_array(value)
    if parts is None:
        raise invalid_type(where, "a string or an array", value)
    blocks: list[JsonObject] = []
    for index, item in enumerate(parts):
        part = require_object(item, f"{where}[{index}]")
        inner = f"{where}[{index}]"
        kind = part.get("type")
        if kind in ("input_text", "output_text", "refusal"):
            key = "refusal" if kind == "refusal" else "text"
            text = check_string(part.get(key), f"{inner}.{key}")
            if text is None:
                raise missing_parameter(f"{inner}.{key}")
            blocks.append({"type": "text", "text": text})
        elif kind == "input_image":
            media = image_media(part.get("image_url"), part.get("file_id"), part.get("detail"), inner, files)
            blocks.append({**media.block, "tokens": media.tokens})
        elif kind == "input_file":
            media = file_media(part.get("file_data"), part.get("file_id"), part.get("file_url"), inner, files)
            blocks.append({**media.block, "tokens": media.tokens})
        else:
            supported = ("input_text", "input_image", "input_file", "output_text", "refusal")
            raise invalid_value(f"{inner}.type", kind, supported)
    return blocks


def _read_tools(value: object, request: ModelRequest) -> list[JsonObject]:
    """Function tools are checked and offered to the model; other tools are echoed but never called."""
    if value is None:
        return []
    items = as_array(value)
    if items is None:
        raise invalid_type("tools", "an array", value)
    echoed: list[JsonObject] = []
    for index, item in enumerate(items):
        tool = require_object(item, f"tools[{index}]")
        if tool.get("type") != "function":
            echoed.append(tool)
            continue
        request.tools.append(function_schema(tool.get("name"), tool.get("parameters"), f"tools[{index}]"))
        strict = tool.get("strict")
        echoed.append(
            {
                "type": "function",
                "name": tool["name"],
                "description": tool.get("description"),
                "parameters": request.tools[-1]["input_schema"],
                "strict": True if strict is None else strict,
            }
        )
    unique_names(request.tools, "tools")
    return echoed


def _read_tool_choice(value: object, request: ModelRequest) -> object:
    if value is None:
        return "auto"
    if isinstance(value, str):
        if value not in _TOOL_CHOICES:
            raise invalid_value("tool_choice", value, _TOOL_CHOICES)
        request.tool_choice = {"none": {"type": "none"}, "auto": {"type": "auto"}, "required": {"type": "any"}}[value]
        if value == "required" and not request.tools:
            raise OpenAIError(
                400,
                "Tool choice 'required' must be specified with 'tools' parameter.",
                param="tool_choice",
                code="invalid_value",
            )
        return value
    choice = require_object(value, "tool_choice")
    if choice.get("type") == "function":
        name = choice.get("name")
        if not any(tool["name"] == name for tool in request.tools):
            raise OpenAIError(
                400,
                f"Tool choice 'function' with name '{name}' not found in 'tools' parameter.",
                param="tool_choice",
                code="invalid_value",
            )
        request.tool_choice = {"type": "tool", "name": name}
    return choice


def _read_text(value: object, request: ModelRequest) -> JsonObject:
    text = require_object(value, "text") if value is not None else {}
    check_keys(text, ("format", "verbosity"), "text.")
    output_format = require_object(text.get("format") or {"type": "text"}, "text.format")
    kind = output_format.get("type")
    if kind not in _FORMATS:
        raise invalid_value("text.format.type", kind, _FORMATS)
    if kind == "json_schema":
        required(output_format, "name", "text.format.")
        request.schema = require_object(required(output_format, "schema", "text.format."), "text.format.schema")
        output_format = {
            "type": "json_schema",
            "name": output_format["name"],
            "schema": request.schema,
            "description": output_format.get("description"),
            "strict": output_format.get("strict"),
        }
    elif kind == "json_object":
        request.schema = JSON_OBJECT_SCHEMA
    verbosity = text.get("verbosity") or "medium"
    if verbosity not in ("low", "medium", "high"):
        raise invalid_value("text.verbosity", verbosity, ("low", "medium", "high"))
    return {"format": output_format, "verbosity": verbosity}
