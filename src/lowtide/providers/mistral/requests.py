"""An `ActorRequest` as the body of Mistral's `POST /v1/chat/completions`: the same body for a live call and a batch
line (`{"custom_id", "body"}`). Pure; whatever Mistral cannot take raises `ConfigurationError` naming the field,
before anything is sent."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from lowtide import ActorRequest, ConfigurationError, providers
from lowtide.providers import FilePart, ImagePart, Part, Piece, TextPart, ToolCall, ToolResult, pieces_of, system_text
from lowtide.providers.mistral.parameters import check_parameters
from lowtide.providers.mistral.rules import CONTENT

__all__ = ["CHAT_URL", "encode_request", "schema_name"]

CHAT_URL = "/v1/chat/completions"
"""The endpoint of every request lowtide sends Mistral, live or in a batch job."""

Json = dict[str, object]

_CHOICES = {"auto": "auto", "any": "any", "none": "none"}
_NOT_EXTRA = {
    "stream": "lowtide reads whole answers (and a batch line cannot stream)",
    "n": "lowtide reads one answer a call",
}
_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def encode_request(request: ActorRequest) -> Json:
    """The chat completions body of `request`, `model` included; what Mistral would refuse of its parameters
    raises `ConfigurationError` naming the field."""
    options = check_parameters(request)
    messages: list[Json] = []
    if request.system is not None:
        messages.append({"role": "system", "content": system_text(request.system, rules=CONTENT)})
    messages.extend(_messages(request))
    body: Json = {"model": request.model, "messages": messages, "max_tokens": request.max_tokens}
    for name in ("temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.stop_sequences:
        body["stop"] = list(request.stop_sequences)
    if options.random_seed is not None:
        body["random_seed"] = options.random_seed
    if options.safe_prompt is not None:
        body["safe_prompt"] = options.safe_prompt
    if request.tools:
        body["tools"] = [_tool(request, index) for index in range(len(request.tools))]
    _tool_choice(request, body)
    if request.response_model is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema_name(request.response_model),
                "schema": request.response_model.model_json_schema(),
                "strict": True,
            },
        }
    return _with_extra(request, body)


def schema_name(model: type[BaseModel]) -> str:
    """The schema's name as Mistral takes it: letters, digits, `_` and `-`, at most 64."""
    return _NAME.sub("_", model.__name__)[:64]


def _tool(request: ActorRequest, index: int) -> Json:
    """A function tool as Mistral declares it: its name letters, digits, `_` and `-` (at most 64), each once; only
    function tools (Mistral runs no server tool of lowtide's)."""
    tool = request.tools[index]
    where = f"tools[{index}]"
    kind = (tool.model_extra or {}).get("type")
    if kind not in (None, "custom", "function"):
        raise ConfigurationError(
            f"{where}.type: Mistral takes only function tools, not {kind!r}.", field=f"{where}.type"
        )
    if not _TOOL_NAME.match(tool.name):
        raise ConfigurationError(
            f"{where}.name: {tool.name!r} is not a name Mistral takes (letters, digits, _ and -, at most 64).",
            field=f"{where}.name",
        )
    if any(other.name == tool.name for other in request.tools[:index]):
        raise ConfigurationError(f"{where}.name: {tool.name!r} is declared twice.", field=f"{where}.name")
    schema: dict[str, object] = dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
    function: Json = {"name": tool.name, "parameters": schema}
    if tool.description is not None:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def _tool_choice(request: ActorRequest, body: Json) -> None:
    """The Messages API's `tool_choice` (`auto`, `any`, `tool` with a name, `none`) in Mistral's words."""
    choice = request.tool_choice
    if choice is None:
        return
    kind = choice.get("type")
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigurationError("tool_choice of type 'tool' must name the tool.", field="tool_choice.name")
        if all(tool.name != name for tool in request.tools):
            raise ConfigurationError(
                f"tool_choice.name: {name!r} is not among the request's tools.", field="tool_choice.name"
            )
        body["tool_choice"] = {"type": "function", "function": {"name": name}}
    elif isinstance(kind, str) and kind in _CHOICES:
        body["tool_choice"] = _CHOICES[kind]
    else:
        raise ConfigurationError(
            f"tool_choice type {kind!r} is not one of auto, any, tool, none.", field="tool_choice.type"
        )
    if choice.get("disable_parallel_tool_use") is True:
        body["parallel_tool_calls"] = False


def _messages(request: ActorRequest) -> list[Json]:
    messages: list[Json] = []
    for index, message in enumerate(request.messages):
        if isinstance(message.content, str):
            messages.append({"role": message.role, "content": message.content})
        elif message.role == "assistant":
            messages.append(_answer(pieces_of("assistant", message.content, index, rules=CONTENT)))
        else:
            messages.extend(_user(pieces_of("user", message.content, index, rules=CONTENT)))
    return messages


def _answer(pieces: Sequence[Piece]) -> Json:
    text = "".join(piece.text for piece in pieces if isinstance(piece, TextPart))
    calls = [
        {"id": piece.call_id, "type": "function", "function": {"name": piece.name, "arguments": piece.arguments}}
        for piece in pieces
        if isinstance(piece, ToolCall)
    ]
    if calls:
        return {"role": "assistant", "content": text, "tool_calls": calls}
    return {"role": "assistant", "content": text}


def _user(pieces: Sequence[Piece]) -> list[Json]:
    """A user turn: its tool results first, as `tool` messages (each must follow the call it answers), then the
    rest as one user message."""
    messages: list[Json] = [
        {"role": "tool", "tool_call_id": piece.call_id, "content": _tool_output(piece)}
        for piece in pieces
        if isinstance(piece, ToolResult)
    ]
    parts = [_part(piece) for piece in pieces if isinstance(piece, TextPart | ImagePart | FilePart)]
    if parts:
        messages.append({"role": "user", "content": parts})
    return messages


def _tool_output(piece: ToolResult) -> str:
    texts: list[str] = []
    for part in piece.parts:
        if not isinstance(part, TextPart):
            raise ConfigurationError(
                f"Mistral takes only text in a tool result ({piece.where}).", field=f"{piece.where}.content"
            )
        texts.append(part.text)
    return "".join(texts)


def _part(part: Part) -> Json:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        if part.url is None:
            raise ConfigurationError(
                f"Mistral takes images inline or by URL, not by file id ({part.where}).", field=f"{part.where}.source"
            )
        return {"type": "image_url", "image_url": {"url": part.url}}
    if part.url is None:
        raise ConfigurationError(
            f"Mistral's chat API reads documents by URL (document_url) only; send this one's text, or its URL "
            f"({part.where}).",
            field=f"{part.where}.source",
        )
    return {"type": "document_url", "document_url": part.url}


def _with_extra(request: ActorRequest, body: Json) -> Json:
    return providers.with_extra_params(body, request.extra_params, not_extra=_NOT_EXTRA)
