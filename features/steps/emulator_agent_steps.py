"""Steps of features/emulator_agents.feature: token counting and beta parameters, through the real SDK.

The scenario's emulator and client are those `emulator_steps` sets up ("Given the emulator runs on a manual
clock"), kept on `context.emulator_scenario`; the Then steps about failed calls and results are that module's too.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any, Protocol

import anthropic
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import then, when

from lowtide.emulator.core.pdf import simple_pdf


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    beta_count: Any
    token_count: int | None


MODEL = "claude-sonnet-4-5"
CLEAR_TOOL_USES = {"edits": [{"type": "clear_tool_uses_20250919"}]}
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"


def emulator(context: Context) -> Any:
    """The emulator scenario of `emulator_steps` (a `Scenario`): emulator, SDK client, last reply and error."""
    s = getattr(context, "emulator_scenario", None)
    assert s is not None, "start the emulator first: 'Given the emulator runs on a manual clock'"
    return s


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x00" * 3 * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _params(text: str | list[Any] = "Hello", **changes: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 4096, "messages": [{"role": "user", "content": text}], **changes}


def _tool(name: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]}
    return {"name": name, "description": f"The {name} of a station.", "input_schema": schema}


def _named_request(name: str) -> dict[str, Any]:
    """The Messages params a scenario names."""
    if name.startswith('"'):
        return _params(json.loads(name))
    if name == "with a system prompt and two tools":
        return _params("Tide at Brest?", system="You know tides.", tools=[_tool("tide"), _tool("height")])
    if name == "with an image, a PDF and a text document":
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _b64(_png(300, 200))}}
        pdf = {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": _b64(simple_pdf(["Tide tables."]))},
        }
        text = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Low at noon."}}
        return _params([image, pdf, text, {"type": "text", "text": "Compare them."}])
    if name.startswith("with a ") and name.endswith("-character cached system prompt"):
        size = int(name.removeprefix("with a ").split("-")[0])
        return _params(system=[{"type": "text", "text": "x" * size, "cache_control": {"type": "ephemeral"}}])
    assert name == "with thinking and a tool result", name
    turns = [
        {"role": "user", "content": "Tide at Brest?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "tide", "input": {"station": "B"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "High at 14:02."}]},
    ]
    thinking = {"type": "enabled", "budget_tokens": 2048}
    return {**_params(), "messages": turns, "tools": [_tool("tide")], "thinking": thinking}


def _without_output_settings(params: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in params.items() if key != "max_tokens"}


def _betas(text: str) -> list[str]:
    return [beta.strip() for beta in text.split(",") if beta.strip()]


def _changed(change: str, *, counting: bool = False) -> dict[str, Any]:
    """The usual params (for counting, without max_tokens) with top-level keys replaced; null removes a key."""
    params = _without_output_settings(_params()) if counting else _params()
    for key, value in json.loads(change).items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return params


# -- count_tokens ----------------------------------------------------------------------------------------------------


@when("I count the tokens of the emulator message {request}")
def step_count_named(context: Context, request: str) -> None:
    s = emulator(context)
    s.params = _named_request(request)
    counted = s.run(lambda: s.sdk.messages.count_tokens(**_without_output_settings(s.params)))
    assert s.error is None, s.error
    context.token_count = counted.input_tokens


@when("I count the tokens of an emulator request with the params changed by {change}")
def step_count_changed(context: Context, change: str) -> None:
    s = emulator(context)
    body = _changed(change, counting=True)
    counted = s.run(
        lambda: s.sdk.post("/v1/messages/count_tokens", cast_to=anthropic.types.MessageTokensCount, body=body)
    )
    context.token_count = counted.input_tokens if counted is not None else None


@when("I send the emulator the message whose tokens I counted")
def step_send_counted(context: Context) -> None:
    s = emulator(context)
    s.previous = s.reply
    s.reply = s.run(lambda: s.sdk.post("/v1/messages", cast_to=anthropic.types.Message, body=s.params))


@then("the emulator token count equals the input, cache writes and cache reads of the reply")
def step_count_matches(context: Context) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    usage = s.reply.usage
    billed = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    assert context.token_count == billed, (context.token_count, usage)
    assert billed > 0, usage


@then("the emulator reply read {tokens:d} tokens from the cache")
def step_cache_read(context: Context, tokens: int) -> None:
    usage = emulator(context).reply.usage
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (tokens, 0), usage


@then("the emulator counted {tokens:d} input tokens")
def step_counted_tokens(context: Context, tokens: int) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    assert context.token_count == tokens, context.token_count


# -- beta parameters -------------------------------------------------------------------------------------------------


@when('I send the emulator, with the betas "{betas}", a message with the params changed by {change}')
def step_message_with_betas(context: Context, betas: str, change: str) -> None:
    s = emulator(context)
    s.params = _changed(change)
    headers = {"anthropic-beta": betas} if betas else {}
    s.previous = s.reply
    s.reply = s.run(
        lambda: s.sdk.post("/v1/messages", cast_to=anthropic.types.Message, body=s.params, options={"headers": headers})
    )


@when('I send the emulator, with the betas "", a message with the params changed by {change}')
def step_message_without_betas(context: Context, change: str) -> None:
    step_message_with_betas(context, "", change)


@when("I send the emulator a beta message that clears old tool uses")
def step_beta_message(context: Context) -> None:
    s = emulator(context)
    s.reply = s.run(
        lambda: s.sdk.beta.messages.create(
            **_params("Tide at Brest?"), context_management=CLEAR_TOOL_USES, betas=[CONTEXT_MANAGEMENT_BETA]
        )
    )


@then("the emulator beta reply applied no context management edit")
def step_beta_reply(context: Context) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    assert s.reply.context_management is not None, s.reply
    assert s.reply.context_management.applied_edits == [], s.reply.context_management


@when("I count the tokens of the emulator beta message that clears old tool uses")
def step_beta_count(context: Context) -> None:
    s = emulator(context)
    params = _without_output_settings(_params("Tide at Brest?"))
    context.beta_count = s.run(
        lambda: s.sdk.beta.messages.count_tokens(
            **params, context_management=CLEAR_TOOL_USES, betas=[CONTEXT_MANAGEMENT_BETA]
        )
    )


@then("the emulator beta count's original input tokens equal its input tokens")
def step_beta_count_original(context: Context) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    counted = context.beta_count
    assert counted.context_management is not None, counted
    assert counted.context_management.original_input_tokens == counted.input_tokens > 0, counted


@when('I create an emulator batch of {count:d} requests that clear old tool uses, with the betas "{betas}"')
def step_batch_with_betas(context: Context, count: int, betas: str) -> None:
    s = emulator(context)
    requests = [
        {"custom_id": f"r{index}", "params": _params(f"Question {index}", context_management=CLEAR_TOOL_USES)}
        for index in range(count)
    ]
    batches = s.sdk.beta.messages.batches
    if betas:
        batch = s.run(lambda: batches.create(requests=requests, betas=_betas(betas)))
    else:
        batch = s.run(lambda: batches.create(requests=requests))
    assert batch is not None, s.error
    s.batch = batch
    s.batch_ids.append(batch.id)


@when('I create an emulator batch of {count:d} requests that clear old tool uses, with the betas ""')
def step_batch_without_betas(context: Context, count: int) -> None:
    step_batch_with_betas(context, count, "")


# -- JSON by instruction ---------------------------------------------------------------------------------------------


class TideReading(BaseModel):
    port: str
    height_m: float
    high: bool


READING_SCHEMA = json.dumps(TideReading.model_json_schema())


def _instruction(text: str) -> str:
    return text.replace("\\n", "\n").replace("SCHEMA", READING_SCHEMA)


@when('I ask the emulator for a tide reading, with the instruction in the {place}: "{instruction}"')
def step_instructed(context: Context, place: str, instruction: str) -> None:
    s = emulator(context)
    text = _instruction(instruction)
    params = _params(text) if place == "user turn" else _params("Where is the tide highest?", system=text)
    s.params = params
    s.previous = s.reply
    s.reply = s.run(lambda: s.sdk.post("/v1/messages", cast_to=anthropic.types.Message, body=params))


def _reading(message: Any) -> TideReading:
    assert [block.type for block in message.content] == ["text"], message.content
    return TideReading.model_validate_json(message.content[0].text)


@then("the emulator reply is one text block holding a valid tide reading")
def step_reading(context: Context) -> None:
    s = emulator(context)
    assert s.error is None, s.error
    _reading(s.reply)


@then("the emulator reply has the same JSON as before")
def step_same_json(context: Context) -> None:
    s = emulator(context)
    assert json.loads(s.reply.content[0].text) == json.loads(s.previous.content[0].text), (s.reply, s.previous)


@when("I create an emulator batch asking for a tide reading in JSON, with the schema in a fenced block")
def step_batch_instructed(context: Context) -> None:
    s = emulator(context)
    text = _instruction("Where is the tide highest? Answer in JSON valid against:\\n```json\\nSCHEMA\\n```")
    batch = s.run(lambda: s.sdk.messages.batches.create(requests=[{"custom_id": "reading", "params": _params(text)}]))
    assert batch is not None, s.error
    s.batch = batch
    s.batch_ids.append(batch.id)


@then('the emulator result "{custom_id}" holds a valid tide reading')
def step_result_reading(context: Context, custom_id: str) -> None:
    result = emulator(context).results[custom_id]
    assert result.type == "succeeded", result
    _reading(result.message)
