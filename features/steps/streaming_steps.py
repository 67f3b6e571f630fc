"""Steps of streaming.feature: `actor.stream` through each provider's streaming API against the emulator, in process,
with a transport that notes which requests asked for a stream and can cut a stream's body after its second piece."""

from __future__ import annotations

import json
from typing import Any, Protocol, cast

import httpx
import httpx2
import openai
from _compat_apis import GROQ_KEY
from _httpx_bridge import Httpx2Bridge
from _openai_provider_support import openai_client
from _support import API_KEY, World, emulated_aws_credentials, world
from step_context import Context, given, then, when

from lowtide import ActorRequest, ActorResponse, BatchProcessingMode, Provider, ProviderOptions, StreamEvent
from lowtide.errors import ConfigurationError
from lowtide.providers.anthropic import ClaudeProvider
from lowtide.registry import ProviderRegistry
from lowtide.streaming import TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ThinkingContent

_MODELS = {
    "anthropic": "claude-sonnet-5-5",
    "openai": "gpt-5.4-mini",
    "groq": "llama-3.1-8b-instant",
    "gemini": "gemini-2.5-flash",
    "mistral": "mistral-small-latest",
    "azure_openai": "tide-stream",
    "bedrock": "amazon.nova-micro-v1:0",
}
_TOOL = {
    "name": "record_tide",
    "description": "Record a tide measurement",
    "input_schema": {"type": "object", "properties": {"port": {"type": "string"}, "height_m": {"type": "number"}}},
}
_TEXT_EVENTS = (b'"text_delta"', b"response.output_text.delta", b'"content":"')


class _Notes(Protocol):
    streamed: list[StreamEvent]
    prompt: str
    stream_error: BaseException | None
    streaming: Recording
    middleware_saw: list[tuple[str, str]]
    on_bedrock: bool


class StreamingContext(Context, _Notes, Protocol):
    """The context of these steps: what was streamed, and the transport that watched it."""


class Recording(httpx2.AsyncBaseTransport):
    """Passes requests on, noting each one that asked for a stream; with `cut` armed, an answer's event stream ends
    after its second piece of text, as a dropped connection would leave it."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner
        self.streams = 0
        self.cut = False
        self.bodies: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content or b"{}") if request.method == "POST" else {}
        response = await self._inner.handle_async_request(request)
        if isinstance(body, dict):
            self.bodies.append(cast("dict[str, Any]", body))
        asked = isinstance(body, dict) and body.get("stream") is True
        if not (asked or request.url.path.endswith(":streamGenerateContent")):
            return response
        self.streams += 1
        if not self.cut:
            return response
        events, kept, texts = (await response.aread()).split(b"\n\n"), [], 0
        for event in events:
            kept.append(event)
            texts += any(marker in event for marker in _TEXT_EVENTS)
            if texts == 2:
                break
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx2.Response(200, headers=headers, content=b"\n\n".join(kept) + b"\n\n", request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _c(context: Context) -> StreamingContext:
    return cast(StreamingContext, context)  # behave's context takes the attributes these steps set


def _client(w: World, api: str, transport: Recording) -> Any:
    if api == "anthropic":
        return w.client_over(transport)
    if api == "gemini":
        from google import genai
        from google.genai import types

        http = httpx2.AsyncClient(transport=transport, base_url=w.emu.base_url)
        w.cleanups.append(http.aclose)
        options = types.HttpOptions(base_url=w.emu.base_url, api_version="v1beta", httpx_async_client=http)
        return genai.Client(api_key=API_KEY, http_options=options)
    if api == "mistral":
        from mistralai.client import Mistral

        http = httpx2.AsyncClient(transport=transport, base_url=w.emu.base_url)
        w.cleanups.append(http.aclose)
        return Mistral(api_key=API_KEY, server_url=w.emu.base_url, async_client=http)
    if api == "azure_openai":
        from lowtide.emulator.azure_openai.emulation import AzureOpenAIEmulation

        w.emu.emulation(AzureOpenAIEmulation).deployments["tide-stream"] = "gpt-4o-mini"
        http = httpx2.AsyncClient(transport=transport, base_url=w.emu.base_url)
        azure = openai.AsyncAzureOpenAI(
            api_key=API_KEY, azure_endpoint=w.emu.base_url, api_version="2024-10-21", http_client=http, max_retries=0
        )
        w.cleanups.append(azure.close)
        return azure
    if api == "groq":
        import groq

        http = httpx.AsyncClient(transport=Httpx2Bridge(transport), base_url=w.emu.base_url)
        client = groq.AsyncGroq(api_key=GROQ_KEY, base_url=w.emu.base_url, http_client=http, max_retries=0)
        w.cleanups.append(client.close)
        return client
    return openai_client(w, transport)


def _settings(api: str, mode: str) -> dict[str, Any]:
    provider, _, endpoint = api.partition(" ")
    settings: dict[str, Any] = {"name": "teller", "provider": provider, "model": _MODELS[provider]}
    settings["batch_processing"] = mode
    if endpoint:
        settings["provider_options"] = {"openai": {"endpoint": endpoint}}
    return settings


@given("a streaming actor on {api} in {mode:w} mode")
def step_streaming_actor(context: Context, api: str, mode: str) -> None:
    c, w = _c(context), world(context)
    c.streaming, c.on_bedrock = Recording(w.transport()), api == "bedrock"
    if c.on_bedrock:
        w.add_actor({**_settings(api, mode), "base_url": _bedrock_url(w)}, client=None)
    else:
        w.add_actor(_settings(api, mode), client=_client(w, api, c.streaming))


def _bedrock_url(w: World) -> str:
    """The scenario's emulator on a loopback socket (boto3 speaks no in-process transport), with AWS credentials of
    no meaning in the environment (the emulator checks no signature)."""
    emulated_aws_credentials(w)
    return w.serve_emulator(w.emu)


_THINKING = {
    "anthropic": {"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}}},
    "gemini": {"gemini": {"thinking_budget": 1024, "include_thoughts": True}},
    "openai responses": {"openai": {"endpoint": "responses", "reasoning": {"effort": "low", "summary": "auto"}}},
}


@given("a streaming actor on {api} in live mode, asked to think")
def step_streaming_actor_thinking(context: Context, api: str) -> None:
    c, w = _c(context), world(context)
    c.streaming, c.on_bedrock = Recording(w.transport()), False
    settings = {**_settings(api, "live"), "provider_options": _THINKING[api], "max_tokens": 4096}
    w.add_actor(settings, client=_client(w, api, c.streaming))


@given("a streaming actor on {api} in live mode, with a middleware that notes each call")
def step_streaming_actor_middleware(context: Context, api: str) -> None:
    c, w = _c(context), world(context)
    c.streaming, c.middleware_saw = Recording(w.transport()), []

    async def note(request: ActorRequest, call_next: Any) -> ActorResponse[object]:
        response: ActorResponse[object] = await call_next(request)
        c.middleware_saw.append((request.model_dump_json(include={"messages"}), response.text))
        return response

    w.add_actor(_settings(api, "live"), client=_client(w, api, c.streaming), middleware=[note])


class PlainProvider(Provider):
    """A provider plugged in as a third party writes one: `complete` only, no `stream`."""

    name = "plain"
    mode = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._inner = ClaudeProvider(options)

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        return await self._inner.complete(request)


@given("a streaming actor on a provider plugged in without a stream method")
def step_plain_provider(context: Context) -> None:
    c, w = _c(context), world(context)
    registry = ProviderRegistry()
    registry.register("plain", BatchProcessingMode.LIVE, PlainProvider)
    c.streaming, c.middleware_saw = Recording(w.transport()), []

    async def note(request: ActorRequest, call_next: Any) -> ActorResponse[object]:
        response: ActorResponse[object] = await call_next(request)
        c.middleware_saw.append((request.model_dump_json(include={"messages"}), response.text))
        return response

    settings = {"name": "plain", "provider": "plain", "model": _MODELS["anthropic"], "batch_processing": "live"}
    w.add_actor(settings, client=w.client_over(c.streaming), registry=registry, middleware=[note])


@given("the API's streams are cut after their second piece of text")
def step_cut(context: Context) -> None:
    c = _c(context)
    if getattr(c, "on_bedrock", False):  # the frames of AWS's event stream: messageStart, then a text delta each
        world(context).emu.faults.cut("bedrock.converse_stream", after_lines=3)
    else:
        c.streaming.cut = True


def _stream(context: Context, prompt: str, **arguments: Any) -> None:
    c, w = _c(context), world(context)
    c.streamed, c.stream_error, c.prompt = [], None, prompt

    async def read() -> None:
        try:
            async for event in w.current_actor().stream(prompt, **arguments):
                c.streamed.append(event)
        except Exception as exc:
            c.stream_error = exc

    w.run(read())


@when('the actor\'s answer to "{prompt}" is streamed')
def step_streamed(context: Context, prompt: str) -> None:
    _stream(context, prompt)


@when('the actor\'s answer to "{prompt}" is streamed with the key "{key}"')
def step_streamed_key(context: Context, prompt: str, key: str) -> None:
    _stream(context, prompt, key=key)


@when('the actor\'s answer to "{prompt}" is streamed with the stop sequence "{stop}"')
def step_streamed_stop(context: Context, prompt: str, stop: str) -> None:
    _stream(context, prompt, stop_sequences=[stop])


@when('the actor\'s answer to "{prompt}" is streamed with the tool "{tool}" forced and the stop sequence "{stop}"')
def step_streamed_tool_stop(context: Context, prompt: str, tool: str, stop: str) -> None:
    choice = {"type": "tool", "name": tool}
    _stream(context, prompt, tools=[{**_TOOL, "name": tool}], tool_choice=choice, stop_sequences=[stop])


@then('the streamed text ends with "{end}", held back while it might begin the stop sequence')
def step_streamed_end(context: Context, end: str) -> None:
    c = _c(context)
    texts = _texts(c)
    assert texts[-1].text.endswith(end), texts
    assert _response(c).text.endswith(end), _response(c).text


@then("the response ended on its own, never stopped by a stop sequence")
def step_not_stopped(context: Context) -> None:
    response = _response(_c(context))
    assert (response.stop_reason, response.stop_sequence) in (("end_turn", None), ("tool_use", None)), response


@then('the response ends before "{stop}", stopped by it, with the usage of the whole answer')
def step_stopped(context: Context, stop: str) -> None:
    """Cut where the stop sequence begins, as Anthropic says it; the usage the API reported for all it wrote (the
    same call without the stop sequence reports the same), and the API never sent a stop parameter."""
    c, w = _c(context), world(context)
    streamed = _response(c)
    whole = w.run(w.current_actor().run(c.prompt))
    assert whole.text.startswith(streamed.text + stop), (streamed.text, whole.text)
    assert (streamed.stop_reason, streamed.stop_sequence) == ("stop_sequence", stop), streamed
    assert [block.type for block in streamed.content] == ["text"], streamed.content
    assert streamed.usage == whole.usage, (streamed.usage, whole.usage)
    assert not any("stop" in body for body in c.streaming.bodies), c.streaming.bodies
    ran = w.run(w.current_actor().run(c.prompt, stop_sequences=[stop]))
    assert (ran.text, ran.stop_reason, ran.stop_sequence, ran.usage) == (
        streamed.text,
        "stop_sequence",
        stop,
        streamed.usage,
    ), ran


@when('the actor\'s answer to "{prompt}" is streamed with the tool "{tool}" forced')
def step_streamed_tool(context: Context, prompt: str, tool: str) -> None:
    _stream(context, prompt, tools=[{**_TOOL, "name": tool}], tool_choice={"type": "tool", "name": tool})


def _response(c: StreamingContext) -> ActorResponse[object]:
    assert c.stream_error is None, f"the stream failed: {type(c.stream_error).__name__}: {c.stream_error}"
    assert c.streamed, "nothing was streamed"
    last = c.streamed[-1]
    assert isinstance(last, ActorResponse), f"the last event is {last!r}, not the response"
    assert not any(isinstance(event, ActorResponse) for event in c.streamed[:-1]), "a response came before the last"
    return last


def _texts(c: StreamingContext) -> list[TextDelta]:
    return [event for event in c.streamed if isinstance(event, TextDelta)]


def _thoughts(c: StreamingContext) -> list[ThinkingDelta]:
    return [event for event in c.streamed if isinstance(event, ThinkingDelta)]


@then("more than one piece of thinking came, all before the first piece of text")
def step_thinking_pieces(context: Context) -> None:
    c = _c(context)
    _response(c)
    thoughts = [event for event in _thoughts(c) if event.text]
    assert len(thoughts) > 1, f"pieces: {c.streamed[:-1]}"
    first_text = next(n for n, event in enumerate(c.streamed) if isinstance(event, TextDelta))
    last_thought = max(n for n, event in enumerate(c.streamed) if isinstance(event, ThinkingDelta))
    assert last_thought < first_text, f"pieces: {c.streamed[:-1]}"


@then("the pieces of thinking joined are the response's thinking, with its signature")
def step_thinking_joined(context: Context) -> None:
    c = _c(context)
    thinking = [block for block in _response(c).content if isinstance(block, ThinkingContent)]
    assert len(thinking) == 1, _response(c).content
    assert thinking[0].thinking, thinking
    assert "".join(event.text for event in _thoughts(c)) == thinking[0].thinking, (_thoughts(c), thinking)
    signatures = [event.signature for event in _thoughts(c) if event.signature]
    assert signatures == ([thinking[0].signature] if thinking[0].signature else []), (signatures, thinking)
    assert len({event.index for event in _thoughts(c)}) == 1, _thoughts(c)


@then("no piece of thinking came, and the response holds no thinking")
def step_no_thinking(context: Context) -> None:
    c = _c(context)
    assert not _thoughts(c), c.streamed
    assert not any(isinstance(block, ThinkingContent) for block in _response(c).content), _response(c).content
    assert _texts(c), c.streamed


@then("more than one piece of text came before the response, and the response came last")
def step_pieces(context: Context) -> None:
    c = _c(context)
    _response(c)
    assert len(_texts(c)) > 1, f"pieces: {c.streamed[:-1]}"


@then("the pieces of text joined are the response's text")
def step_joined(context: Context) -> None:
    c = _c(context)
    assert "".join(piece.text for piece in _texts(c)) == _response(c).text


@then("the same call made with run answers the same text with the same usage and cost")
def step_same_as_run(context: Context) -> None:
    c, w = _c(context), world(context)
    streamed = _response(c)
    prompt = streamed.text.split('"')[1]
    ran = w.run(w.current_actor().run(prompt))
    assert ran.text == streamed.text, (ran.text, streamed.text)
    assert ran.usage == streamed.usage, (ran.usage, streamed.usage)
    assert ran.cost is not None, ran
    assert streamed.cost is not None, streamed
    assert ran.cost.total_usd == streamed.cost.total_usd > 0, (ran.cost, streamed.cost)


@then("the API streamed its answer {count:d} times")
def step_streamed_count(context: Context, count: int) -> None:
    c = _c(context)
    on_bedrock = getattr(c, "on_bedrock", False)
    streams = world(context).emu.calls["bedrock.converse_stream"] if on_bedrock else c.streaming.streams
    assert streams == count, streams


@then('the first tool-call piece names "{tool}" with the call\'s id')
def step_tool_first(context: Context, tool: str) -> None:
    c = _c(context)
    calls = _response(c).tool_calls
    assert len(calls) == 1, calls
    first = next(event for event in c.streamed if isinstance(event, ToolCallDelta))
    assert (first.name, first.id) == (tool, calls[0].id), (first, calls[0])


@then("the tool-call pieces' arguments joined are the JSON of the response's tool call input")
def step_tool_arguments(context: Context) -> None:
    c = _c(context)
    call = _response(c).tool_calls[0]
    pieces = [event for event in c.streamed if isinstance(event, ToolCallDelta)]
    assert len({piece.index for piece in pieces}) == 1, pieces
    joined = "".join(piece.arguments for piece in pieces)
    assert call.input, call
    assert json.loads(joined) == call.input, (joined, call.input)


@then("the stream was the response alone")
def step_alone(context: Context) -> None:
    c = _c(context)
    _response(c)
    assert len(c.streamed) == 1, c.streamed


@then("the stream gave {count:d} pieces of text and then failed with {error}")
def step_cut_failed(context: Context, count: int, error: str) -> None:
    c = _c(context)
    assert type(c.stream_error).__name__ == error, repr(c.stream_error)
    assert len(_texts(c)) == count, c.streamed
    assert not any(isinstance(event, ActorResponse) for event in c.streamed), c.streamed


@then('the stream\'s error names the field "{field}" and says "{says}"')
def step_stream_error_says(context: Context, field: str, says: str) -> None:
    error = _c(context).stream_error
    assert isinstance(error, ConfigurationError), repr(error)
    assert error.field == field, error.field
    assert says in str(error), str(error)


@then("the actor's middleware saw the streamed call")
def step_middleware_saw(context: Context) -> None:
    c = _c(context)
    response = _response(c)
    assert len(c.middleware_saw) == 1, c.middleware_saw
    sent, text = c.middleware_saw[0]
    assert text == response.text, (text, response.text)
    assert text.split('"')[1] in sent, (sent, text)
