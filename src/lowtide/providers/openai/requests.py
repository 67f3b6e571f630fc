"""An `ActorRequest` as the body of `POST /v1/responses` or `POST /v1/chat/completions`: the same body for a live call
and a batch line. Pure; whatever OpenAI cannot do raises `ConfigurationError` naming the field, before sending."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai.types.chat import (
    ChatCompletionContentPartParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionToolChoiceOptionParam,
)
from openai.types.chat.chat_completion_content_part_param import File as ChatFile
from openai.types.chat.chat_completion_content_part_param import FileFile
from openai.types.chat.chat_completion_named_tool_choice_param import ChatCompletionNamedToolChoiceParam
from openai.types.responses import (
    FunctionToolParam,
    ResponseFunctionCallOutputItemParam,
    ResponseInputContentParam,
    ResponseInputFileParam,
    ResponseInputImageParam,
    ResponseInputItemParam,
    ResponseInputTextParam,
    ToolChoiceFunctionParam,
)
from pydantic import BaseModel

from lowtide.errors import ConfigurationError
from lowtide.providers.openai.content import (
    File,
    Image,
    Part,
    Piece,
    Text,
    ToolCall,
    ToolResult,
    pieces_of,
    system_text,
)
from lowtide.providers.openai.options import Endpoint, OpenAIOptions, ReasoningOptions, options_of
from lowtide.types import ActorRequest, ToolSpec

__all__ = [
    "ENDPOINT_URLS",
    "MAX_STOP_SEQUENCES",
    "MIN_OUTPUT_TOKENS",
    "Encoded",
    "encode_request",
    "schema_name",
    "strict_schema",
    "to_chat_body",
    "to_responses_body",
]

ENDPOINT_URLS: dict[Endpoint, str] = {"responses": "/v1/responses", "chat_completions": "/v1/chat/completions"}
"""The path of each endpoint, as a batch input line's `url` names it."""
MAX_STOP_SEQUENCES = 4
MIN_OUTPUT_TOKENS = 16
"""The least `max_output_tokens` the Responses API takes."""


@dataclass(frozen=True)
class Encoded:
    """A request as OpenAI takes it: which endpoint, and the body (JSON-ready, never holding a key)."""

    endpoint: Endpoint
    body: dict[str, Any]

    @property
    def url(self) -> str:
        return ENDPOINT_URLS[self.endpoint]


def encode_request(request: ActorRequest) -> Encoded:
    """The endpoint the request's `provider_options.openai.endpoint` picks (Responses by default), and its body."""
    options = options_of(request)
    if options.endpoint == "chat_completions":
        return Encoded("chat_completions", to_chat_body(request, options))
    return Encoded("responses", to_responses_body(request, options))


_REFUSED: dict[str, str] = {
    "top_k": "OpenAI has no top_k; use temperature or top_p.",
    "thinking": "OpenAI models reason by `provider_options.openai.reasoning` (effort, summary), not `thinking`.",
    "output_config": "OpenAI has no output_config: give `response_model` for structured output, and "
    "`provider_options.openai.reasoning` or `verbosity` for effort.",
    "cache_control": "OpenAI caches long prompts by itself; steer it with `provider_options.openai.prompt_cache_key` "
    "and `prompt_cache_retention` instead of cache_control.",
}


def _refuse_unsupported(request: ActorRequest) -> None:
    for name, reason in _REFUSED.items():
        if getattr(request, name) is not None:
            raise ConfigurationError(f"{name} cannot be sent to OpenAI: {reason}", field=name)


def to_responses_body(request: ActorRequest, options: OpenAIOptions | None = None) -> dict[str, Any]:
    """The body of `POST /v1/responses` for `request`."""
    options = options or options_of(request)
    _refuse_unsupported(request)
    if request.stop_sequences:
        raise ConfigurationError(
            "stop_sequences cannot be sent to the Responses API, which has none; set "
            "`provider_options.openai.endpoint: chat_completions` to use them.",
            field="stop_sequences",
        )
    if request.max_tokens < MIN_OUTPUT_TOKENS:
        raise ConfigurationError(
            f"max_tokens is {request.max_tokens}; the Responses API needs at least {MIN_OUTPUT_TOKENS}.",
            field="max_tokens",
        )
    body: dict[str, Any] = {
        "model": request.model,
        "input": _responses_input(request),
        "max_output_tokens": request.max_tokens,
    }
    if request.system is not None:
        body["instructions"] = system_text(request.system)
    if request.tools:
        body["tools"] = [_responses_tool(tool, index) for index, tool in enumerate(request.tools)]
    _tool_choice(request, body, "responses")
    text: dict[str, Any] = {}
    if request.response_model is not None:
        text["format"] = {
            "type": "json_schema",
            "name": schema_name(request.response_model),
            "schema": strict_schema(request.response_model),
            "strict": True,
        }
    if options.verbosity is not None:
        text["verbosity"] = options.verbosity
    if text:
        body["text"] = text
    if options.reasoning is not None:
        body["reasoning"] = options.reasoning.model_dump(exclude_none=True)
    _common(request, options, body)
    return _with_extra(request, body)


def to_chat_body(request: ActorRequest, options: OpenAIOptions | None = None) -> dict[str, Any]:
    """The body of `POST /v1/chat/completions` for `request`."""
    options = options or options_of(request)
    _refuse_unsupported(request)
    messages: list[ChatCompletionMessageParam] = []
    if request.system is not None:
        text = system_text(request.system)
        messages.append(
            {"role": "developer", "content": text}
            if options.system_role == "developer"
            else {"role": "system", "content": text}
        )
    messages.extend(_chat_input(request))
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_completion_tokens": request.max_tokens,
    }
    if request.stop_sequences:
        if len(request.stop_sequences) > MAX_STOP_SEQUENCES:
            raise ConfigurationError(
                f"stop_sequences holds {len(request.stop_sequences)} sequences; Chat Completions takes at most "
                f"{MAX_STOP_SEQUENCES}.",
                field="stop_sequences",
            )
        body["stop"] = list(request.stop_sequences)
    if request.tools:
        body["tools"] = [_chat_tool(tool, index) for index, tool in enumerate(request.tools)]
    _tool_choice(request, body, "chat_completions")
    if request.response_model is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema_name(request.response_model),
                "schema": strict_schema(request.response_model),
                "strict": True,
            },
        }
    if options.verbosity is not None:
        body["verbosity"] = options.verbosity
    reasoning = options.reasoning or ReasoningOptions()
    if reasoning.summary is not None:
        raise ConfigurationError(
            "Chat Completions gives no reasoning summaries; use the Responses endpoint for them.",
            field="provider_options.openai.reasoning.summary",
        )
    if reasoning.effort is not None:
        body["reasoning_effort"] = reasoning.effort
    _common(request, options, body)
    return _with_extra(request, body)


def _common(request: ActorRequest, options: OpenAIOptions, body: dict[str, Any]) -> None:
    """The settings both endpoints name the same way."""
    for name in ("temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.metadata is not None:
        body["metadata"] = _metadata(request.metadata)
    settings = options.model_dump(
        include={"service_tier", "prompt_cache_key", "prompt_cache_retention", "store", "safety_identifier"},
        exclude_none=True,
    )
    body.update(settings)


def _metadata(metadata: dict[str, Any]) -> dict[str, str]:
    wrong = sorted(key for key, value in metadata.items() if not isinstance(value, str))
    if wrong:
        raise ConfigurationError(
            f"OpenAI's metadata holds strings only; metadata.{wrong[0]} is not one.", field=f"metadata.{wrong[0]}"
        )
    return {key: str(value) for key, value in metadata.items()}


_NOT_EXTRA = {
    "stream": "lowtide reads whole answers (and a batch line cannot stream)",
    "n": "lowtide reads one answer a call",
}


def _with_extra(request: ActorRequest, body: dict[str, Any]) -> dict[str, Any]:
    for name, reason in _NOT_EXTRA.items():
        if name in request.extra_params:
            raise ConfigurationError(f"extra_params cannot set {name}: {reason}.", field=f"extra_params.{name}")
    clashes = set(request.extra_params) & set(body)
    if clashes:
        raise ConfigurationError(
            f"extra_params repeats parameter(s) already set: {', '.join(sorted(clashes))}", field="extra_params"
        )
    body.update(request.extra_params)
    return body


# Structured output.

_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def schema_name(model: type[BaseModel]) -> str:
    """The schema's name as OpenAI takes it: letters, digits, `_` and `-`, at most 64."""
    return _NAME.sub("_", model.__name__)[:64] or "answer"


def strict_schema(model: type[BaseModel]) -> dict[str, object]:
    """`model`'s JSON schema in the strict form OpenAI's structured outputs ask for (every property required, no
    others allowed), made by the SDK's own public helper."""
    return dict(openai.pydantic_function_tool(model)["function"].get("parameters") or {})


# Tools.

_TOOL_KEYS = frozenset({"name", "description", "input_schema", "strict", "cache_control", "type"})
_EMPTY_SCHEMA: dict[str, object] = {"type": "object", "properties": {}}


def _checked_tool(tool: ToolSpec, index: int) -> tuple[dict[str, object], bool | None]:
    """The tool's parameters schema and `strict`, once it is known to be a function tool OpenAI can take."""
    extra = tool.model_extra or {}
    kind = extra.get("type")
    if kind not in (None, "custom"):
        raise ConfigurationError(
            f"OpenAI cannot take the tool {tool.name!r} of type {kind!r}: only function tools are sent.",
            field=f"tools[{index}].type",
        )
    unknown = sorted(set(extra) - _TOOL_KEYS)
    if unknown:
        raise ConfigurationError(
            f"OpenAI's function tools have no {unknown[0]!r} (tool {tool.name!r}).",
            field=f"tools[{index}].{unknown[0]}",
        )
    strict = extra.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ConfigurationError(f"tools[{index}].strict must be true or false.", field=f"tools[{index}].strict")
    schema: dict[str, object] = dict(tool.input_schema) if tool.input_schema is not None else dict(_EMPTY_SCHEMA)
    return schema, strict


def _responses_tool(tool: ToolSpec, index: int) -> FunctionToolParam:
    schema, strict = _checked_tool(tool, index)
    # Responses makes function tools strict unless told otherwise; a schema written for another API rarely is.
    spec: FunctionToolParam = {"type": "function", "name": tool.name, "parameters": schema, "strict": bool(strict)}
    if tool.description is not None:
        spec["description"] = tool.description
    return spec


def _chat_tool(tool: ToolSpec, index: int) -> ChatCompletionFunctionToolParam:
    schema, strict = _checked_tool(tool, index)
    spec: ChatCompletionFunctionToolParam = {"type": "function", "function": {"name": tool.name, "parameters": schema}}
    if tool.description is not None:
        spec["function"]["description"] = tool.description
    if strict is not None:
        spec["function"]["strict"] = strict
    return spec


_CHOICES: dict[str, Literal["auto", "required", "none"]] = {"auto": "auto", "any": "required", "none": "none"}


def _tool_choice(request: ActorRequest, body: dict[str, Any], endpoint: Endpoint) -> None:
    """The Messages API's `tool_choice` (`auto`, `any`, `tool` with a name, `none`) in the endpoint's words."""
    choice = request.tool_choice
    if choice is None:
        return
    kind = choice.get("type")
    name = choice.get("name")
    if kind == "tool":
        if not isinstance(name, str) or not name:
            raise ConfigurationError("tool_choice of type 'tool' must name the tool.", field="tool_choice.name")
        named: ToolChoiceFunctionParam | ChatCompletionNamedToolChoiceParam = (
            {"type": "function", "name": name}
            if endpoint == "responses"
            else {"type": "function", "function": {"name": name}}
        )
        body["tool_choice"] = named
    elif isinstance(kind, str) and kind in _CHOICES:
        option: ChatCompletionToolChoiceOptionParam = _CHOICES[kind]
        body["tool_choice"] = option
    else:
        raise ConfigurationError(
            f"tool_choice type {kind!r} is not one of auto, any, tool, none.", field="tool_choice.type"
        )
    if choice.get("disable_parallel_tool_use") is True:
        body["parallel_tool_calls"] = False


# Responses input.


def _responses_input(request: ActorRequest) -> list[ResponseInputItemParam]:
    items: list[ResponseInputItemParam] = []
    for index, message in enumerate(request.messages):
        if isinstance(message.content, str):
            items.append({"role": message.role, "content": message.content})
            continue
        pieces = pieces_of(message.role, message.content, index)
        calls = [_responses_tool_item(piece) for piece in pieces if isinstance(piece, ToolCall | ToolResult)]
        parts = [piece for piece in pieces if isinstance(piece, Text | Image | File)]
        if message.role == "assistant":
            # An earlier answer goes back as its text, then its calls; `pieces_of` lets only text through here.
            text = "".join(part.text for part in parts if isinstance(part, Text))
            items.extend([{"role": "assistant", "content": text}] if text else [])
            items.extend(calls)
        else:
            # Tool results first, as the Messages API has them, so that each follows the call it answers.
            items.extend(calls)
            if parts:
                content: list[ResponseInputContentParam] = [_responses_part(part) for part in parts]
                items.append({"role": "user", "content": content})
    return items


def _responses_tool_item(piece: ToolCall | ToolResult) -> ResponseInputItemParam:
    if isinstance(piece, ToolCall):
        return {"type": "function_call", "call_id": piece.call_id, "name": piece.name, "arguments": piece.arguments}
    if all(isinstance(part, Text) for part in piece.parts):
        output = "".join(part.text for part in piece.parts if isinstance(part, Text))
        return {"type": "function_call_output", "call_id": piece.call_id, "output": output}
    outputs = [_output_part(part) for part in piece.parts]
    return {"type": "function_call_output", "call_id": piece.call_id, "output": outputs}


def _output_part(part: Part) -> ResponseFunctionCallOutputItemParam:
    """A part of a tool's output: the same JSON as in a message, under the SDK's own types for outputs."""
    if isinstance(part, Text):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, Image):
        if part.file_id is not None:
            return {"type": "input_image", "detail": "auto", "file_id": part.file_id}
        return {"type": "input_image", "detail": "auto", "image_url": part.url}
    if part.file_id is not None:
        return {"type": "input_file", "file_id": part.file_id}
    if part.url is not None:
        return {"type": "input_file", "file_url": part.url}
    return {"type": "input_file", "file_data": part.data_url, "filename": part.filename}


def _responses_part(part: Part) -> ResponseInputTextParam | ResponseInputImageParam | ResponseInputFileParam:
    if isinstance(part, Text):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, Image):
        image: ResponseInputImageParam = {"type": "input_image", "detail": "auto"}
        if part.file_id is not None:
            image["file_id"] = part.file_id
        else:
            image["image_url"] = part.url
        return image
    file: ResponseInputFileParam = {"type": "input_file"}
    if part.file_id is not None:
        file["file_id"] = part.file_id
    elif part.url is not None:
        file["file_url"] = part.url
    else:
        file["file_data"] = str(part.data_url)
        file["filename"] = str(part.filename)
    return file


# Chat messages.


def _chat_input(request: ActorRequest) -> list[ChatCompletionMessageParam]:
    messages: list[ChatCompletionMessageParam] = []
    for index, message in enumerate(request.messages):
        if isinstance(message.content, str):
            plain: ChatCompletionMessageParam = (
                {"role": "user", "content": message.content}
                if message.role == "user"
                else {"role": "assistant", "content": message.content}
            )
            messages.append(plain)
        elif message.role == "assistant":
            messages.append(_chat_answer(pieces_of(message.role, message.content, index)))
        else:
            messages.extend(_chat_user(pieces_of(message.role, message.content, index)))
    return messages


def _chat_answer(pieces: Sequence[Piece]) -> ChatCompletionMessageParam:
    text = "".join(piece.text for piece in pieces if isinstance(piece, Text))
    calls: list[ChatCompletionMessageFunctionToolCallParam] = [
        {"id": piece.call_id, "type": "function", "function": {"name": piece.name, "arguments": piece.arguments}}
        for piece in pieces
        if isinstance(piece, ToolCall)
    ]
    if calls:
        return {"role": "assistant", "content": text or None, "tool_calls": calls}
    return {"role": "assistant", "content": text}


def _chat_user(pieces: Sequence[Piece]) -> list[ChatCompletionMessageParam]:
    """A user turn: its tool results first, as `tool` messages (each must follow the call it answers), then the
    rest as one user message."""
    messages: list[ChatCompletionMessageParam] = [
        {"role": "tool", "tool_call_id": piece.call_id, "content": _chat_tool_output(piece)}
        for piece in pieces
        if isinstance(piece, ToolResult)
    ]
    parts = [_chat_part(piece) for piece in pieces if isinstance(piece, Text | Image | File)]
    if parts:
        messages.append({"role": "user", "content": parts})
    return messages


def _chat_tool_output(piece: ToolResult) -> list[ChatCompletionContentPartTextParam]:
    texts: list[ChatCompletionContentPartTextParam] = []
    for part in piece.parts:
        if not isinstance(part, Text):
            raise ConfigurationError(
                "Chat Completions takes only text in a tool result; use the Responses endpoint for images and files "
                f"({piece.where}).",
                field=f"{piece.where}.content",
            )
        texts.append({"type": "text", "text": part.text})
    return texts


def _chat_part(part: Part) -> ChatCompletionContentPartParam:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Image):
        if part.url is None:
            raise ConfigurationError(
                f"Chat Completions takes images by URL only, not by file id ({part.where}); use the Responses "
                "endpoint.",
                field=f"{part.where}.source",
            )
        return {"type": "image_url", "image_url": {"url": part.url}}
    return _chat_file(part)


def _chat_file(part: File) -> ChatFile:
    file: FileFile = {}
    if part.file_id is not None:
        file["file_id"] = part.file_id
    elif part.data_url is not None:
        file["file_data"] = part.data_url
        file["filename"] = str(part.filename)
    else:
        raise ConfigurationError(
            f"Chat Completions cannot fetch a document by URL ({part.where}); use the Responses endpoint, or send "
            "the file inline.",
            field=f"{part.where}.source",
        )
    return {"type": "file", "file": file}
