"""Pure: a call's attributes in the OpenTelemetry GenAI conventions' names (`gen_ai.*`), and lowtide's own
(`lowtide.*`). Never a key or a credential; prompts and answers only in `content_attributes`, which the caller asks
for only when the conventions' opt-in says so."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import cast

from lowtide.core.json_types import json_objects
from lowtide.types import ActorResponse, ChatMessage

__all__ = [
    "OPERATION",
    "AttributeValue",
    "Attributes",
    "content_attributes",
    "error_type",
    "metric_attributes",
    "provider_attributes",
    "request_attributes",
    "response_attributes",
    "span_name",
]

OPERATION = "chat"
"""`gen_ai.operation.name`: every lowtide call is a chat completion (the Messages, Chat or Responses API)."""

AttributeValue = str | bool | int | float | Sequence[str]
Attributes = dict[str, AttributeValue]


def span_name(model: str) -> str:
    """`{gen_ai.operation.name} {gen_ai.request.model}`, as the conventions name an inference span."""
    return f"{OPERATION} {model}"


def request_attributes(
    *,
    provider: str,
    gen_ai_provider: str | None = None,
    model: str,
    mode: str,
    parameters: Mapping[str, object],
    key: str | None = None,
) -> Attributes:
    """What a call asks: its provider (`gen_ai.provider.name` in the conventions' value its provider gives,
    `gen_ai_provider`; `lowtide.provider` in lowtide's name), model and sampling parameters (those it sets), its mode
    and key."""
    attributes: Attributes = {
        "gen_ai.operation.name": OPERATION,
        **provider_attributes(provider, gen_ai_provider),
        "gen_ai.request.model": model,
        "lowtide.mode": mode,
    }
    for name, attribute in _REQUEST_PARAMETERS:
        value = parameters.get(name)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            attributes[attribute] = value
    stops = parameters.get("stop_sequences")
    if isinstance(stops, list) and stops:
        attributes["gen_ai.request.stop_sequences"] = [str(stop) for stop in cast("list[object]", stops)]
    if key is not None:
        attributes["lowtide.key"] = key
    return attributes


def provider_attributes(provider: str, gen_ai_provider: str | None) -> dict[str, str]:
    """A provider as the conventions name it (`gen_ai.provider.name`: its `telemetry_name()`, else lowtide's name) and
    as lowtide does (`lowtide.provider`, the registry's name): users filter by either."""
    return {"gen_ai.provider.name": gen_ai_provider or provider, "lowtide.provider": provider}


_REQUEST_PARAMETERS = (
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("top_k", "gen_ai.request.top_k"),
)


def response_attributes(response: ActorResponse[object]) -> Attributes:
    """What the answer says: model, id, finish reason, tokens; lowtide's batch, custom id and cost (at the mode's
    prices, and what the same call would have cost live)."""
    attributes: Attributes = {
        "gen_ai.response.model": response.model,
        "gen_ai.usage.input_tokens": _input_tokens(response),
        "gen_ai.usage.output_tokens": response.usage.output_tokens,
        "lowtide.mode": response.mode.value,
    }
    if response.stop_reason is not None:
        attributes["gen_ai.response.finish_reasons"] = [response.stop_reason]
    ids = response.ids
    if ids.message_id is not None:
        attributes["gen_ai.response.id"] = ids.message_id
    if ids.batch_id is not None:
        attributes["lowtide.batch.provider_id"] = ids.batch_id
    if ids.custom_id is not None:
        attributes["lowtide.custom_id"] = ids.custom_id
    cost = response.cost
    if cost is not None:
        attributes["lowtide.cost.usd"] = float(cost.total_usd)
        attributes["lowtide.cost.pricing"] = cost.pricing
        attributes["lowtide.cost.live_equivalent_usd"] = float(cost.live_equivalent_usd)
        attributes["lowtide.cost.savings_usd"] = float(savings(cost.total_usd, cost.live_equivalent_usd))
    return attributes


def savings(total: Decimal, live_equivalent: Decimal) -> Decimal:
    return max(live_equivalent - total, Decimal(0))


def _input_tokens(response: ActorResponse[object]) -> int:
    """Every input token, cached or not, as the conventions count `gen_ai.usage.input_tokens`."""
    usage = response.usage
    return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens


def error_type(error: BaseException) -> str:
    """`error.type`: the class of lowtide's error (`RateLimitError`, `BatchRequestExpired`, ...)."""
    return type(error).__name__


def metric_attributes(attributes: Mapping[str, AttributeValue]) -> dict[str, str]:
    """The attributes the conventions' metrics carry, from a span's."""
    return {name: str(attributes[name]) for name in _METRIC_ATTRIBUTES if name in attributes}


_METRIC_ATTRIBUTES = (
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "lowtide.mode",
    "lowtide.provider",
)


def content_attributes(
    messages: Sequence[ChatMessage | Mapping[str, object]] | None,
    system: object,
    prompt: str | None,
) -> Attributes:
    """The conversation sent, as `gen_ai.input.messages` and `gen_ai.system_instructions` (JSON, the conventions'
    parts). Only when `switch.capture_content()` says so."""
    attributes: Attributes = {}
    turns: list[dict[str, object]] = []
    if prompt is not None:
        turns.append({"role": "user", "parts": [{"type": "text", "content": prompt}]})
    for message in messages or ():
        role, content = (
            (message.role, message.content)
            if isinstance(message, ChatMessage)
            else (message.get("role"), message.get("content"))
        )
        turns.append({"role": role, "parts": _parts(content)})
    if turns:
        attributes["gen_ai.input.messages"] = json.dumps(turns, default=str)
    if isinstance(system, str) and system:
        attributes["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": system}])
    return attributes


def output_attributes(response: ActorResponse[object]) -> Attributes:
    """The answer, as `gen_ai.output.messages` (only when `switch.capture_content()` says so)."""
    message: dict[str, object] = {"role": "assistant", "parts": [{"type": "text", "content": response.text}]}
    if response.stop_reason is not None:
        message["finish_reason"] = response.stop_reason
    return {"gen_ai.output.messages": json.dumps([message])}


def _parts(content: object) -> list[dict[str, object]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, object]] = []
    for block in json_objects(content):
        kind = block.get("type")
        # Text as it is; any other block (an image, a document, a tool call) named by its type alone.
        parts.append({"type": "text", "content": block.get("text")} if kind == "text" else {"type": str(kind)})
    return parts
