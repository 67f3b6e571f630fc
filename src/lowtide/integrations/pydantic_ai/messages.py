"""Pure mapping between pydantic-ai's messages and lowtide's neutral call: the history, instructions, tools and
output mode of a model request as `Actor.run` arguments, and an `ActorResponse` as a pydantic-ai `ModelResponse`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    DocumentUrl,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

from lowtide.integrations.schema import schema_model
from lowtide.integrations.turns import Block, Role, append_turn
from lowtide.types import ActorResponse, ThinkingContent, ToolUseContent
from lowtide.types import TextContent as LowtideText

__all__ = ["Call", "step_of", "to_call", "to_model_response"]


# lowtide's stop reasons (the Messages API's words) in pydantic-ai's, which are OpenTelemetry's.
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "refusal": "content_filter",
}


@dataclass
class Call:
    """The arguments of one `Actor.run` call (besides key and budget)."""

    messages: list[dict[str, Any]]
    system: str | None
    tools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    tool_choice: dict[str, Any] | None = None
    response_model: type[BaseModel] | None = None
    params: dict[str, Any] = field(default_factory=dict[str, Any])

    def arguments(self) -> dict[str, Any]:
        arguments: dict[str, Any] = {"messages": self.messages, **self.params}
        if self.system is not None:
            arguments["system"] = self.system
        if self.tools:
            arguments["tools"] = self.tools
        if self.tool_choice is not None:
            arguments["tool_choice"] = self.tool_choice
        return arguments


def step_of(messages: Sequence[ModelMessage]) -> int:
    """The step of an agent run this request is: one more than the answers already in its history."""
    return 1 + sum(isinstance(message, ModelResponse) for message in messages)


def to_call(
    messages: Sequence[ModelMessage],
    parameters: ModelRequestParameters,
    settings: ModelSettings,
    *,
    instructions: str | None,
    system: str,
) -> Call:
    """The call a model request stands for. `system` is the provider's name: only thinking it signed goes back."""
    prompts: list[str] = []
    turns: list[tuple[Role, list[Block]]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            blocks: list[Block] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    prompts.append(part.content)
                elif isinstance(part, UserPromptPart):
                    blocks.extend(_user_blocks(part))
                elif isinstance(part, ToolReturnPart):
                    blocks.append(_tool_result(part))
                else:
                    raise UserError(f"lowtide's model cannot send a {type(part).__name__} to the model.")
            append_turn(turns, "user", blocks)
        else:
            append_turn(turns, "assistant", _assistant_blocks(message.parts, system))
    if instructions:
        prompts.append(instructions)
    call = Call(
        messages=[{"role": role, "content": blocks} for role, blocks in turns],
        system="\n\n".join(prompt for prompt in prompts if prompt) or None,
        params=_settings_params(settings),
    )
    _add_tools_and_output(call, parameters, settings)
    return call


def _user_blocks(part: UserPromptPart) -> list[Block]:
    if isinstance(part.content, str):
        return [{"type": "text", "text": part.content}] if part.content else []
    blocks: list[Block] = []
    for item in part.content:
        if isinstance(item, str):
            if item:
                blocks.append({"type": "text", "text": item})
        elif isinstance(item, TextContent):
            blocks.append({"type": "text", "text": item.content})
        elif isinstance(item, CachePoint):
            continue  # lowtide leaves caching to the actor's `cache_control`
        elif isinstance(item, BinaryContent) and item.is_image:
            blocks.append({"type": "image", "source": _base64(item)})
        elif isinstance(item, BinaryContent) and item.media_type == "application/pdf":
            blocks.append({"type": "document", "source": _base64(item)})
        elif isinstance(item, ImageUrl):
            blocks.append({"type": "image", "source": {"type": "url", "url": item.url}})
        elif isinstance(item, DocumentUrl) and item.media_type == "application/pdf":
            blocks.append({"type": "document", "source": {"type": "url", "url": item.url}})
        else:
            raise UserError(f"lowtide's model cannot send {type(item).__name__} content to the model.")
    return blocks


def _base64(item: BinaryContent) -> Block:
    return {"type": "base64", "media_type": item.media_type, "data": item.base64}


def _tool_result(part: ToolReturnPart) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": part.model_response_str()}
    if part.outcome != "success":
        block["is_error"] = True
    return block


def _assistant_blocks(parts: Sequence[ModelResponsePart], system: str) -> list[Block]:
    blocks: list[Block] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.content:
                blocks.append({"type": "text", "text": part.content})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {"type": "tool_use", "id": part.tool_call_id, "name": part.tool_name, "input": part.args_as_dict()}
            )
        elif isinstance(part, ThinkingPart):
            # Only thinking this provider signed goes back to it; other thinking is the model's own notes, left out.
            if part.signature and part.provider_name == system:
                blocks.append({"type": "thinking", "thinking": part.content, "signature": part.signature})
        else:
            raise UserError(f"lowtide's model cannot send a {type(part).__name__} back to the model.")
    return blocks


def _tool(definition: ToolDefinition) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": definition.name, "input_schema": definition.parameters_json_schema}
    if definition.description:
        tool["description"] = definition.description
    return tool


def _add_tools_and_output(call: Call, parameters: ModelRequestParameters, settings: ModelSettings) -> None:
    tools = [*parameters.declared_function_tools, *parameters.output_tools]
    call.tools = [_tool(definition) for definition in tools]
    chosen = settings.get("tool_choice")
    if tools:
        if chosen == "none" and not parameters.output_tools:
            call.tool_choice = {"type": "none"}
        elif isinstance(chosen, list) and len(chosen) == 1:
            call.tool_choice = {"type": "tool", "name": chosen[0]}
        elif chosen == "required" or not parameters.allow_text_output:
            call.tool_choice = {"type": "any"}
        else:
            call.tool_choice = {"type": "auto"}
    if "parallel_tool_calls" in settings and call.tool_choice is not None and call.tool_choice["type"] != "none":
        call.tool_choice["disable_parallel_tool_use"] = not settings["parallel_tool_calls"]
    output = parameters.output_object
    if parameters.output_mode == "native" and output is not None:
        call.response_model = schema_model(output.name, dict(output.json_schema), output.description)


def _settings_params(settings: ModelSettings) -> dict[str, Any]:
    """The model settings lowtide sends; the others are the actor's to decide."""
    sent = ("max_tokens", "temperature", "top_p", "stop_sequences")
    return {name: value for name, value in settings.items() if name in sent}


def to_model_response(response: ActorResponse[object], *, system: str) -> ModelResponse:
    """An `ActorResponse` as pydantic-ai's `ModelResponse`, its usage priced (at batch rates when it came in a
    batch) and the batch and ids it came by in `provider_details`."""
    parts: list[ModelResponsePart] = []
    for block in response.content:
        if isinstance(block, LowtideText):
            parts.append(TextPart(block.text))
        elif isinstance(block, ToolUseContent):
            parts.append(ToolCallPart(block.name, dict(block.input), tool_call_id=block.id))
        elif isinstance(block, ThinkingContent):
            parts.append(ThinkingPart(block.thinking, signature=block.signature, provider_name=system))
    usage = response.usage
    details: dict[str, Any] = {
        "mode": response.mode.value,
        "batch_id": response.ids.batch_id,
        "custom_id": response.ids.custom_id,
        "stop_reason": response.stop_reason,
    }
    if response.cost is not None:
        details["live_equivalent_usd"] = response.cost.live_equivalent_usd
    return ModelResponse(
        parts=parts,
        usage=RequestUsage(
            input_tokens=usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
            cache_read_tokens=usage.cache_read_input_tokens,
            cache_write_tokens=usage.cache_creation_input_tokens,
            output_tokens=usage.output_tokens,
            cost=response.cost.total_usd if response.cost is not None else None,
        ),
        model_name=response.model,
        provider_name=system,
        provider_response_id=response.ids.message_id,
        provider_details={key: value for key, value in details.items() if value is not None},
        finish_reason=_FINISH.get(response.stop_reason or ""),
    )
