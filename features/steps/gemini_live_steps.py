"""Steps for Gemini actors in live mode (features/gemini_live.feature): the official google-genai SDK against the
emulator's Gemini API, in process, every generateContent body it sent kept for the scenario to read."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from typing import Any, Protocol

import httpx2
from _support import remember_env, world, yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from google import genai
from google.genai import types
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator import Emulator

MODEL = "gemini-2.5-flash"
GEMINI_KEY = "AIza-gemini-live-scenario-secret-7c2e"


class Voyage(BaseModel):
    port: str
    days: int


class Context(StepContext, Protocol):
    gemini_sent: list[dict[str, Any]]
    """The generateContent bodies the scenario's google-genai client sent, in order."""


class _Recording(httpx2.AsyncBaseTransport):
    """The emulator's transport, keeping the JSON body of every generateContent call."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, sent: list[dict[str, Any]]) -> None:
        self._inner = inner
        self._sent = sent

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith(":generateContent"):
            self._sent.append(json.loads(await request.aread()))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _start(context: Context, **settings: Any) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, **settings)
    context.gemini_sent = []
    http = httpx2.AsyncClient(transport=_Recording(w.transport(), context.gemini_sent), base_url=w.emu.base_url)
    w.cleanups.append(http.aclose)
    options = types.HttpOptions(base_url=w.emu.base_url, api_version="v1beta", httpx_async_client=http)
    w.client = genai.Client(api_key=GEMINI_KEY, http_options=options)


@given("an emulated Gemini API")
def step_gemini_emulator(context: Context) -> None:
    _start(context)


@given('an emulated Gemini API that also serves the model "{model}"')
def step_gemini_emulator_models(context: Context, model: str) -> None:
    _start(context, extra_models=[model])


def _settings(name: str, text: str | None = None) -> dict[str, Any]:
    return {"name": name, "provider": "gemini", "model": MODEL, **yaml_doc(text)}


@given('a Gemini actor "{name}" with:')
def step_gemini_actor(context: Context, name: str) -> None:
    world(context).add_actor(_settings(name, context.text))


@given('a Gemini actor "{name}"')
def step_gemini_actor_plain(context: Context, name: str) -> None:
    world(context).add_actor(_settings(name))


@when('a Gemini actor "{name}" is configured with:')
def step_gemini_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: w.add_actor(_settings(name, context.text)))


@given('a Gemini actor "{name}" with no client, whose key variables are unset')
def step_gemini_actor_keyless(context: Context, name: str) -> None:
    for variable in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        remember_env(context, variable)
        os.environ.pop(variable, None)
    world(context).add_actor({**_settings(name), "base_url": world(context).emu.base_url}, client=None)


@given(
    "the Gemini emulator answers the next generateContent call with status {status:d}, asking to wait {seconds:g} "
    "seconds"
)
def step_gemini_fault_wait(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("gemini.generate_content", status, retry_after=seconds)


@given("the Gemini emulator answers the next generateContent call with status {status:d}")
def step_gemini_fault(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("gemini.generate_content", status)


@when('the Gemini actor is asked "{prompt}" for a Voyage')
def step_gemini_ask_model(context: Context, prompt: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, response_model=Voyage))


@when('the Gemini actor is told the result "{result}" of that call')
def step_gemini_tool_result(context: Context, result: str) -> None:
    w = world(context)
    call = w.answer().tool_calls[0]
    messages = [
        {"role": "user", "content": "Record today's high tide"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": result}]},
    ]
    w.response = w.attempt_async(lambda: w.current_actor().run(messages=messages, tools=_tools(context)))


def _tools(context: Context) -> list[dict[str, Any]]:
    """The function declarations of the last call, as lowtide's tools."""
    declared = context.gemini_sent[-1]["tools"][0]["functionDeclarations"]
    return [
        {"name": d["name"], "description": d.get("description"), "input_schema": d["parameters_json_schema"]}
        for d in declared
    ]


@then('the Gemini actor called "{tool}" with a string "{text}" and a number "{number}"')
def step_gemini_called(context: Context, tool: str, text: str, number: str) -> None:
    calls = world(context).answer().tool_calls
    assert [call.name for call in calls] == [tool], calls
    arguments = calls[0].input
    assert isinstance(arguments[text], str), arguments
    assert isinstance(arguments[number], int | float), arguments
    assert calls[0].id, calls


@then('the Gemini answer\'s text is "{text}"')
def step_gemini_text(context: Context, text: str) -> None:
    answer = world(context).answer()
    assert answer.text == text, answer.text


@then("the Gemini answer is parsed into a Voyage")
def step_gemini_parsed(context: Context) -> None:
    parsed = world(context).answer().parsed
    assert isinstance(parsed, Voyage), parsed


def _value(body: Any, path: str) -> Any:
    value = body
    for part in path.split("."):
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError):
            raise AssertionError(f"Gemini was sent no {path}; the body: {body}") from None
    return value


@then("Gemini was sent, in its generateContent body:")
def step_gemini_sent(context: Context) -> None:
    assert context.gemini_sent, "nothing was sent to Gemini"
    body = context.gemini_sent[-1]
    for row in context.table:
        actual = _value(body, row["path"])
        expected = json.loads(row["value"])
        assert actual == expected, f"{row['path']} is {actual!r}, not {expected!r}; the body: {body}"


@then("nothing was sent to Gemini")
def step_gemini_nothing_sent(context: Context) -> None:
    sent = getattr(context, "gemini_sent", [])
    assert sent == [], sent
    assert sum(world(context).emu.calls.values()) == 0, world(context).emu.calls


@then("the Gemini answer's usage counts its thinking tokens as output, and nothing cached")
def step_gemini_usage_thinking(context: Context) -> None:
    usage = world(context).answer().usage
    sent = context.gemini_sent[-1]
    assert "thinkingConfig" not in sent.get("generationConfig", {}), sent
    assert usage.input_tokens > 0, usage
    assert usage.cache_read_input_tokens == 0, usage
    assert usage.output_tokens > len(world(context).answer().text) // 4, usage


@then("the Gemini answer's usage counts no thinking tokens")
def step_gemini_usage_no_thinking(context: Context) -> None:
    answer = world(context).answer()
    # The emulator counts a token per four characters of the answer; thinking would add to them.
    assert answer.usage.output_tokens <= max(1, -(-len(answer.text) // 4)), answer.usage


@then('the Gemini answer\'s cost is what genai-prices asks for "{model}" at live prices')
def step_gemini_cost(context: Context, model: str) -> None:
    answer = world(context).answer()
    usage = answer.usage
    priced = calc_price(
        PricedUsage(
            input_tokens=usage.input_tokens + usage.cache_read_input_tokens,
            cache_read_tokens=usage.cache_read_input_tokens,
            output_tokens=usage.output_tokens,
        ),
        model,
        provider_id="google",
    )
    assert answer.cost is not None
    assert answer.cost.total_usd == Decimal(priced.total_price), (answer.cost, priced.total_price)
    assert answer.cost.total_usd > 0, answer.cost
