"""A request as a Converse body (`messages`, `system`, `inferenceConfig`, `toolConfig`, `additionalModelRequestFields`),
the one shape both modes send: live through bedrock-runtime's `converse`, batch as each record's `modelInput` of a
job created with `modelInvocationType: Converse`. Pure; what Converse would refuse is a `ConfigurationError` naming
the field, before anything is sent.

- the conversation: text; images inline (a base64 data URL) as `image` blocks and PDFs as `document` blocks, their
  bytes as base64 (boto3's blobs are bytes: `sdk_body` decodes them for a live call); `tool_use` as `toolUse`,
  `tool_result` as `toolResult`; earlier thinking left out; an image or file by URL or file id is refused;
- the system prompt as one `system` text block;
- tools as `toolSpec`s (`inputSchema.json`), `tool_choice` `auto`/`any`/`tool` as Converse's `toolChoice` (`none`:
  no tools sent);
- `response_model` as Converse's structured output, `outputConfig.textFormat` (`json_schema`: the model's schema as
  JSON text, made strict as for Claude's structured outputs, and its name), so that the answer's text is the JSON;
- `max_tokens`, `temperature`, `top_p`, `stop_sequences` in `inferenceConfig`; `top_k` and `thinking` in
  `additionalModelRequestFields` (as the model's own fields: Anthropic's names); `extra_params` merged at the top.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import cast

from pydantic import BaseModel

from lowtide import ActorRequest, ConfigurationError, ToolSpec
from lowtide.providers import FilePart, ImagePart, Part, TextPart, ToolCall, ToolResult, pieces_of, system_text
from lowtide.providers.bedrock.parameters import check_parameters
from lowtide.providers.bedrock.rules import CONTENT

__all__ = ["converse_body", "model_of", "sdk_body"]

_DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.DOTALL)
_IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
_EMPTY_SCHEMA: dict[str, object] = {"type": "object", "properties": {}}
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def model_of(body: Mapping[str, object]) -> str:
    model = body.get("modelId")
    return model if isinstance(model, str) else ""


def converse_body(request: ActorRequest) -> dict[str, object]:
    """`request` as a Converse body with its `modelId`, JSON all through (bytes as base64)."""
    check_parameters(request)
    inference: dict[str, object] = {"maxTokens": request.max_tokens}
    if request.temperature is not None:
        inference["temperature"] = request.temperature
    if request.top_p is not None:
        inference["topP"] = request.top_p
    if request.stop_sequences:
        inference["stopSequences"] = list(request.stop_sequences)
    body: dict[str, object] = {"modelId": request.model, "messages": _messages(request)}
    if request.system is not None:
        text = system_text(request.system, rules=CONTENT)
        if text:
            body["system"] = [{"text": text}]
    body["inferenceConfig"] = inference
    tools = _tool_config(request)
    if tools is not None:
        body["toolConfig"] = tools
    if request.response_model is not None:
        body["outputConfig"] = {"textFormat": _text_format(request.response_model)}
    additional: dict[str, object] = {}
    if request.top_k is not None:
        additional["top_k"] = request.top_k
    if request.thinking is not None:
        additional["thinking"] = dict(request.thinking)
    if additional:
        body["additionalModelRequestFields"] = additional
    for name, value in request.extra_params.items():
        body[name] = value
    return body


def sdk_body(body: Mapping[str, object]) -> dict[str, object]:
    """A stored Converse body as boto3's `converse` takes it: the blobs (`source.bytes`) as bytes."""
    return cast("dict[str, object]", _decoded(dict(body)))


def _decoded(value: object, parent: str = "") -> object:
    if isinstance(value, dict):
        fields = cast("dict[str, object]", value)
        return {key: _decoded(item, key) for key, item in fields.items()}
    if isinstance(value, list):
        return [_decoded(item, parent) for item in cast("list[object]", value)]
    if parent == "bytes" and isinstance(value, str):
        return base64.b64decode(value)
    return value


def _text_format(model: type[BaseModel]) -> dict[str, object]:
    # Imported here: the Anthropic SDK (1.1 s of CPU and 42 MiB) is wanted for a structured answer's schema alone.
    from anthropic import transform_schema

    schema = json.dumps(transform_schema(model), separators=(",", ":"))
    name = _SCHEMA_NAME.sub("_", model.__name__)[:64]
    return {"type": "json_schema", "structure": {"jsonSchema": {"schema": schema, "name": name}}}


def _tool_config(request: ActorRequest) -> dict[str, object] | None:
    choice = request.tool_choice or {}
    kind = choice.get("type")
    if not request.tools or kind == "none":
        return None
    config: dict[str, object] = {
        "tools": [{"toolSpec": _spec(tool, index)} for index, tool in enumerate(request.tools)]
    }
    if kind == "any":
        config["toolChoice"] = {"any": {}}
    elif kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str) or name not in {tool.name for tool in request.tools}:
            raise ConfigurationError(
                f"tool_choice names {name!r}, which is not among the request's tools.", field="tool_choice.name"
            )
        config["toolChoice"] = {"tool": {"name": name}}
    elif kind not in (None, "auto"):
        raise ConfigurationError(
            f"tool_choice type {kind!r} is not one of auto, any, tool, none.", field="tool_choice.type"
        )
    return config


def _spec(tool: ToolSpec, index: int) -> dict[str, object]:
    if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name):
        raise ConfigurationError(
            f"tools[{index}].name: {tool.name!r} is not a name Converse takes (letters, digits, _ and -, 64 at most).",
            field=f"tools[{index}].name",
        )
    kind = (tool.model_extra or {}).get("type")
    if kind not in (None, "custom"):
        raise ConfigurationError(
            f"Bedrock cannot take the tool {tool.name!r} of type {kind!r}: only function tools are sent.",
            field=f"tools[{index}].type",
        )
    spec: dict[str, object] = {
        "name": tool.name,
        "inputSchema": {"json": dict(tool.input_schema) if tool.input_schema is not None else dict(_EMPTY_SCHEMA)},
    }
    if tool.description:
        spec["description"] = tool.description
    return spec


def _messages(request: ActorRequest) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for index, message in enumerate(request.messages):
        if isinstance(message.content, str):
            messages.append({"role": message.role, "content": [{"text": message.content}]})
            continue
        content: list[dict[str, object]] = []
        for piece in pieces_of(message.role, message.content, index, rules=CONTENT):
            if isinstance(piece, ToolCall):
                content.append(
                    {"toolUse": {"toolUseId": piece.call_id, "name": piece.name, "input": json.loads(piece.arguments)}}
                )
            elif isinstance(piece, ToolResult):
                parts = [_part(part) for part in piece.parts]
                content.append({"toolResult": {"toolUseId": piece.call_id, "content": parts or [{"text": ""}]}})
            else:
                content.append(_part(piece))
        if content:
            messages.append({"role": message.role, "content": content})
    return messages


def _part(part: Part) -> dict[str, object]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    url = part.url if isinstance(part, ImagePart) else part.data_url
    matched = _DATA_URL.match(url or "")
    if matched is None:
        raise ConfigurationError(
            f"{part.where}: Bedrock takes images and documents inline (base64), not by URL or file id.",
            field=part.where,
        )
    media, data = matched.group("type"), matched.group("data")
    if isinstance(part, ImagePart):
        image_format = _IMAGE_FORMATS.get(media)
        if image_format is None:
            raise ConfigurationError(
                f"{part.where}: Bedrock takes png, jpeg, gif or webp images, not {media}.", field=part.where
            )
        return {"image": {"format": image_format, "source": {"bytes": data}}}
    assert isinstance(part, FilePart)
    name = re.sub(r"[^A-Za-z0-9 ()\[\]-]", " ", (part.filename or "document").rsplit(".", 1)[0])[:200].strip()
    return {"document": {"format": "pdf", "name": name or "document", "source": {"bytes": data}}}
