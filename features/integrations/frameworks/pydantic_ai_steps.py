"""Steps of `pydantic_ai.feature`: pydantic-ai agents over `LowtideModel`."""

from __future__ import annotations

import asyncio
import re
import struct
import zlib
from decimal import Decimal
from typing import Any, Protocol

import pydantic_ai.exceptions
from _world import World, world
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, NativeOutput, PromptedOutput
from pydantic_ai.messages import AudioUrl, BinaryContent, ImageUrl, ModelResponse
from step_context import Context as StepContext
from step_context import given, then, when

import lowtide.errors
from lowtide import Actor
from lowtide.emulator.core.pdf import simple_pdf
from lowtide.integrations.pydantic_ai import LowtideModel, LowtideModelSettings


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    agent: Agent[None, Any]
    first_batch_id: str
    run_count: int
    tool_prompt: bool


class Forecast(BaseModel):
    city: str
    summary: str
    temperature_c: int


def forecast_agent(w: World, actor: Actor, output: str = "tool") -> Agent[None, Any]:
    output_type: Any = {"tool": Forecast, "native": NativeOutput(Forecast), "prompted": PromptedOutput(Forecast)}
    agent = Agent(LowtideModel(actor), output_type=output_type[output], instructions="Give the forecast.")
    if output == "tool":

        @agent.tool_plain
        async def weather(city: str) -> str:  # pyright: ignore[reportUnusedFunction]
            """Today's weather in a city."""
            w.tool_calls.append(city)
            # The emulated model calls the tool a user turn names: the result asks for the final answer.
            return f"Sunny in {city}. [[emulator:tool:final_result]]"

    return agent


@given("a forecast agent with a weather tool over an actor in {mode} mode")
def step_forecast_agent(context: Context, mode: str) -> None:
    w = world(context)
    context.agent = forecast_agent(w, w.new_actor(mode))
    context.tool_prompt = True


@given("a forecast agent with {output} output over an actor in batch mode")
def step_forecast_output(context: Context, output: str) -> None:
    w = world(context)
    context.agent = forecast_agent(w, w.new_actor("batch"), output)


@given("a forecast agent with a weather tool over a Gemini actor in {mode} mode")
def step_forecast_agent_gemini(context: Context, mode: str) -> None:
    w = world(context)
    context.agent = forecast_agent(w, w.new_actor(mode, "gemini"))
    context.tool_prompt = True


@given("a forecast agent with {output} output over a Gemini actor in {mode} mode")
def step_forecast_output_gemini(context: Context, output: str, mode: str) -> None:
    w = world(context)
    context.agent = forecast_agent(w, w.new_actor(mode, "gemini"), output)


@given("a plain agent over a Gemini actor in {mode} mode")
def step_plain_agent_gemini(context: Context, mode: str) -> None:
    context.agent = Agent(LowtideModel(world(context).new_actor(mode, "gemini")))


@given('a forecast agent with a weather tool over a "{provider}" actor in {mode} mode')
def step_forecast_agent_served(context: Context, provider: str, mode: str) -> None:
    w = world(context)
    context.agent = forecast_agent(w, w.new_actor(mode, provider))
    context.tool_prompt = True


@given('a forecast agent with {output} output over a "{provider}" actor in {mode} mode')
def step_forecast_output_served(context: Context, output: str, provider: str, mode: str) -> None:
    w = world(context)
    context.agent = forecast_agent(w, w.new_actor(mode, provider), output)


@given('a plain agent over a "{provider}" actor in {mode} mode')
def step_plain_agent_served(context: Context, provider: str, mode: str) -> None:
    context.agent = Agent(LowtideModel(world(context).new_actor(mode, provider)))


@given("a plain agent over an actor in {mode} mode")
def step_plain_agent(context: Context, mode: str) -> None:
    context.agent = Agent(LowtideModel(world(context).new_actor(mode)))


@given('a plain agent over an actor of model "{model}" in {mode} mode')
def step_plain_agent_model(context: Context, model: str, mode: str) -> None:
    context.agent = Agent(LowtideModel(world(context).new_actor(mode, model=model)))


def _prompt(text: str) -> str:
    # The first step must call the weather tool: the emulated model calls a tool a user turn names.
    return f"[[emulator:tool:weather]] {text}"


@when('the agent is asked "{prompt}"')
def step_ask(context: Context, prompt: str) -> None:
    w = world(context)
    agent: Agent[None, Any] = context.agent
    text = _prompt(prompt) if getattr(context, "tool_prompt", False) else prompt
    result = w.attempt(agent.run(text))
    w.results = [] if result is None else [result]


@when('the agent is asked "{prompt}" with a budget of ${budget:f} per request')
def step_ask_budget(context: Context, prompt: str, budget: float) -> None:
    w = world(context)
    settings = LowtideModelSettings(lowtide_max_cost_usd=budget)
    result = w.attempt(context.agent.run(prompt, model_settings=settings))
    w.results = [] if result is None else [result]


async def _runs(agent: Agent[None, Any], count: int, *, keyed: bool) -> list[Any]:
    return await asyncio.gather(
        *(
            agent.run(
                _prompt(f"What is the weather in city {n}?"),
                model_settings=LowtideModelSettings(lowtide_key=f"run-{n}") if keyed else None,
            )
            for n in range(count)
        )
    )


@when("{count:d} runs of the agent are started at once")
def step_many_runs(context: Context, count: int) -> None:
    w = world(context)
    w.results = w.run(_runs(context.agent, count, keyed=False))


@when("{count:d} keyed runs of the agent are started at once")
def step_keyed_runs(context: Context, count: int) -> None:
    w = world(context)
    context.run_count = count
    w.tasks = [w.runner.get_loop().create_task(_runs(context.agent, count, keyed=True))]


@when("their second step's batch is created, and the process stops waiting and closes its actor")
def step_stop_after_second_create(context: Context) -> None:
    w = world(context)

    async def stop() -> None:
        while w.emu.created_batches < 2:  # noqa: ASYNC110 - the emulator has no event to wait on
            await asyncio.sleep(0.01)
        for task in w.tasks:
            task.cancel()
        await asyncio.gather(*w.tasks, return_exceptions=True)
        assert w.actor is not None
        await w.actor.aclose()

    w.run(stop())


@when("the same {count:d} keyed runs are started again with a new actor over the same ledger")
def step_resume(context: Context, count: int) -> None:
    w = world(context)
    context.first_batch_id = _first_batch_id(w)
    agent = forecast_agent(w, w.new_actor("batch"))
    w.results = w.run(_runs(agent, count, keyed=True))


def _first_batch_id(w: World) -> str:
    assert w.actor is not None
    request = w.actor.ledger.request("run-0/step-1")
    assert request is not None, "the first run's first step is not in the ledger"
    assert request.batch_id is not None, "the first run's first step was never in a batch"
    batch = w.actor.ledger.batch(request.batch_id)
    assert batch is not None, f"no batch {request.batch_id} in the ledger"
    return str(batch.provider_batch_id)


@when('the agent is run with the key "{key}"')
@when('the agent is run with the key "{key}" again')
def step_run_keyed(context: Context, key: str) -> None:
    w = world(context)
    settings = LowtideModelSettings(lowtide_key=key)
    w.results.append(w.run(context.agent.run(_prompt("Weather?"), model_settings=settings)))


def _responses(result: Any) -> list[ModelResponse]:
    return [message for message in result.all_messages() if isinstance(message, ModelResponse)]


def _details(response: ModelResponse) -> dict[str, Any]:
    """What lowtide's model adds to each response (mode, batch id, costs): always there."""
    assert response.provider_details is not None, response
    return response.provider_details


def _cost(response: ModelResponse) -> Decimal:
    assert response.usage.cost is not None, response.usage
    return response.usage.cost


@then("the agent's output is a forecast")
@then("every run's output is a forecast")
def step_output_forecast(context: Context) -> None:
    w = world(context)
    assert w.error is None, f"the run failed: {w.error!r}"
    assert w.results, "no run finished"
    for result in w.results:
        assert isinstance(result.output, Forecast), f"the output is {result.output!r}"


@then('the agent\'s output quotes "{text}"')
def step_output_quotes(context: Context, text: str) -> None:
    w = world(context)
    assert w.error is None, f"the run failed: {w.error!r}"
    (result,) = w.results
    assert text in str(result.output), f"{result.output!r} does not quote {text!r}"


@then("the weather tool was called once")
def step_tool_once(context: Context) -> None:
    calls = world(context).tool_calls
    assert len(calls) == 1, f"the tool was called {len(calls)} times"


@then("the weather tool was called {count:d} times")
def step_tool_times(context: Context, count: int) -> None:
    calls = world(context).tool_calls
    assert len(calls) == count, f"the tool was called {len(calls)} times"


@then("the run made {count:d} request, each answered in {mode} mode")
@then("the run made {count:d} requests, each answered in {mode} mode")
def step_requests_mode(context: Context, count: int, mode: str) -> None:
    (result,) = world(context).results
    assert result.usage.requests == count, f"{result.usage.requests} requests"
    modes = [_details(response)["mode"] for response in _responses(result)]
    assert modes == [mode] * count, f"answered in {modes}"


@then("the run's cost is the sum of its responses' costs, at {mode} prices")
def step_cost(context: Context, mode: str) -> None:
    (result,) = world(context).results
    responses = _responses(result)
    total = sum((_cost(response) for response in responses), Decimal(0))
    assert total > 0, "the responses cost nothing"
    assert result.usage.cost == total, f"run cost {result.usage.cost}, responses {total}"
    live = sum((_details(response)["live_equivalent_usd"] for response in responses), Decimal(0))
    expected = live / 2 if mode == "batch" else live
    assert abs(total - expected) <= Decimal("0.000002"), f"cost {total}, live price {live}"


@then("each step's requests of every run travelled in one batch")
def step_one_batch_per_step(context: Context) -> None:
    per_step: dict[int, set[str]] = {}
    for result in world(context).results:
        for step, response in enumerate(_responses(result), start=1):
            per_step.setdefault(step, set()).add(_details(response)["batch_id"])
    assert sorted(per_step) == [1, 2], f"steps {sorted(per_step)}"
    assert all(len(batches) == 1 for batches in per_step.values()), f"batches per step: {per_step}"
    assert per_step[1] != per_step[2], "both steps claim the same batch"


@then("the resumed runs' first responses came from the first batch")
def step_resumed_first(context: Context) -> None:
    first = {_details(_responses(result)[0])["batch_id"] for result in world(context).results}
    assert first == {context.first_batch_id}, f"first steps came from {first}, not {context.first_batch_id}"


@then("both runs' outputs are the same forecast")
def step_same_forecast(context: Context) -> None:
    first, second = world(context).results
    assert isinstance(first.output, Forecast), first.output
    assert first.output == second.output, (first.output, second.output)


@then('the ledger holds the keys "{first}" and "{second}"')
def step_ledger_keys(context: Context, first: str, second: str) -> None:
    actor = world(context).actor
    assert actor is not None
    for key in (first, second):
        assert actor.ledger.request(key) is not None, f"no request {key!r} in the ledger"


_ERROR = re.compile(r"(?P<name>\w+)(?: \(HTTP (?P<status>\d+)\))?")


@then("the run fails with pydantic-ai's {error}")
def step_fails_with(context: Context, error: str) -> None:
    w = world(context)
    match = _ERROR.fullmatch(error)
    assert match is not None, error
    expected = getattr(pydantic_ai.exceptions, match["name"])
    assert isinstance(w.error, expected), f"expected {match['name']}, got {w.error!r}"
    if match["status"] is not None:
        assert isinstance(w.error, pydantic_ai.exceptions.ModelHTTPError), f"{w.error!r} is not a ModelHTTPError"
        assert w.error.status_code == int(match["status"]), f"status {w.error.status_code}"


@then("the error's cause is lowtide's {name}")
def step_cause(context: Context, name: str) -> None:
    error = world(context).error
    assert error is not None
    cause = error.__cause__
    assert isinstance(cause, getattr(lowtide.errors, name)), f"the cause is {cause!r}"


@then('the error says "{text}"')
def step_error_says(context: Context, text: str) -> None:
    error = world(context).error
    assert error is not None, "the run did not fail"
    assert text in str(error), f"the error says {error}"


def tiny_png() -> bytes:
    """A valid 1x1 PNG (the emulator reads image headers)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


@given("a forecast agent whose weather tool asks for another try once, over an actor in batch mode")
def step_retrying_agent(context: Context) -> None:
    w = world(context)
    agent = Agent(LowtideModel(w.new_actor("batch")), output_type=Forecast)

    @agent.tool_plain(retries=2)
    def weather(city: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Today's weather in a city."""
        w.tool_calls.append(city)
        if len(w.tool_calls) == 1:
            raise ModelRetry("Give the city's full name. [[emulator:tool:weather]]")
        return f"Sunny in {city}. [[emulator:tool:final_result]]"

    context.agent = agent


@when('the agent is asked about two pictures and a PDF "{prompt}"')
def step_ask_pictures(context: Context, prompt: str) -> None:
    w = world(context)
    content = [
        _prompt(prompt),
        BinaryContent(tiny_png(), media_type="image/png"),
        ImageUrl("https://example.com/harbour.png"),
        BinaryContent(simple_pdf(["Harbour report: calm seas."]), media_type="application/pdf"),
    ]
    result = w.attempt(context.agent.run(content))
    w.results = [] if result is None else [result]


@when("the agent is asked about an audio file")
def step_ask_audio(context: Context) -> None:
    w = world(context)
    w.attempt(context.agent.run(["What is said here?", AudioUrl("https://example.com/tide.mp3")]))
