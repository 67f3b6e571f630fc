"""The checks OpenAI makes on a `POST /v1/chat/completions` body, and the body read into a `ModelRequest` plus the
choices count and stream settings the `ChatCompletion` depends on."""

from __future__ import annotations

from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject, as_array
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
    string_list,
    unique_names,
)
from lowtide.emulator.openai.content import FileLookup, file_media, image_media
from lowtide.emulator.openai.errors import OpenAIError, invalid_type, invalid_value, missing_parameter
from lowtide.emulator.openai.model import ModelRequest, check_window
from lowtide.emulator.openai.responses_params import JSON_OBJECT_SCHEMA

__all__ = ["CHAT_PARAMS", "ChatCall", "read_chat_call"]

# The body keys of `POST /v1/chat/completions` in openai 3.54, and `stream`.
CHAT_PARAMS = frozenset(
    {
        "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs", "max_completion_tokens",
        "max_tokens", "messages", "metadata", "modalities", "model", "moderation", "n", "parallel_tool_calls",
        "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
        "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
        "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
        "web_search_options",
    }
)  # fmt: skip
_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_TOOL_CHOICES = ("none", "auto", "required")
_FORMATS = ("text", "json_object", "json_schema")


@dataclass
class ChatCall:
    """A checked Chat Completions request."""

    request: ModelRequest
    choices: int
    stream: bool
    include_usage: bool


def read_chat_call(body: object, files: FileLookup, *, in_batch: bool = False) -> ChatCall:
    """The checked request, or the `OpenAIError` OpenAI answers with (an unknown model last, as a 404)."""
    params = require_object(body)
    check_keys(params, CHAT_PARAMS)
    required(params, "model")
    request = ModelRequest(model=str(params["model"]))
    messages = as_array(required(params, "messages"))
    if messages is None:
        raise invalid_type("messages", "an array", params["messages"])
    if not messages:
        raise OpenAIError(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            param="messages",
            code="empty_array",
        )
    for index, item in enumerate(messages):
        _read_message(require_object(item, f"messages[{index}]"), f"messages[{index}]", request, files)
    limit = check_integer(params.get("max_completion_tokens"), "max_completion_tokens", minimum=1)
    legacy = check_integer(params.get("max_tokens"), "max_tokens", minimum=1)
    request.max_tokens = limit if limit is not None else legacy
    choices = check_integer(params.get("n"), "n", minimum=1, maximum=128) or 1
    request.stop = string_list(params.get("stop"), "stop", 4)
    check_number(params.get("temperature"), "temperature", 0, 2)
    check_number(params.get("top_p"), "top_p", 0, 1)
    for key in ("presence_penalty", "frequency_penalty"):
        check_number(params.get(key), key, -2, 2)
    _read_tools(params.get("tools"), request)
    _read_tool_choice(params.get("tool_choice"), request)
    _read_response_format(params.get("response_format"), request)
    check_metadata(params.get("metadata"))
    check_bool(params.get("store"), "store")
    request.cache_key = check_string(params.get("prompt_cache_key"), "prompt_cache_key")
    retention = params.get("prompt_cache_retention")
    if retention is not None and retention not in ("in_memory", "24h"):
        raise invalid_value("prompt_cache_retention", retention, ("in_memory", "24h"))
    request.cache_retention = str(retention or "in_memory")
    stream = check_bool(params.get("stream"), "stream") or False
    if stream and in_batch:
        raise invalid_value("stream", True)
    options = params.get("stream_options")
    if options is not None and not stream:
        raise OpenAIError(
            400,
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options",
            code="invalid_value",
        )
    include_usage = check_bool(
        require_object(options or {}, "stream_options").get("include_usage"), "stream_options.include_usage"
    )
    check_model(params["model"])
    check_window(request, "chat")
    return ChatCall(request, choices, stream, include_usage or False)


def _read_message(message: JsonObject, where: str, request: ModelRequest, files: FileLookup) -> None:
    role = message.get("role")
    if role not in _ROLES:
        raise invalid_value(f"{where}.role", role, _ROLES)
    blocks = _content(message.get("content"), f"{where}.content", files, optional=role == "assistant")
    if role == "assistant":
        for index, item in enumerate(as_array(message.get("tool_calls")) or []):
            function = require_object(
                require_object(item, f"{where}.tool_calls[{index}]").get("function") or {},
                f"{where}.tool_calls[{index}].function",
            )
            blocks.append({"type": "text", "text": f"[called {function.get('name')}({function.get('arguments')})]"})
        request.say("assistant", blocks)
    elif role in ("tool", "function"):
        request.say("tool", blocks)
    else:
        request.say(str(role), blocks)


def _content(value: object, where: str, files: FileLookup, *, optional: bool) -> list[JsonObject]:
    if value is None:
        if optional:
            return []
        raise missing_parameter(where)
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    parts = as_array(value)
    if parts is None:
        raise invalid_type(where, "a string or an array", value)
    blocks: list[JsonObject] = []
    for index, item in enumerate(parts):
        inner = f"{where}[{index}]"
        part = require_object(item, inner)
        kind = part.get("type")
        if kind in ("text", "refusal"):
            text = check_string(part.get(kind), f"{inner}.{kind}")
            if text is None:
                raise missing_parameter(f"{inner}.{kind}")
            blocks.append({"type": "text", "text": text})
        elif kind == "image_url":
            image = require_object(required(part, "image_url", f"{inner}."), f"{inner}.image_url")
            media = image_media(
                image.get("url"), None, image.get("detail"), f"{inner}.image_url", files, url_param="url"
            )
            blocks.append({**media.block, "tokens": media.tokens})
        elif kind == "file":
            file = require_object(required(part, "file", f"{inner}."), f"{inner}.file")
            media = file_media(file.get("file_data"), file.get("file_id"), None, f"{inner}.file", files)
            blocks.append({**media.block, "tokens": media.tokens})
        else:
            raise invalid_value(f"{inner}.type", kind, ("text", "image_url", "file", "refusal"))
    return blocks


def _read_tools(value: object, request: ModelRequest) -> None:
    if value is None:
        return
    items = as_array(value)
    if items is None:
        raise invalid_type("tools", "an array", value)
    for index, item in enumerate(items):
        tool = require_object(item, f"tools[{index}]")
        if tool.get("type") != "function":
            continue
        function = require_object(required(tool, "function", f"tools[{index}]."), f"tools[{index}].function")
        request.tools.append(
            function_schema(function.get("name"), function.get("parameters"), f"tools[{index}].function")
        )
    unique_names(request.tools, "tools")


def _read_tool_choice(value: object, request: ModelRequest) -> None:
    if value is None:
        return
    if isinstance(value, str):
        if value not in _TOOL_CHOICES:
            raise invalid_value("tool_choice", value, _TOOL_CHOICES)
        if value != "none" and not request.tools:
            raise OpenAIError(
                400,
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                param="tool_choice",
                code=None,
            )
        request.tool_choice = {"none": {"type": "none"}, "auto": {"type": "auto"}, "required": {"type": "any"}}[value]
        return
    choice = require_object(value, "tool_choice")
    name = (require_object(choice.get("function") or {}, "tool_choice.function")).get("name")
    if not any(tool["name"] == name for tool in request.tools):
        raise OpenAIError(
            400,
            f"Invalid value for 'tool_choice': no function named '{name}' was specified in the 'tools' parameter.",
            param="tool_choice",
            code=None,
        )
    request.tool_choice = {"type": "tool", "name": name}


def _read_response_format(value: object, request: ModelRequest) -> None:
    if value is None:
        return
    response_format = require_object(value, "response_format")
    kind = response_format.get("type")
    if kind not in _FORMATS:
        raise invalid_value("response_format.type", kind, _FORMATS)
    if kind == "json_schema":
        spec = require_object(
            required(response_format, "json_schema", "response_format."), "response_format.json_schema"
        )
        required(spec, "name", "response_format.json_schema.")
        request.schema = require_object(
            required(spec, "schema", "response_format.json_schema."), "response_format.json_schema.schema"
        )
    elif kind == "json_object":
        request.schema = JSON_OBJECT_SCHEMA
