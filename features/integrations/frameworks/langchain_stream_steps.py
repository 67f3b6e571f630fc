"""Steps of `langchain_stream.feature`: LangChain's streaming interfaces over `LowtideChatModel`."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from typing import Any, Protocol

from _world import world
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_steps import lookup
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.integrations.langchain import LowtideChatModel
from lowtide.integrations.langchain.messages import to_arguments


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    model: LowtideChatModel
    chunks: list[AIMessageChunk]
    answer: AIMessage
    events: list[dict[str, Any]]
    script_actor: dict[str, Any]
    logged: list[logging.LogRecord]
    read_text: str


@given("a LangChain chat model over an actor that thinks in {mode} mode")
def step_thinking_model(context: Context, mode: str) -> None:
    w = world(context)
    thinking = {"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}
    context.model = LowtideChatModel(actor=w.new_actor(mode, max_tokens=4096, provider_options=thinking))
    w.cleanups.append(context.model.close)


@when('the model\'s answer to "{prompt}" is read with {how}')
def step_stream(context: Context, prompt: str, how: str) -> None:
    model = context.model
    if how == "invoke":
        context.answer = world(context).run(model.ainvoke(prompt))
        context.chunks = []
        return
    if how == "stream":
        chunks = list(model.stream(prompt))
    else:

        async def collect() -> list[Any]:
            return [chunk async for chunk in model.astream(prompt)]

        chunks = world(context).run(collect())
    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks), [type(chunk) for chunk in chunks]
    context.chunks = chunks
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    context.answer = total


@then('the answer\'s content is a signed reasoning block, then a text block quoting "{text}"')
def step_reasoning(context: Context, text: str) -> None:
    answer = context.answer
    assert isinstance(answer.content, list), answer.content
    kinds = [block["type"] for block in answer.content if isinstance(block, dict)]
    assert kinds == ["reasoning", "text"], answer.content
    reasoning, written = answer.content
    assert isinstance(reasoning, dict), answer.content
    assert isinstance(written, dict), answer.content
    assert text in reasoning["reasoning"], reasoning
    assert reasoning["extras"]["signature"], reasoning
    assert text in written["text"], answer.content
    assert text in answer.text, answer.content
    standard = [block["type"] for block in answer.content_blocks]
    assert standard[0] == "reasoning", answer.content_blocks
    assert "text" in standard, answer.content_blocks


@then("the answer's reasoning goes back, signed, as thinking when the conversation continues")
def step_reasoning_back(context: Context) -> None:
    answer = context.answer
    (reasoning,) = [block for block in answer.content if isinstance(block, dict) and block["type"] == "reasoning"]
    sent = to_arguments([HumanMessage("Where does the tide go?"), answer, HumanMessage("And then?")])
    assistant = sent["messages"][1]
    assert assistant["role"] == "assistant", sent
    thinking = {"type": "thinking", "thinking": reasoning["reasoning"], "signature": reasoning["extras"]["signature"]}
    assert assistant["content"][0] == thinking, assistant
    assert assistant["content"][1]["type"] == "text", assistant


@then('{count:d} AIMessageChunk came, the last, quoting "{text}"')
def step_chunks(context: Context, count: int, text: str) -> None:
    chunks = context.chunks
    assert len(chunks) == count, f"{len(chunks)} chunks: {chunks!r}"
    assert chunks[-1].chunk_position == "last", chunks[-1]
    assert text in chunks[-1].text, f"{chunks[-1].text!r} does not quote {text!r}"


@then('several AIMessageChunks came, the text before the last, adding up to an answer quoting "{text}"')
def step_several_chunks(context: Context, text: str) -> None:
    chunks = context.chunks
    assert len(chunks) > 2, f"{len(chunks)} chunks: {chunks!r}"
    assert chunks[-1].chunk_position == "last", chunks[-1]
    assert chunks[-1].text == "", chunks[-1]
    assert all(chunk.text for chunk in chunks[:-1]), chunks
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert text in total.text, f"{total.text!r} does not quote {text!r}"
    assert total.usage_metadata == chunks[-1].usage_metadata, total.usage_metadata


@then("the last chunk carries the answer's usage, its {mode} mode and its cost")
def step_chunk_usage(context: Context, mode: str) -> None:
    last = context.chunks[-1]
    usage = last.usage_metadata
    assert usage is not None, "the last chunk has no usage"
    assert usage["input_tokens"] > 0, usage
    assert usage["output_tokens"] > 0, usage
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"], usage
    assert last.response_metadata["mode"] == mode, last.response_metadata
    assert last.response_metadata["cost_usd"] > 0, last.response_metadata


@when('the model with a lookup tool streams its answer to "{prompt}"')
def step_stream_tool(context: Context, prompt: str) -> None:
    chain = context.model.bind_tools([lookup])

    async def collect() -> list[Any]:
        return [chunk async for chunk in chain.astream(prompt)]

    context.chunks = world(context).run(collect())


@then("the chunks added up call the lookup tool with arguments that are a JSON object")
def step_tool_chunks(context: Context) -> None:
    chunks = context.chunks
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk), total
    (piece,) = total.tool_call_chunks
    assert piece["name"] == "lookup", piece
    assert isinstance(json.loads(piece["args"] or ""), dict), piece
    (call,) = total.tool_calls
    assert call["name"] == "lookup", call
    assert call["id"] == piece["id"], call
    assert isinstance(call["args"], dict), call


@when('the model\'s events for "{prompt}" are read with astream_events')
def step_events(context: Context, prompt: str) -> None:
    model = context.model

    async def collect() -> list[dict[str, Any]]:
        return [dict(event) async for event in model.astream_events(prompt, version="v2")]

    context.events = world(context).run(asyncio.wait_for(collect(), 60.0))


@then('an on_chat_model_stream event carried a chunk quoting "{text}"')
def step_stream_event(context: Context, text: str) -> None:
    streamed = [e["data"]["chunk"] for e in context.events if e["event"] == "on_chat_model_stream"]
    assert streamed, f"no stream event: {[e['event'] for e in context.events]}"
    assert any(text in chunk.text for chunk in streamed), streamed


@then("the on_chat_model_end event's message is the same answer, with its usage")
def step_end_event(context: Context) -> None:
    (end,) = [e for e in context.events if e["event"] == "on_chat_model_end"]
    output = end["data"]["output"]
    assert isinstance(output, AIMessage), output
    streamed = [e["data"]["chunk"] for e in context.events if e["event"] == "on_chat_model_stream"]
    assert output.text == "".join(chunk.text for chunk in streamed), (output, streamed)
    assert output.usage_metadata is not None, output
    assert output.usage_metadata["output_tokens"] > 0, output


@then(
    'its standard parameters for a call with stop "{stop}" are provider "{provider}", model "{model}", '
    'type "{kind}", max tokens {max_tokens:d}, stop "{stop_again}"'
)
def step_ls_params(
    context: Context, stop: str, provider: str, model: str, kind: str, max_tokens: int, stop_again: str
) -> None:
    params = context.model._get_ls_params(stop=[stop])  # pyright: ignore[reportPrivateUsage]: LangSmith's hook
    expected = {
        "ls_provider": provider,
        "ls_model_name": model,
        "ls_model_type": kind,
        "ls_max_tokens": max_tokens,
        "ls_stop": [stop_again],
    }
    assert dict(params) == expected, params


_SCRIPT_KEYS = {
    "openai": ("OPENAI_API_KEY", "sk-emulator-key"),
    "anthropic": ("ANTHROPIC_API_KEY", "sk-ant-emulator-key"),
}
_SCRIPT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-5-5"}


@given("a script's LangChain chat model over its own {provider} actor in live mode, on the emulator's loopback socket")
def step_script_model(context: Context, provider: str) -> None:
    w = world(context)
    url = w.served_url()
    w.set_env(*_SCRIPT_KEYS[provider])
    context.script_actor = {
        "name": f"script-{provider}",
        "provider": provider,
        "model": _SCRIPT_MODELS[provider],
        "max_tokens": 1024,
        "batch_processing": "live",
        "base_url": f"{url}/v1" if provider == "openai" else url,
    }


class _Logged(logging.Handler):
    """Every record at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _read(settings: dict[str, Any], prompt: str, how: str) -> str:
    """The answer's text, read as a script would, its model and actor made here and dropped unclosed on return."""
    model = LowtideChatModel(actor=Actor(settings))
    if how == "stream":
        return "".join(chunk.text for chunk in model.stream(prompt))
    if how == "stream_events v3":
        stream = model.stream_events(prompt, version="v3")
        list(stream)
        return stream.output.text
    assert how == "astream in asyncio.run", how

    async def streamed() -> str:
        return "".join([chunk.text async for chunk in model.astream(prompt)])

    return asyncio.run(asyncio.wait_for(streamed(), 60.0))


@when('a script reads the answer to "{prompt}" with {how}, drops model and actor unclosed, then runs a loop of its own')
def step_dropped_unclosed(context: Context, prompt: str, how: str) -> None:
    logged = _Logged()
    root = logging.getLogger()
    root.addHandler(logged)
    try:
        context.read_text = _read(context.script_actor, prompt, how)

        async def later() -> None:
            gc.collect()  # what the script dropped goes now, in this loop, as it may in any program
            await asyncio.sleep(0.1)  # a closing task started by a client collected unclosed would have run

        asyncio.run(later())
        gc.collect()
    finally:
        root.removeHandler(logged)
    context.logged = logged.records


@then('the answer read quoted "{text}"')
def step_read_quoted(context: Context, text: str) -> None:
    assert text in context.read_text, context.read_text


@then("nothing was logged at WARNING or above, nor a task destroyed while pending, nor an unretrieved exception")
def step_nothing_left_logged(context: Context) -> None:
    said = [f"{record.name}: {record.getMessage()}" for record in context.logged]
    assert not said, f"logged: {said}"


@when('a script invokes the model with "{first}", drops it for a copy of it, then invokes the copy with "{second}"')
def step_copy_after_drop(context: Context, first: str, second: str) -> None:
    model = LowtideChatModel(actor=Actor(context.script_actor))
    assert first in model.invoke(first).text
    copy = model.model_copy()
    del model
    gc.collect()  # the original goes: its loop, which the copy was made sharing, is closed with it
    try:
        context.read_text = copy.invoke(second).text
    finally:
        copy.close()
