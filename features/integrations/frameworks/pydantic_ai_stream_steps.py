"""Steps of `pydantic_ai_stream.feature`: pydantic-ai's streaming interfaces over `LowtideModel`, and an actor used
from more than one event loop."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterable
from typing import Any, Protocol

from _world import World, world
from pydantic_ai import Agent, AgentRunResultEvent, RunContext
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    ThinkingPart,
    ThinkingPartDelta,
)
from pydantic_ai_steps import Forecast
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.integrations.pydantic_ai import LowtideModel


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    agent: Agent[None, Any]
    deltas: list[str]
    streamed: list[Any]
    events: list[Any]
    final_output: Any
    logged: list[logging.LogRecord]
    loop_prompts: list[str]


@given("a plain agent over a live actor that thinks")
def step_thinking_agent(context: Context) -> None:
    thinking = {"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}
    context.agent = Agent(LowtideModel(world(context).new_actor("live", max_tokens=4096, provider_options=thinking)))


@when('the agent\'s stream of "{prompt}" is read event by event')
def step_stream_events(context: Context, prompt: str) -> None:
    w = world(context)

    async def read() -> list[Any]:
        events: list[Any] = []
        async with context.agent.iter(prompt) as run:
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as stream:
                        events += [event async for event in stream]
        w.results = [run.result]
        return events

    context.streamed = w.run(read())


def _answer(context: Context) -> ModelResponse:
    (result,) = world(context).results
    return next(message for message in result.all_messages() if isinstance(message, ModelResponse))


@then("a thinking part started before the text part, and its deltas joined are the answer's thinking")
def step_thinking_first(context: Context) -> None:
    events = context.streamed
    starts = [event.part for event in events if isinstance(event, PartStartEvent)]
    assert [type(part) for part in starts] == [ThinkingPart, TextPart], starts
    first = starts[0]
    assert isinstance(first, ThinkingPart), first
    thinking = first.content + "".join(
        event.delta.content_delta or ""
        for event in events
        if isinstance(event, PartDeltaEvent) and isinstance(event.delta, ThinkingPartDelta)
    )
    (answer_thinking,) = [part for part in _answer(context).parts if isinstance(part, ThinkingPart)]
    assert thinking, events
    assert thinking == answer_thinking.content, (thinking, answer_thinking.content)
    deltas = sum(isinstance(event, PartDeltaEvent) and isinstance(event.delta, ThinkingPartDelta) for event in events)
    assert deltas > 1, events


@then("the answer's thinking is signed by the actor's provider, so that it goes back to it on the next turn")
def step_thinking_signed(context: Context) -> None:
    (part,) = [part for part in _answer(context).parts if isinstance(part, ThinkingPart)]
    assert part.signature, part
    assert part.provider_name == _answer(context).provider_name, (part.provider_name, _answer(context).provider_name)


@when('the agent\'s answer to "{prompt}" is streamed as text deltas')
def step_stream_text(context: Context, prompt: str) -> None:
    w = world(context)

    async def stream() -> list[str]:
        async with context.agent.run_stream(prompt) as result:
            deltas = [delta async for delta in result.stream_text(delta=True, debounce_by=None)]
        w.results = [result]
        return deltas

    context.deltas = w.run(stream())


@then('the streamed text is the answer quoting "{text}", in {count}')
def step_streamed_text(context: Context, text: str, count: str) -> None:
    deltas = context.deltas
    if count == "1 delta":
        assert len(deltas) == 1, f"{len(deltas)} deltas: {deltas!r}"
    else:
        assert count == "several deltas", count
        assert len(deltas) > 2, f"{len(deltas)} deltas: {deltas!r}"
    assert text in "".join(deltas), f"the streamed text {''.join(deltas)!r} does not quote {text!r}"


@then("the streamed run's usage counts {count:d} request with its tokens and cost")
def step_streamed_usage(context: Context, count: int) -> None:
    (result,) = world(context).results
    usage = result.usage
    assert usage.requests == count, f"{usage.requests} requests"
    assert usage.input_tokens > 0, usage
    assert usage.output_tokens > 0, usage
    response = result.all_messages()[-1]
    assert response.usage.cost is not None, response.usage
    assert response.usage.cost > 0, response.usage


@when('the agent\'s output for "{prompt}" is streamed')
def step_stream_output(context: Context, prompt: str) -> None:
    w = world(context)

    async def stream() -> list[Any]:
        async with context.agent.run_stream(f"[[emulator:tool:weather]] {prompt}") as result:
            return [output async for output in result.stream_output()]

    context.streamed = w.run(stream())


@then("the last streamed output is a forecast")
def step_streamed_forecast(context: Context) -> None:
    assert context.streamed, "nothing was streamed"
    assert isinstance(context.streamed[-1], Forecast), f"the last output is {context.streamed[-1]!r}"


@when('the agent\'s events for "{prompt}" are read with {how}')
def step_events(context: Context, prompt: str, how: str) -> None:
    w = world(context)
    agent, text = context.agent, f"[[emulator:tool:weather]] {prompt}"
    events: list[Any] = []

    async def with_run_stream_events() -> Any:
        async with agent.run_stream_events(text) as stream:
            async for event in stream:
                events.append(event)
        last = events[-1]
        assert isinstance(last, AgentRunResultEvent), f"the events ended with {last!r}"
        return last.result.output

    async def with_handler() -> Any:
        async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
            async for event in stream:
                events.append(event)

        return (await agent.run(text, event_stream_handler=handler)).output

    async def with_iter() -> Any:
        async with agent.iter(text) as run:
            async for node in run:
                if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                    async with node.stream(run.ctx) as stream:
                        async for event in stream:
                            events.append(event)
        assert run.result is not None, "agent.iter ended without a result"
        return run.result.output

    readers = {"run_stream_events": with_run_stream_events, "an event stream handler": with_handler}
    context.final_output = w.run(readers.get(how, with_iter)())
    context.events = events


@then('the events are a weather tool call for "{city}", its result, and a final result that is a forecast')
def step_events_seen(context: Context, city: str) -> None:
    events = context.events
    calls = [e for e in events if isinstance(e, FunctionToolCallEvent) and e.part.tool_name == "weather"]
    assert len(calls) == 1, f"weather tool calls among the events: {calls!r}"
    results = [e for e in events if isinstance(e, FunctionToolResultEvent) and e.tool_call_id == calls[0].tool_call_id]
    assert len(results) == 1, f"no result event for {calls[0]!r}: {events!r}"
    assert "Sunny in" in str(results[0].part.content), results[0]
    starts = [e for e in events if isinstance(e, PartStartEvent)]
    assert starts, f"no part was started: {events!r}"
    assert events.index(calls[0]) < events.index(results[0]), "the tool's result came before its call"
    assert not any(isinstance(e.part, TextPart) and not e.part.content for e in starts), "an empty text part started"
    assert isinstance(context.final_output, Forecast), f"the final output is {context.final_output!r}"
    del city  # the emulated model fills a tool's arguments without reading the prompt (issue 59)


@given("a plain agent over an Anthropic actor in batch mode, built from the emulator's address on a loopback socket")
def step_socket_agent(context: Context) -> None:
    w = world(context)
    w.set_env("ANTHROPIC_API_KEY", "sk-ant-emulator-key")
    settings: dict[str, Any] = {
        "name": "agent-socket",
        "provider": "anthropic",
        "model": "claude-sonnet-5-5",
        "max_tokens": 1024,
        "batch_processing": "batch",
        "batch": {"poll_interval": 0.05, "coalesce_window": 0.2},
        "base_url": w.served_url(),
    }
    w.actor = Actor(settings)
    context.agent = Agent(LowtideModel(w.actor))


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@when("the agent is run with run_sync, then with asyncio.run, and its actor closed with asyncio.run")
def step_loops(context: Context) -> None:
    w = world(context)
    agent, actor = context.agent, _actor(w)
    records = _Records()
    root = logging.getLogger()
    root.addHandler(records)
    context.loop_prompts = ["First tide", "Second tide"]
    try:
        first = agent.run_sync(context.loop_prompts[0])
        second = asyncio.run(asyncio.wait_for(agent.run(context.loop_prompts[1]), 60.0))
        w.results = [first, second]

        async def close() -> None:
            await actor.aclose()
            gc.collect()  # a client left unclosed would start its closing task now, on this loop
            await asyncio.sleep(0.05)

        asyncio.run(close())
        gc.collect()
    finally:
        root.removeHandler(records)
    context.logged = records.records


def _actor(w: World) -> Actor:
    assert w.actor is not None, "no actor"
    return w.actor


@then("both runs' outputs quote their prompts")
def step_both_quote(context: Context) -> None:
    outputs = [str(result.output) for result in world(context).results]
    for prompt, output in zip(context.loop_prompts, outputs, strict=True):
        assert prompt in output, f"{output!r} does not quote {prompt!r}"


@then("the emulator created {count:d} batches and listed none")
def step_created_listed(context: Context, count: int) -> None:
    calls = world(context).emu.calls
    assert calls["batches.create"] == count, f"the emulator created {calls['batches.create']} batches: {dict(calls)}"
    assert calls["batches.list"] == 0, f"batches were listed (a create of unknown outcome reconciled): {dict(calls)}"


@then("nothing was logged at WARNING or above, nor any task's unretrieved exception")
def step_nothing_logged(context: Context) -> None:
    said = [f"{record.name}: {record.getMessage()}" for record in context.logged]
    assert not said, f"logged: {said}"
