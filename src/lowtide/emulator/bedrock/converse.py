"""The emulated models behind bedrock-runtime's Converse (and batch inference's Converse records): a Converse body read
as a Messages request and answered by the emulator's deterministic answer generator (`lowtide.emulator.core.answers`:
the same quoting reply, schema instances for tool inputs and `outputConfig.textFormat`'s schema, the
`[[emulator:tool:NAME]]` and `[[emulator:errored:TYPE]]` markers every emulation has), in Converse's shape:
`output.message` (text and `toolUse` blocks, and a signed `reasoningContent` first when
`additionalModelRequestFields.thinking` asks for it), `stopReason`, `usage` (`inputTokens`, `outputTokens`,
`totalTokens`) and `metrics`. ConverseStream's events are the same answer in AWS's event-stream framing
(`stream_events`)."""

from __future__ import annotations

import binascii
import json
import math
import struct
from collections.abc import Iterator, Mapping
from typing import cast

from lowtide.emulator.bedrock.errors import AwsError, validation
from lowtide.emulator.core.answers import answer
from lowtide.emulator.core.errors import ERROR_STATUS
from lowtide.emulator.core.jsonutil import JsonObject, as_array, as_object
from lowtide.emulator.core.outcomes import find_marker

__all__ = ["MODELS", "converse", "known_model", "stream_events"]

MODELS = (
    "anthropic.claude-3-haiku-20240307-v1:0",
    "anthropic.claude-3-5-haiku-20241022-v1:0",
    "us.anthropic.claude-3-5-haiku-20241022-v1:0",
    "anthropic.claude-haiku-4-5-20251001-v1:0",
    "us.anthropic.claude-haiku-4-5-20251001-v1:0",
    "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "anthropic.claude-opus-4-1-20250805-v1:0",
    "us.anthropic.claude-opus-4-1-20250805-v1:0",
    "amazon.nova-micro-v1:0",
    "amazon.nova-lite-v1:0",
    "amazon.nova-pro-v1:0",
    "meta.llama3-1-8b-instruct-v1:0",
)
"""The model ids the emulated account may call (besides the emulator's `extra_models`)."""
_STOP = {"end_turn": "end_turn", "stop_sequence": "stop_sequence", "tool_use": "tool_use", "max_tokens": "max_tokens"}
_STREAM_PIECE = 48


def known_model(model_id: str, extra: tuple[str, ...]) -> bool:
    return model_id in MODELS or model_id in extra


def _blocks(content: object, where: str) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for index, item in enumerate(as_array(content) or []):
        block = as_object(item) or {}
        if isinstance(block.get("text"), str):
            blocks.append({"type": "text", "text": block["text"]})
        elif (use := as_object(block.get("toolUse"))) is not None:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": use.get("toolUseId"),
                    "name": use.get("name"),
                    "input": use.get("input") or {},
                }
            )
        elif (result := as_object(block.get("toolResult"))) is not None:
            texts = [
                str(part.get("text"))
                for part in map(as_object, as_array(result.get("content")) or [])
                if part is not None and isinstance(part.get("text"), str)
            ]
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": result.get("toolUseId"),
                    "content": [{"type": "text", "text": "".join(texts)}],
                }
            )
        elif "image" in block or "document" in block:
            blocks.append({"type": "text", "text": ""})
        else:
            raise validation(f"{where}.content.{index}: a content block of a type Converse does not know.")
    return blocks


def messages_params(body: JsonObject) -> JsonObject:
    """A Converse body as the Messages request the answer generator reads; `ValidationException` for what Converse
    refuses."""
    messages = as_array(body.get("messages"))
    if not messages:
        raise validation(
            "1 validation error detected: Value at 'messages' failed to satisfy constraint: Member must "
            "have length greater than or equal to 1"
        )
    converted: list[JsonObject] = []
    for index, item in enumerate(messages):
        message = as_object(item) or {}
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise validation(f"messages.{index}.role: must be user or assistant.")
        converted.append({"role": role, "content": _blocks(message.get("content"), f"messages.{index}")})
    if converted[0]["role"] != "user":
        raise validation(
            "A conversation must start with a user message. Try again with a conversation that starts "
            "with a user message."
        )
    config = as_object(body.get("inferenceConfig")) or {}
    max_tokens = config.get("maxTokens", 4096)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise validation("inferenceConfig.maxTokens: must be an integer of 1 or more.")
    params: JsonObject = {"messages": converted, "max_tokens": max_tokens}
    system = [str(part.get("text")) for part in map(as_object, as_array(body.get("system")) or []) if part]
    if system:
        params["system"] = "\n".join(system)
    stops = as_array(config.get("stopSequences"))
    if stops:
        params["stop_sequences"] = [str(stop) for stop in stops]
    tools = as_object(body.get("toolConfig"))
    if tools is not None:
        params["tools"] = [_tool(as_object(tool) or {}) for tool in as_array(tools.get("tools")) or []]
        choice = as_object(tools.get("toolChoice"))
        if choice is not None and "any" in choice:
            params["tool_choice"] = {"type": "any"}
        elif choice is not None and (named := as_object(choice.get("tool"))) is not None:
            params["tool_choice"] = {"type": "tool", "name": named.get("name")}
    thinking = as_object((as_object(body.get("additionalModelRequestFields")) or {}).get("thinking"))
    if thinking is not None:
        params["thinking"] = thinking
    schema = _output_schema(body)
    if schema is not None:
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    return params


def _output_schema(body: JsonObject) -> JsonObject | None:
    """The schema of `outputConfig.textFormat` (structured output: the answer's text an instance of it), if any."""
    text_format = as_object((as_object(body.get("outputConfig")) or {}).get("textFormat"))
    if text_format is None:
        return None
    if text_format.get("type") != "json_schema":
        raise validation("outputConfig.textFormat.type: must be json_schema.")
    definition = as_object((as_object(text_format.get("structure")) or {}).get("jsonSchema")) or {}
    try:
        schema = as_object(json.loads(str(definition.get("schema"))))
    except json.JSONDecodeError:
        schema = None
    if schema is None:
        raise validation("outputConfig.textFormat.structure.jsonSchema.schema: must be a JSON schema, as JSON text.")
    return schema


def _tool(tool: JsonObject) -> JsonObject:
    spec = as_object(tool.get("toolSpec")) or {}
    schema = as_object((as_object(spec.get("inputSchema")) or {}).get("json")) or {"type": "object"}
    return {"name": spec.get("name"), "description": spec.get("description", ""), "input_schema": schema}


def _input_tokens(body: JsonObject) -> int:
    sent = {name: body.get(name) for name in ("messages", "system", "toolConfig")}
    return max(1, math.ceil(len(json.dumps(sent, separators=(",", ":"))) / 4))


def converse(body: JsonObject, response_id: str) -> JsonObject:
    """The Converse answer to `body`; an `[[emulator:errored:TYPE]]` marker fails it with that type's status."""
    params = messages_params(body)
    marker = find_marker(params)
    if marker is not None and marker.kind == "errored":
        status = ERROR_STATUS[marker.error_type]
        raise AwsError(503 if status == 529 else status, None, marker.error_message)
    result = answer(params, response_id)
    content: list[JsonObject] = []
    for block in result.content:
        if block["type"] == "tool_use":
            content.append({"toolUse": {"toolUseId": block["id"], "name": block["name"], "input": block["input"]}})
        elif block["type"] == "thinking":
            reasoning = {"text": block["thinking"], "signature": block["signature"]}
            content.append({"reasoningContent": {"reasoningText": reasoning}})
        else:
            content.append({"text": str(block["text"])})
    prompt = _input_tokens(body)
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _STOP.get(result.stop_reason, "end_turn"),
        "usage": {
            "inputTokens": prompt,
            "outputTokens": result.output_tokens,
            "totalTokens": prompt + result.output_tokens,
        },
        "metrics": {"latencyMs": 1},
    }


def _header(name: str, value: str) -> bytes:
    encoded_name, encoded_value = name.encode(), value.encode()
    return (
        struct.pack("B", len(encoded_name))
        + encoded_name
        + b"\x07"
        + struct.pack(">H", len(encoded_value))
        + encoded_value
    )


def event_frame(event_type: str, payload: Mapping[str, object]) -> bytes:
    """One message of AWS's event stream: prelude (lengths and their CRC), headers, JSON payload, message CRC."""
    headers = (
        _header(":event-type", event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    body = json.dumps(payload, separators=(",", ":")).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + headers + body
    return message + struct.pack(">I", binascii.crc32(message) & 0xFFFFFFFF)


def _pieces(text: str) -> Iterator[str]:
    for start in range(0, max(len(text), 1), _STREAM_PIECE):
        yield text[start : start + _STREAM_PIECE]


def stream_events(response: JsonObject) -> Iterator[bytes]:
    """`response` as ConverseStream sends it: messageStart, each block's deltas (text in pieces, reasoning in pieces
    then its signature, a tool use's input as one JSON string) and its stop, messageStop with the stop reason, then
    metadata with the usage."""
    yield event_frame("messageStart", {"role": "assistant"})
    message = cast("JsonObject", response["output"]["message"])
    for index, block in enumerate(cast("list[JsonObject]", message["content"])):
        if "toolUse" in block:
            use = block["toolUse"]
            yield event_frame(
                "contentBlockStart",
                {
                    "contentBlockIndex": index,
                    "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}},
                },
            )
            yield event_frame(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"toolUse": {"input": json.dumps(use["input"])}}},
            )
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]["reasoningText"]
            for piece in _pieces(str(reasoning["text"])):
                yield event_frame(
                    "contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}}
                )
            yield event_frame(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": reasoning["signature"]}}},
            )
        else:
            for piece in _pieces(str(block["text"])):
                yield event_frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
        yield event_frame("contentBlockStop", {"contentBlockIndex": index})
    yield event_frame("messageStop", {"stopReason": response["stopReason"]})
    yield event_frame("metadata", {"usage": response["usage"], "metrics": response["metrics"]})
