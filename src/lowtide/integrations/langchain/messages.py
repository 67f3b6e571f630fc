"""Pure mapping between LangChain's chat messages and lowtide's neutral call: messages, bound tools and tool choice
as `Actor.run` arguments, and an `ActorResponse` as an `AIMessage` (or, streamed, as one `AIMessageChunk`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.ai import InputTokenDetails, UsageMetadata
from langchain_core.messages.tool import tool_call, tool_call_chunk

from lowtide.integrations.turns import Block, Role, append_turn
from lowtide.streaming import TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorResponse, TextContent, ThinkingContent, ToolUseContent

__all__ = [
    "last_chunk",
    "piece_chunk",
    "reasoning_block",
    "to_ai_chunk",
    "to_ai_message",
    "to_arguments",
    "tool_choice_of",
    "tool_spec",
]


def to_arguments(
    messages: Sequence[BaseMessage],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: object = None,
    stop: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The `Actor.run` arguments for a chat model call. `tools` are OpenAI-style function tools, as
    `convert_to_openai_tool` makes them (what `bind_tools` binds)."""
    system: list[str] = []
    turns: list[tuple[Role, list[Block]]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.extend(block["text"] for block in _blocks(message.content))
        elif isinstance(message, HumanMessage):
            append_turn(turns, "user", _blocks(message.content))
        elif isinstance(message, ToolMessage):
            append_turn(turns, "user", [_tool_result(message)])
        elif isinstance(message, AIMessage):
            append_turn(turns, "assistant", _assistant_blocks(message))
        else:
            raise ValueError(f"lowtide's chat model cannot send a {type(message).__name__} to the model.")
    arguments: dict[str, Any] = {"messages": [{"role": role, "content": blocks} for role, blocks in turns]}
    if system:
        arguments["system"] = "\n\n".join(system)
    if tools:
        arguments["tools"] = [tool_spec(tool) for tool in tools]
        choice = tool_choice_of(tool_choice)
        if choice is not None:
            arguments["tool_choice"] = choice
    if stop:
        arguments["stop_sequences"] = list(stop)
    return arguments


def _blocks(content: str | list[str | dict[Any, Any]]) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[Block] = []
    for item in content:
        if isinstance(item, str):
            if item:
                blocks.append({"type": "text", "text": item})
            continue
        kind = item.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(item["text"])})
        elif kind == "image_url":
            url = item["image_url"]["url"] if isinstance(item.get("image_url"), dict) else str(item.get("image_url"))
            blocks.append({"type": "image", "source": _image_source(str(url))})
        elif kind == "image" and "base64" in item:
            source = {"type": "base64", "media_type": item.get("mime_type"), "data": item["base64"]}
            blocks.append({"type": "image", "source": source})
        elif kind == "image" and "url" in item:
            blocks.append({"type": "image", "source": {"type": "url", "url": item["url"]}})
        else:
            raise ValueError(f"lowtide's chat model cannot send a {kind!r} content block to the model.")
    return blocks


def _image_source(url: str) -> Block:
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:") :].split(";base64,", 1)
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}


def _tool_result(message: ToolMessage) -> Block:
    content = message.content
    text = content if isinstance(content, str) else "\n".join(block["text"] for block in _blocks(content))
    block: Block = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": text}
    if message.status == "error":
        block["is_error"] = True
    return block


def _assistant_blocks(message: AIMessage) -> list[Block]:
    blocks = _thinking_blocks(message.content) + _text_blocks(message.content)
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["args"]})
    return blocks


def _text_blocks(content: str | list[str | dict[Any, Any]]) -> list[Block]:
    """The text of an assistant turn (its tool calls travel in `tool_calls`, whatever blocks repeat them)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    texts = [item for item in content if isinstance(item, str)] + [
        str(item["text"]) for item in content if isinstance(item, dict) and item.get("type") == "text"
    ]
    return [{"type": "text", "text": text} for text in texts if text]


def _thinking_blocks(content: str | list[str | dict[Any, Any]]) -> list[Block]:
    """The signed reasoning of an assistant turn, as thinking that goes back to the model (a provider that signs its
    thinking needs it back beside its tool calls); unsigned reasoning is the model's own notes, left out."""
    if isinstance(content, str):
        return []
    blocks: list[Block] = []
    for item in content:
        if not isinstance(item, dict) or item.get("type") != "reasoning":
            continue
        extras: object = item.get("extras")
        signature = cast("dict[str, object]", extras).get("signature") if isinstance(extras, dict) else None
        if isinstance(signature, str) and signature:
            blocks.append({"type": "thinking", "thinking": str(item.get("reasoning", "")), "signature": signature})
    return blocks


def reasoning_block(thinking: str, signature: str | None = None, index: int | None = None) -> dict[str, Any]:
    """Thinking as LangChain's standard reasoning content block (`{"type": "reasoning", "reasoning": ...}`), its
    signature in `extras`, and, streamed, the `index` LangChain merges a block's pieces by."""
    block: dict[str, Any] = {"type": "reasoning", "reasoning": thinking}
    if signature:
        block["extras"] = {"signature": signature}
    if index is not None:
        block["index"] = index
    return block


def tool_spec(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-style function tool as lowtide's `ToolSpec` fields; a tool already in that shape is kept."""
    function = tool.get("function")
    if not isinstance(function, Mapping):
        return dict(tool)
    described = cast("Mapping[str, Any]", function)
    parameters: dict[str, Any] = dict(described.get("parameters") or {"type": "object", "properties": {}})
    spec: dict[str, Any] = {"name": described["name"], "input_schema": parameters}
    if described.get("description"):
        spec["description"] = described["description"]
    return spec


def tool_choice_of(choice: object) -> dict[str, Any] | None:
    """LangChain's `tool_choice` (`"auto"`, `"any"`/`"required"`/`True`, `"none"`, a tool's name, or an
    OpenAI-style `{"type": "function", "function": {"name": ...}}`) in lowtide's terms."""
    if choice is None or choice is False or choice == "auto":
        return None if choice is None else {"type": "auto"}
    if choice is True or choice in ("any", "required"):
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, str):
        return {"type": "tool", "name": choice}
    if isinstance(choice, Mapping):
        function = cast("Mapping[str, Any]", choice).get("function")
        if isinstance(function, Mapping) and "name" in function:
            return {"type": "tool", "name": str(cast("Mapping[str, Any]", function)["name"])}
    raise ValueError(f"lowtide's chat model does not understand tool_choice={choice!r}.")


def to_ai_message(response: ActorResponse[object]) -> AIMessage:
    """An `ActorResponse` as LangChain's `AIMessage`: text, tool calls, usage, and lowtide's facts (mode, batch,
    cost) in `response_metadata`. An answer with thinking has LangChain's standard (v1) content blocks as content:
    its thinking as reasoning blocks, its text, its tool calls (`message.text` is the text either way)."""
    text = "".join(block.text for block in response.content if isinstance(block, TextContent))
    calls = [
        tool_call(name=block.name, args=dict(block.input), id=block.id)
        for block in response.content
        if isinstance(block, ToolUseContent)
    ]
    reasoning = [
        reasoning_block(block.thinking, block.signature)
        for block in response.content
        if isinstance(block, ThinkingContent)
    ]
    content: str | list[str | dict[Any, Any]] = text
    if reasoning:
        standard = [
            {"type": "tool_call", "name": call["name"], "args": call["args"], "id": call["id"]} for call in calls
        ]
        content = [*reasoning, *([{"type": "text", "text": text}] if text else []), *standard]
    usage = response.usage
    input_tokens = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    metadata: dict[str, Any] = {
        "model_name": response.model,
        # Not `model_provider`: LangChain reads that as "content in this provider's LangChain package's format" and
        # translates by it (an Anthropic translator finds no `tool_use` block and drops the tool calls); lowtide's
        # content is LangChain's own (text, `tool_calls`, standard blocks), read as it is.
        "provider": response.provider,
        "stop_reason": response.stop_reason,
        "mode": response.mode.value,
        "batch_id": response.ids.batch_id,
        "custom_id": response.ids.custom_id,
    }
    if reasoning:
        metadata["output_version"] = "v1"  # content is standard blocks, read as they are by `content_blocks`
    if response.cost is not None:
        metadata["cost_usd"] = response.cost.total_usd
        metadata["live_equivalent_usd"] = response.cost.live_equivalent_usd
    return AIMessage(
        content=content,
        tool_calls=calls,
        id=response.ids.message_id,
        usage_metadata=UsageMetadata(
            input_tokens=input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=input_tokens + usage.output_tokens,
            input_token_details=InputTokenDetails(
                cache_read=usage.cache_read_input_tokens, cache_creation=usage.cache_creation_input_tokens
            ),
        ),
        response_metadata={key: value for key, value in metadata.items() if value is not None},
    )


def to_ai_chunk(message: AIMessage) -> AIMessageChunk:
    """A finished `AIMessage` as the one, last chunk of a stream: its text, its tool calls as chunks (arguments as
    JSON, as a provider streams them), its usage and metadata, so that the chunks added up give the message back."""
    return AIMessageChunk(
        content=message.content,
        id=message.id,
        tool_call_chunks=[
            tool_call_chunk(name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index)
            for index, call in enumerate(message.tool_calls)
        ],
        usage_metadata=message.usage_metadata,
        response_metadata=message.response_metadata,
        chunk_position="last",
    )


def piece_chunk(piece: TextDelta | ThinkingDelta | ToolCallDelta, position: int | None = None) -> AIMessageChunk:
    """A piece of a live answer as it arrives: its thinking (a reasoning block), its text, or its piece of a tool call
    (the first naming the call). `position` is the content block the piece belongs to, once the answer's content is
    a list of blocks (after thinking); before, text is a plain string."""
    if isinstance(piece, ThinkingDelta):
        return AIMessageChunk(content=[reasoning_block(piece.text, piece.signature, position)])
    if isinstance(piece, TextDelta):
        if position is None:
            return AIMessageChunk(content=piece.text)
        return AIMessageChunk(content=[{"type": "text", "text": piece.text, "index": position}])
    chunk = tool_call_chunk(name=piece.name, args=piece.arguments, id=piece.id, index=piece.index)
    content: str | list[str | dict[Any, Any]] = "" if position is None else [{**chunk, "index": position}]
    return AIMessageChunk(content=content, tool_call_chunks=[chunk])


def last_chunk(message: AIMessage) -> AIMessageChunk:
    """The last chunk of a streamed answer whose text and tool calls came in pieces: its id, usage and metadata."""
    return AIMessageChunk(
        content="",
        id=message.id,
        usage_metadata=message.usage_metadata,
        response_metadata=message.response_metadata,
        chunk_position="last",
    )
