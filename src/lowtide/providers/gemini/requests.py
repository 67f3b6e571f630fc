"""A request as the arguments of google-genai's `generate_content`: the model, the contents and the config, in the
SDK's own typed dicts (so that pyright checks every shape). Pure; what Gemini would refuse is a `ConfigurationError`
naming the field, before anything is sent.

- the conversation: roles `user` and `model`; text; images and PDFs inline (base64) as `inline_data`, by URL or
  by uploaded file as `file_data` (`media.py`);
  `tool_use` of an assistant turn as a `function_call`, `tool_result` as a `function_response` named by the call it
  answers (Gemini names a response by its function, so the call must be in the conversation); earlier thinking
  is left out;
- the system prompt as `system_instruction`;
- tools as function declarations (`parameters_json_schema`), `tool_choice` `auto`/`any`/`tool`/`none` as the
  function-calling modes `AUTO`/`ANY`/`ANY` with the one name allowed/`NONE`;
- `max_tokens`, `temperature`, `top_p`, `top_k` and `stop_sequences` in the generation config, checked against
  Gemini's ranges (`parameters.check_parameters`); `response_model` as JSON output of its JSON schema;
- `provider_options.gemini` thinking settings as `thinking_config`; `extra_params` as further body fields.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import cast

from google.genai import types

from lowtide import ActorRequest, ConfigurationError, ToolSpec
from lowtide.providers import Part, TextPart, ToolCall, ToolResult, pieces_of, system_text
from lowtide.providers.gemini.media import media_part
from lowtide.providers.gemini.parameters import check_parameters
from lowtide.providers.gemini.rules import CONTENT

__all__ = ["SYNTHETIC_CALL_ID", "Encoded", "encode_request"]

SYNTHETIC_CALL_ID = "gemini-call-"
"""The start of the id lowtide gives a function call Gemini sent without one; never sent back to the API."""
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
_EMPTY_SCHEMA: dict[str, object] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class Encoded:
    """`generate_content`'s arguments for one request."""

    model: str
    contents: list[types.ContentDict]
    config: types.GenerateContentConfigDict

    def body(self) -> dict[str, object]:
        """The arguments as one JSON-able object, inline data in base64 as the SDK sends it (for measuring a
        request, and for tests to read)."""
        return {"model": self.model, "contents": _sent(self.contents), "config": self.config}


def _sent(value: object) -> object:
    """`value` with its bytes as the base64 text that carries them."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, list):
        return [_sent(item) for item in cast("list[object]", value)]
    if isinstance(value, dict):
        return {key: _sent(item) for key, item in cast("dict[str, object]", value).items()}
    return value


def encode_request(request: ActorRequest) -> Encoded:
    """`request` as `generate_content`'s arguments, or the `ConfigurationError` naming what Gemini would refuse."""
    options = check_parameters(request)
    config: types.GenerateContentConfigDict = {"max_output_tokens": request.max_tokens}
    if request.system is not None:
        text = system_text(request.system, rules=CONTENT)
        if text:
            config["system_instruction"] = {"parts": [{"text": text}]}
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["top_p"] = request.top_p
    if request.top_k is not None:
        config["top_k"] = request.top_k
    if request.stop_sequences:
        config["stop_sequences"] = list(request.stop_sequences)
    if request.tools:
        config["tools"] = [{"function_declarations": _declarations(request.tools)}]
    _tool_choice(request, config)
    if request.response_model is not None:
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = request.response_model.model_json_schema()
    if options.thinking_budget is not None or options.include_thoughts is not None:
        thinking: types.ThinkingConfigDict = {}
        if options.thinking_budget is not None:
            thinking["thinking_budget"] = options.thinking_budget
        if options.include_thoughts is not None:
            thinking["include_thoughts"] = options.include_thoughts
        config["thinking_config"] = thinking
    if request.extra_params or options.api_version is not None:
        http: types.HttpOptionsDict = {}
        if request.extra_params:
            http["extra_body"] = dict(request.extra_params)
        if options.api_version is not None:
            http["api_version"] = options.api_version
        config["http_options"] = http
    # Gemini's SDK does not call functions itself unless told to; lowtide hands tool calls to its caller.
    config["automatic_function_calling"] = {"disable": True}
    return Encoded(model=request.model, contents=_contents(request), config=config)


# Tools.


def _declarations(tools: list[ToolSpec]) -> list[types.FunctionDeclarationDict]:
    declarations: list[types.FunctionDeclarationDict] = []
    for index, tool in enumerate(tools):
        if any(earlier.name == tool.name for earlier in tools[:index]):
            raise ConfigurationError(
                f"tools[{index}].name: {tool.name!r} is declared twice; Gemini wants each function once.",
                field=f"tools[{index}].name",
            )
        declarations.append(_declaration(tool, index))
    return declarations


def _declaration(tool: ToolSpec, index: int) -> types.FunctionDeclarationDict:
    if not _TOOL_NAME.match(tool.name):
        raise ConfigurationError(
            f"tools[{index}].name: {tool.name!r} is not a name Gemini takes: a letter or underscore, then letters, "
            "digits, underscores, dots, colons or dashes, 64 characters at most.",
            field=f"tools[{index}].name",
        )
    kind = (tool.model_extra or {}).get("type")
    if kind not in (None, "custom"):
        raise ConfigurationError(
            f"Gemini cannot take the tool {tool.name!r} of type {kind!r}: only function tools are sent.",
            field=f"tools[{index}].type",
        )
    declaration: types.FunctionDeclarationDict = {
        "name": tool.name,
        "parameters_json_schema": dict(tool.input_schema) if tool.input_schema is not None else dict(_EMPTY_SCHEMA),
    }
    if tool.description is not None:
        declaration["description"] = tool.description
    return declaration


_MODES = {
    "auto": types.FunctionCallingConfigMode.AUTO,
    "any": types.FunctionCallingConfigMode.ANY,
    "none": types.FunctionCallingConfigMode.NONE,
}


def _tool_choice(request: ActorRequest, config: types.GenerateContentConfigDict) -> None:
    """The Messages API's `tool_choice` as Gemini's function-calling config; `disable_parallel_tool_use` has no
    counterpart in Gemini and is not sent."""
    choice = request.tool_choice
    if choice is None:
        return
    kind = choice.get("type")
    name = choice.get("name")
    calling: types.FunctionCallingConfigDict
    if kind == "tool":
        if not isinstance(name, str) or not name:
            raise ConfigurationError("tool_choice of type 'tool' must name the tool.", field="tool_choice.name")
        if name not in {tool.name for tool in request.tools}:
            raise ConfigurationError(
                f"tool_choice names {name!r}, which is not among the request's tools.", field="tool_choice.name"
            )
        calling = {"mode": types.FunctionCallingConfigMode.ANY, "allowed_function_names": [name]}
    elif isinstance(kind, str) and kind in _MODES:
        calling = {"mode": _MODES[kind]}
    else:
        raise ConfigurationError(
            f"tool_choice type {kind!r} is not one of auto, any, tool, none.", field="tool_choice.type"
        )
    config["tool_config"] = {"function_calling_config": calling}


# The conversation.


def _contents(request: ActorRequest) -> list[types.ContentDict]:
    contents: list[types.ContentDict] = []
    names: dict[str, str] = {}
    """The function each call id of the conversation called: a function response is named by it."""
    for index, message in enumerate(request.messages):
        role = "model" if message.role == "assistant" else "user"
        if isinstance(message.content, str):
            contents.append({"role": role, "parts": [{"text": message.content}]})
            continue
        parts: list[types.PartDict] = []
        for piece in pieces_of(message.role, message.content, index, rules=CONTENT):
            if isinstance(piece, ToolCall):
                names[piece.call_id] = piece.name
                parts.append({"function_call": _function_call(piece)})
            elif isinstance(piece, ToolResult):
                parts.append({"function_response": _function_response(piece, names)})
            else:
                parts.append(_part(piece))
        if parts:
            contents.append({"role": role, "parts": parts})
    return contents


def _function_call(piece: ToolCall) -> types.FunctionCallDict:
    call: types.FunctionCallDict = {"name": piece.name, "args": json.loads(piece.arguments)}
    if not piece.call_id.startswith(SYNTHETIC_CALL_ID):
        call["id"] = piece.call_id
    return call


def _function_response(piece: ToolResult, names: dict[str, str]) -> types.FunctionResponseDict:
    name = names.get(piece.call_id)
    if name is None:
        raise ConfigurationError(
            f"{piece.where}.tool_use_id: {piece.call_id!r} answers no tool call of the conversation; Gemini names a "
            "function's response by the function, so the call must come before it.",
            field=f"{piece.where}.tool_use_id",
        )
    texts: list[str] = []
    for part in piece.parts:
        if not isinstance(part, TextPart):
            raise ConfigurationError(
                f"Gemini takes only text in a tool result ({piece.where}).", field=f"{piece.where}.content"
            )
        texts.append(part.text)
    response: types.FunctionResponseDict = {"name": name, "response": {"output": "".join(texts)}}
    if not piece.call_id.startswith(SYNTHETIC_CALL_ID):
        response["id"] = piece.call_id
    return response


def _part(part: Part) -> types.PartDict:
    if isinstance(part, TextPart):
        return {"text": part.text}
    return media_part(part)
