"""Steps for Gemini actors in live mode (features/gemini_live.feature): the official google-genai SDK against the
emulator's Gemini API, in process, every generateContent body it sent kept for the scenario to read."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from typing import Any, Protocol

import httpx
import httpx2
from _support import emulated_reply_to, remember_env, unreachable_api, world, yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from google import genai
from google.genai import types
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import BatchProcessingMode
from lowtide.emulator import Emulator, RateLimits

MODEL = "gemini-2.5-flash"
GEMINI_KEY = "AIza-gemini-live-scenario-secret-7c2e"


class Voyage(BaseModel):
    port: str
    days: int


class Context(StepContext, Protocol):
    gemini_sent: list[dict[str, Any]]
    """The generateContent bodies (streamed or not) the scenario's google-genai client sent, in order."""
    gemini_transport: _Recording
    gemini_counted: list[dict[str, Any]]
    """The countTokens bodies it sent."""


class _Recording(httpx2.AsyncBaseTransport):
    """The emulator's transport, keeping the JSON body of every generateContent call, streamed or not; it ends the
    next `ending_early` streams cleanly after their first event, as a connection closed between chunks would."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, sent: list[dict[str, Any]]) -> None:
        self._inner = inner
        self._sent = sent
        self.counted: list[dict[str, Any]] = []
        self.ending_early = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        streamed = request.url.path.endswith(":streamGenerateContent")
        if streamed or request.url.path.endswith(":generateContent"):
            self._sent.append(json.loads(await request.aread()))
        elif request.url.path.endswith(":countTokens"):
            self.counted.append(json.loads(await request.aread()))
        response = await self._inner.handle_async_request(request)
        if not (streamed and self.ending_early):
            return response
        self.ending_early -= 1
        first = (await response.aread()).split(b"\n\n")[0] + b"\n\n"
        headers = {key: value for key, value in response.headers.items() if key.lower() != "content-length"}
        return httpx2.Response(response.status_code, headers=headers, content=first)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _start(context: Context, **settings: Any) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, **settings)
    context.gemini_sent = []
    context.gemini_transport = _Recording(w.transport(), context.gemini_sent)
    context.gemini_counted = context.gemini_transport.counted
    http = httpx2.AsyncClient(transport=context.gemini_transport, base_url=w.emu.base_url)
    w.cleanups.append(http.aclose)
    options = types.HttpOptions(base_url=w.emu.base_url, api_version="v1beta", httpx_async_client=http)
    w.client = genai.Client(api_key=GEMINI_KEY, http_options=options)


@given("an emulated Gemini API")
def step_gemini_emulator(context: Context) -> None:
    _start(context)


@given('an emulated Gemini API that knows only the key "{key}"')
def step_gemini_emulator_keys(context: Context, key: str) -> None:
    _start(context, api_keys=[key])


@given("an emulated Gemini API allowing {count:d} requests per minute per key")
def step_gemini_emulator_rpm(context: Context, count: int) -> None:
    _start(context, rate_limits=RateLimits(rpm=count))


@given("the Gemini emulator ends the next streamed answer cleanly after its first chunk")
def step_gemini_stream_ends(context: Context) -> None:
    context.gemini_transport.ending_early += 1


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


def _proto_names(value: Any) -> Any:
    """`value` with every key in proto JSON's camelCase: the Gemini API reads a field by either name, and google-genai
    2.x and 3.x spell some (`inlineData`'s `mimeType`) differently."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): _proto_names(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_proto_names(v) for v in value]
    return value


@then("Gemini was sent, in its generateContent body:")
def step_gemini_sent(context: Context) -> None:
    assert context.gemini_sent, "nothing was sent to Gemini"
    body = context.gemini_sent[-1]
    for row in context.table:
        path = ".".join(_proto_names({part: None}).popitem()[0] for part in row["path"].split("."))
        actual = _value(_proto_names(body), path)
        expected = _proto_names(json.loads(row["value"]))
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


_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
_PDF = "JVBERi0xLjQKJSVFT0YK"
_TIDE_TOOL: dict[str, Any] = {"name": "record_tide", "input_schema": {"type": "object"}}


def _cases() -> dict[str, dict[str, Any]]:
    """The calls `the Gemini actor is asked "..." given <case>` makes (their `run` arguments besides the prompt)."""
    called = [
        {"role": "user", "content": "Record the tide"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call-7", "name": "record_tide", "input": {}}]},
    ]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _PNG}}
    return {
        "a function declared twice": {"tools": [_TIDE_TOOL, _TIDE_TOOL]},
        "a server tool": {"tools": [{**_TIDE_TOOL, "type": "web_search_20250305"}]},
        "a forced tool with no name": {"tools": [_TIDE_TOOL], "tool_choice": {"type": "tool"}},
        "a forced tool it was not given": {"tools": [_TIDE_TOOL], "tool_choice": {"type": "tool", "name": "other"}},
        "a tool choice of another kind": {"tools": [_TIDE_TOOL], "tool_choice": {"type": "maybe"}},
        "a tool result answering no call": {
            "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nowhere"}]}]
        },
        "an image in a tool result": {
            "messages": [
                *called,
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call-7", "content": [image]}]},
            ],
            "tools": [_TIDE_TOOL],
        },
        **_media_cases(),
        "a PDF whose data is not base64": {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "document",
                            "source": {"type": "base64", "media_type": "application/pdf", "data": "no!"},
                        }
                    ],
                }
            ]
        },
        "a stop sequence given twice": {"stop_sequences": ["tide", "tide"]},
        "a free tool choice": {"tools": [_TIDE_TOOL], "tool_choice": {"type": "auto"}},
        "no tool choice allowed": {"tools": [_TIDE_TOOL], "tool_choice": {"type": "none"}},
        "any tool choice": {"tools": [_TIDE_TOOL], "tool_choice": {"type": "any"}},
        "an inline image": {
            "messages": [{"role": "user", "content": [image, {"type": "text", "text": "What is this?"}]}]
        },
        "an inline PDF": {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "document",
                            "source": {"type": "base64", "media_type": "application/pdf", "data": _PDF},
                        },
                        {"type": "text", "text": "Summarise it"},
                    ],
                }
            ]
        },
        "an inline PDF and a tool": {
            **_block("document", {"type": "base64", "media_type": "application/pdf", "data": _PDF}),
            "tools": [_TIDE_TOOL],
        },
        "a further generation setting": {"extra_params": {"generationConfig": {"seed": 7}}},
        "a call id Gemini gave": {
            "messages": [
                *called,
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call-7", "content": "done"}]},
            ],
            "tools": [_TIDE_TOOL],
        },
    }


def _block(kind: str, source: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": [{"type": kind, "source": source}, {"type": "text", "text": "?"}]}]
    }


def _media_cases() -> dict[str, dict[str, Any]]:
    """Images and documents given by URL, by file, inline: as Gemini takes them, or what it cannot take."""
    return {
        "an image by URL": _block("image", {"type": "url", "url": "https://tides.example/chart.JPG?v=2"}),
        "a PDF by URL": _block("document", {"type": "url", "url": "https://tides.example/tables.pdf"}),
        "an uploaded image": _block("image", {"type": "file", "file_id": "files/chart-7x"}),
        "an uploaded PDF by its URI": _block(
            "document", {"type": "file", "file_id": "https://generativelanguage.googleapis.com/v1beta/files/tables9"}
        ),
        "an inline text document": _block(
            "document", {"type": "base64", "media_type": "text/plain", "data": "SGlnaCB0aWRlIGF0IDY="}
        ),
        "an image by a URL without its type": _block("image", {"type": "url", "url": "https://tides.example/chart"}),
        "an image by a URL of a GIF": _block("image", {"type": "url", "url": "https://tides.example/chart.gif"}),
        "an image by an FTP URL": _block("image", {"type": "url", "url": "ftp://tides.example/chart.png"}),
        "an inline GIF": _block("image", {"type": "base64", "media_type": "image/gif", "data": "R0lGODlhAQABAAAAACw="}),
        "an inline Word document": _block(
            "document", {"type": "base64", "media_type": "application/msword", "data": "0M8R4KGxGuE="}
        ),
        "another API's file id": _block("document", {"type": "file", "file_id": "file-abc123"}),
        "a file name Gemini never gives": _block("image", {"type": "file", "file_id": "files/Not_Gemini's"}),
        "an image whose data is a URL of no kind": {
            "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "data:x"}}]}]
        },
    }


@when('the Gemini actor is asked "{prompt}" given {case}')
def step_gemini_ask_case(context: Context, prompt: str, case: str) -> None:
    w = world(context)
    arguments = _cases()[case]
    if "messages" not in arguments:
        arguments = {"prompt": prompt, **arguments}
    w.response = w.attempt_async(lambda: w.current_actor().run(**arguments))


@then("the Gemini call succeeded")
def step_gemini_succeeded(context: Context) -> None:
    world(context).answer()


@then("the Gemini answer holds thinking before its text")
def step_gemini_thinking(context: Context) -> None:
    answer = world(context).answer()
    kinds = [block.type for block in answer.content]
    assert kinds == ["thinking", "text"], answer.content
    assert answer.thinking, answer.content


@given('a Gemini actor "{name}" that builds its own client with the key, the emulator\'s base URL and an HTTP client')
def step_gemini_actor_own_client(context: Context, name: str) -> None:
    w = world(context)
    http = httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url)
    w.cleanups.append(http.aclose)
    w.add_actor({**_settings(name), "base_url": w.emu.base_url}, client=None, http_client=http, api_key=GEMINI_KEY)


@when('a Gemini actor "{name}" is given {what}')
def step_gemini_actor_wrong(context: Context, name: str, what: str) -> None:
    w = world(context)
    if what == "an OpenAI client":
        kwargs: dict[str, Any] = {"client": w.emu.openai_client(api_key=GEMINI_KEY)}
    else:
        kwargs = {"client": None, "http_client": httpx.AsyncClient(), "api_key": GEMINI_KEY}
    w.attempt(lambda: w.run(w.add_actor(_settings(name), **kwargs).run("Hello")))


@given('a Gemini actor "{name}" whose API cannot be reached')
def step_gemini_unreachable(context: Context, name: str) -> None:
    w = world(context)
    cause = ConnectionRefusedError(111, "Connection refused")
    http = httpx2.AsyncClient(transport=unreachable_api(httpx2.ConnectError, cause=cause))
    w.cleanups.append(http.aclose)
    w.add_actor(
        {**_settings(name), "base_url": "http://127.0.0.1:9", "live": {"retries": {"connection": 0}}},
        client=None,
        http_client=http,
        api_key=GEMINI_KEY,
    )


@then("a Gemini answer of these parts is read as these blocks:")
def step_gemini_parts(context: Context) -> None:
    from lowtide.providers.gemini.answers import answer_and_json

    parts = [json.loads(row["part"]) for row in context.table]
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    _, stored = answer_and_json(body, mode=BatchProcessingMode.LIVE, ids={})
    expected = [json.loads(row["block"]) for row in context.table if row["block"]]
    assert stored["content"] == expected, stored["content"]
    assert stored["stop_reason"] == "tool_use", stored


@then("these Gemini error bodies ask for these waits:")
def step_gemini_waits(context: Context) -> None:
    from lowtide.providers.gemini.errors import retry_delay

    for row in context.table:
        wait = retry_delay(json.loads(row["body"]))
        assert wait == (float(row["wait"]) if row["wait"] else None), (row["body"], wait)


@then("the Gemini provider's classes are found by name in lowtide.providers.gemini")
def step_gemini_exports(context: Context) -> None:
    import lowtide.providers.gemini as package
    from lowtide.providers.gemini.live import GeminiProvider
    from lowtide.providers.gemini.options import GeminiOptions

    assert package.GeminiProvider is GeminiProvider
    assert package.GeminiOptions is GeminiOptions
    assert getattr(package, "Nothing", None) is None


@when("the Gemini actor maps {count:d} prompts in live mode")
def step_gemini_map(context: Context, count: int) -> None:
    w = world(context)
    prompts = [f"Tide table {number}" for number in range(count)]
    w.value = (prompts, w.run(w.current_actor().map(prompts, mode="live")))


@then("the Gemini run's {count:d} results are in input order, each the emulated reply to its prompt, each priced")
def step_gemini_mapped(context: Context, count: int) -> None:
    prompts, result = world(context).value
    assert result.ok, result.counts()
    items = list(result)
    assert [item.index for item in items] == list(range(count)), items
    for item, prompt in zip(items, prompts, strict=True):
        assert (item.text or "").startswith(emulated_reply_to(prompt)), (prompt, item.text)
        assert item.cost_usd is not None, item
        assert item.cost_usd > 0, item
    assert world(context).emu.calls["gemini.generate_content"] == count, world(context).emu.calls
