"""A request's conversation and tools in the shapes of each endpoint: Responses input items and function tools, Chat
Completions messages and tools. Pure; built on the SDK's own parameter types, so that pyright checks every shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from lowtide.errors import ConfigurationError
from lowtide.messages.content import FilePart, ImagePart, Part, Piece, TextPart, ToolCall, ToolResult, pieces_of
from lowtide.providers.openai.chat_limits import OPENAI_CHAT, ChatLimits
from lowtide.providers.openai.options import Endpoint
from lowtide.providers.openai.rules import CONTENT
from lowtide.types import ActorRequest, ToolSpec

if TYPE_CHECKING:  # the SDK's TypedDicts are annotations here: no SDK import to build a request
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

__all__ = ["apply_tool_choice", "chat_input", "chat_tool", "responses_input", "responses_tool"]


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


def responses_tool(tool: ToolSpec, index: int) -> FunctionToolParam:
    schema, strict = _checked_tool(tool, index)
    # Responses makes function tools strict unless told otherwise; a schema written for another API rarely is.
    spec: FunctionToolParam = {"type": "function", "name": tool.name, "parameters": schema, "strict": bool(strict)}
    if tool.description is not None:
        spec["description"] = tool.description
    return spec


def chat_tool(tool: ToolSpec, index: int) -> ChatCompletionFunctionToolParam:
    schema, strict = _checked_tool(tool, index)
    spec: ChatCompletionFunctionToolParam = {"type": "function", "function": {"name": tool.name, "parameters": schema}}
    if tool.description is not None:
        spec["function"]["description"] = tool.description
    if strict is not None:
        spec["function"]["strict"] = strict
    return spec


_CHOICES: dict[str, Literal["auto", "required", "none"]] = {"auto": "auto", "any": "required", "none": "none"}


def apply_tool_choice(request: ActorRequest, body: dict[str, object], endpoint: Endpoint) -> None:
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


def responses_input(request: ActorRequest) -> list[ResponseInputItemParam]:
    items: list[ResponseInputItemParam] = []
    for index, message in enumerate(request.messages):
        if isinstance(message.content, str):
            items.append({"role": message.role, "content": message.content})
            continue
        pieces = pieces_of(message.role, message.content, index, rules=CONTENT)
        calls = [_responses_tool_item(piece) for piece in pieces if isinstance(piece, ToolCall | ToolResult)]
        parts = [piece for piece in pieces if isinstance(piece, TextPart | ImagePart | FilePart)]
        if message.role == "assistant":
            # An earlier answer goes back as its text, then its calls; `pieces_of` lets only text through here.
            text = "".join(part.text for part in parts if isinstance(part, TextPart))
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
    if all(isinstance(part, TextPart) for part in piece.parts):
        output = "".join(part.text for part in piece.parts if isinstance(part, TextPart))
        return {"type": "function_call_output", "call_id": piece.call_id, "output": output}
    outputs = [_output_part(part) for part in piece.parts]
    return {"type": "function_call_output", "call_id": piece.call_id, "output": outputs}


def _output_part(part: Part) -> ResponseFunctionCallOutputItemParam:
    """A part of a tool's output: the same JSON as in a message, under the SDK's own types for outputs."""
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        if part.file_id is not None:
            return {"type": "input_image", "detail": "auto", "file_id": part.file_id}
        return {"type": "input_image", "detail": "auto", "image_url": part.url}
    if part.file_id is not None:
        return {"type": "input_file", "file_id": part.file_id}
    if part.url is not None:
        return {"type": "input_file", "file_url": part.url}
    return {"type": "input_file", "file_data": part.data_url, "filename": part.filename}


def _responses_part(part: Part) -> ResponseInputTextParam | ResponseInputImageParam | ResponseInputFileParam:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
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


def chat_input(request: ActorRequest, limits: ChatLimits = OPENAI_CHAT) -> list[ChatCompletionMessageParam]:
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
            messages.append(_chat_answer(pieces_of(message.role, message.content, index, rules=limits.content)))
        else:
            messages.extend(_chat_user(pieces_of(message.role, message.content, index, rules=limits.content), limits))
    return messages


def _chat_answer(pieces: Sequence[Piece]) -> ChatCompletionMessageParam:
    text = "".join(piece.text for piece in pieces if isinstance(piece, TextPart))
    calls: list[ChatCompletionMessageFunctionToolCallParam] = [
        {"id": piece.call_id, "type": "function", "function": {"name": piece.name, "arguments": piece.arguments}}
        for piece in pieces
        if isinstance(piece, ToolCall)
    ]
    if calls:
        return {"role": "assistant", "content": text or None, "tool_calls": calls}
    return {"role": "assistant", "content": text}


def _chat_user(pieces: Sequence[Piece], limits: ChatLimits) -> list[ChatCompletionMessageParam]:
    """A user turn: its tool results first, as `tool` messages (each must follow the call it answers), then the
    rest as one user message."""
    messages: list[ChatCompletionMessageParam] = [
        {"role": "tool", "tool_call_id": piece.call_id, "content": _chat_tool_output(piece, limits)}
        for piece in pieces
        if isinstance(piece, ToolResult)
    ]
    parts = [_chat_part(piece, limits) for piece in pieces if isinstance(piece, TextPart | ImagePart | FilePart)]
    if parts:
        messages.append({"role": "user", "content": parts})
    return messages


def _chat_tool_output(piece: ToolResult, limits: ChatLimits) -> list[ChatCompletionContentPartTextParam]:
    texts: list[ChatCompletionContentPartTextParam] = []
    for part in piece.parts:
        if not isinstance(part, TextPart):
            raise limits.refusal(
                "tool_result_media",
                "takes only text in a tool result",
                where=piece.where,
                field=f"{piece.where}.content",
            )
        texts.append({"type": "text", "text": part.text})
    return texts


def _chat_part(part: Part, limits: ChatLimits) -> ChatCompletionContentPartParam:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        if part.url is None:
            raise limits.refusal(
                "image_file_id",
                "takes images by URL only, not by file id",
                where=part.where,
                field=f"{part.where}.source",
            )
        return {"type": "image_url", "image_url": {"url": part.url}}
    return _chat_file(part, limits)


def _chat_file(part: FilePart, limits: ChatLimits) -> ChatFile:
    if not limits.documents:
        raise limits.refusal("document", "takes no documents", where=part.where, field=f"{part.where}.source")
    file: FileFile = {}
    if part.file_id is not None:
        file["file_id"] = part.file_id
    elif part.data_url is not None:
        file["file_data"] = part.data_url
        file["filename"] = str(part.filename)
    else:
        raise limits.refusal(
            "document_url", "cannot fetch a document by URL", where=part.where, field=f"{part.where}.source"
        )
    return {"type": "file", "file": file}
