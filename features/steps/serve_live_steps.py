"""Steps of serve_live.feature: `lowtide serve --mode live` on loopback sockets in front of the emulator, whose
streamed answers wait after their first piece of text until the client has that piece (`HeldStreams`), so that a
piece seen before the answer's end is told by order, not by time; the official Anthropic, OpenAI and google-genai SDKs
as its clients. One emulator and one server per API for the feature; each scenario serves new actors behind them."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import anthropic
import openai
import parse
from _support import world
from behave.api.step_matchers import register_type
from google import genai
from google.genai import types as genai_types
from held_streams import HOLD_SECONDS, HeldStreams
from shared_servers import Slot, shared_server
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.actor import Actor
from lowtide.emulator.emulator import Emulator
from lowtide.serve.app import build_app

_KEY = "live-secret"
_UPSTREAM_ENV = "LOWTIDE_SERVE_LIVE_UPSTREAM_KEY"
_MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-5.4-mini", "gemini": "gemini-2.5-flash"}
_TOOL = {
    "name": "record_tide",
    "description": "Record a tide measurement",
    "input_schema": {"type": "object", "properties": {"port": {"type": "string"}, "height_m": {"type": "number"}}},
}


@dataclass
class Live:
    """The feature's emulator and servers, and what the scenario saw."""

    held: HeldStreams
    urls: dict[str, str] = field(default_factory=dict[str, str])
    actors: dict[str, Actor] = field(default_factory=dict[str, Actor])
    first_piece_while_held: bool | None = None
    pieces: list[str] = field(default_factory=list[str])
    thoughts: list[str] = field(default_factory=list[str])
    kinds: list[str] = field(default_factory=list[str])
    """"thinking" or "text", a piece each, in the order they reached the client."""
    thinking: str = ""
    signature: str | None = None
    order: list[str] = field(default_factory=list[str])
    """The kinds of the finished answer's parts, in order."""
    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list[tuple[str, dict[str, Any]]])
    error: BaseException | None = None
    prompt: str = ""
    sdk: str = ""
    tasks_before: set[asyncio.Task[Any]] = field(default_factory=set[asyncio.Task[Any]])
    records: list[logging.LogRecord] = field(default_factory=list[logging.LogRecord])


class Context(StepContext, Protocol):
    live: Live


@given("an emulator whose streamed answers wait after their first piece until the client has it")
def held_emulator(context: Context) -> None:
    slot = shared_server(context, "serve-live-emulator")
    held = _feature_emulator(context, slot)
    held.reset()
    slot.serve(context, held)
    context.live = Live(held=held, urls={"emulator": slot.url})
    context.cleanups.append(held.release)  # nothing stays held past its scenario
    context.live.records = world(context).keep_log("asyncio", logging.DEBUG)


def _feature_emulator(context: Context, slot: Slot) -> HeldStreams:
    """One emulator for the feature (kept beside its server), answering every scenario."""
    found = context.shared_servers.get("serve-live-emulator-app")
    if not isinstance(found, HeldStreams):
        found = context.shared_servers["serve-live-emulator-app"] = HeldStreams(Emulator(processing_seconds=0))
    return found


@given("lowtide serve in live mode in front of it, for an Anthropic, an OpenAI and a Gemini actor")
def serve_live(context: Context) -> None:
    import os

    # A key of the scenario's own: the live quota of a scope (a key at an endpoint) lives as long as the server's
    # loop and keeps the ledger of the first actor that used it, which the scenario's end closes.
    os.environ[_UPSTREAM_ENV] = f"sk-upstream-{uuid.uuid4().hex}"
    context.cleanups.append(lambda: os.environ.pop(_UPSTREAM_ENV, None))
    live = context.live
    for provider, model in _MODELS.items():
        base = live.urls["emulator"] + ("/v1" if provider == "openai" else "")
        settings = {
            "name": f"live-{provider}",
            "provider": provider,
            "model": model,
            "max_tokens": 256,
            "base_url": base,
            "api_key_env": _UPSTREAM_ENV,
        }
        actor = live.actors[provider] = Actor(settings)
        slot = shared_server(context, f"serve-live-{provider}")
        slot.serve(context, build_app(actor, client_keys=[_KEY], mode="live"), actor)
        live.urls[provider] = slot.url


# The clients.


def _piece(context: Context, text: str, *, thinking: bool = False) -> None:
    """A piece of text (or of thinking) reached the client: the first one tells whether the emulator still held the
    rest, then lets it go on."""
    live = context.live
    if not live.kinds:
        live.first_piece_while_held = live.held.held == 1 and not live.held.overran
        live.held.release()
    live.kinds.append("thinking" if thinking else "text")
    (live.thoughts if thinking else live.pieces).append(text)


def _messages(prompt: str) -> Any:  # each SDK's own TypedDict of a message
    return [{"role": "user", "content": prompt}]


async def _anthropic(context: Context, prompt: str, **options: Any) -> None:
    live = context.live
    max_tokens = options.pop("max_tokens", 256)
    async with (
        anthropic.AsyncAnthropic(base_url=live.urls["anthropic"], api_key=_KEY, max_retries=0) as client,
        client.messages.stream(
            model=_MODELS["anthropic"], max_tokens=max_tokens, messages=_messages(prompt), **options
        ) as stream,
    ):
        async for event in stream:
            if event.type == "text":
                _piece(context, event.text)
            elif event.type == "thinking":
                _piece(context, event.thinking, thinking=True)
            elif event.type == "input_json" and event.partial_json:
                _piece(context, event.partial_json)
        final = await stream.get_final_message()
    live.text = "".join(block.text for block in final.content if block.type == "text")
    live.order = [block.type for block in final.content]
    for block in final.content:
        if block.type == "thinking":
            live.thinking, live.signature = block.thinking, block.signature
    live.tool_calls = [(block.name, dict(block.input)) for block in final.content if block.type == "tool_use"]


async def _chat(context: Context, prompt: str, **options: Any) -> None:
    live = context.live
    async with openai.AsyncOpenAI(base_url=f"{live.urls['openai']}/v1", api_key=_KEY, max_retries=0) as client:
        stream = await client.chat.completions.create(
            model=_MODELS["openai"], messages=_messages(prompt), stream=True, **options
        )
        calls: dict[int, list[str]] = {}
        async for chunk in stream:
            for choice in chunk.choices:
                if choice.delta.content:
                    _piece(context, choice.delta.content)
                for call in choice.delta.tool_calls or []:
                    name = call.function.name if call.function else None
                    arguments = call.function.arguments if call.function else None
                    calls.setdefault(call.index, [name or ""]).append(arguments or "")
                    if arguments:
                        _piece(context, arguments)
    live.text = "".join(live.pieces) if not calls else ""
    live.tool_calls = [(parts[0], json.loads("".join(parts[1:]))) for parts in calls.values()]


async def _responses(context: Context, prompt: str, **options: Any) -> None:
    live = context.live
    async with (
        openai.AsyncOpenAI(base_url=f"{live.urls['openai']}/v1", api_key=_KEY, max_retries=0) as client,
        client.responses.stream(model=_MODELS["openai"], input=prompt, **options) as stream,
    ):
        async for event in stream:
            if event.type == "response.output_text.delta":
                _piece(context, event.delta)
            if event.type == "response.reasoning_summary_text.delta":
                _piece(context, event.delta, thinking=True)
            if event.type == "response.function_call_arguments.delta":
                _piece(context, event.delta)
        final = await stream.get_final_response()
    live.text = final.output_text
    live.order = ["thinking" if item.type == "reasoning" else "text" for item in final.output]
    for item in final.output:
        if item.type == "reasoning":
            live.thinking = "".join(part.text for part in item.summary)
    live.tool_calls = [(item.name, json.loads(item.arguments)) for item in final.output if item.type == "function_call"]


async def _gemini(context: Context, prompt: str, **options: Any) -> None:
    live = context.live
    client = genai.Client(api_key=_KEY, http_options=genai_types.HttpOptions(base_url=live.urls["gemini"]))
    chunks: list[genai_types.GenerateContentResponse] = []
    try:
        async for chunk in await client.aio.models.generate_content_stream(
            model=_MODELS["gemini"], contents=prompt, config=options.get("config")
        ):
            chunks.append(chunk)
            for part in chunk.parts or []:
                if part.text:
                    _piece(context, part.text, thinking=part.thought is True)
    finally:
        await client.aio.aclose()
    live.text = "".join(live.pieces)
    # The SDK puts no streamed answer together: the parts as they came, a thought's pieces one thought.
    for part in (part for chunk in chunks for part in chunk.parts or []):
        kind = "thinking" if part.thought else "text" if part.text is not None else "other"
        if not live.order or live.order[-1] != kind:
            live.order.append(kind)
        if part.thought:
            live.thinking += part.text or ""
            live.signature = part.thought_signature.decode() if part.thought_signature else live.signature


_CLIENTS = {
    "the Anthropic SDK's messages.stream": _anthropic,
    "the OpenAI SDK's chat.completions stream": _chat,
    "the OpenAI SDK's responses.stream": _responses,
    "the Gemini SDK's generate_content_stream": _gemini,
}


@parse.with_pattern("|".join(re.escape(name) for name in _CLIENTS))
def _sdk(string: str) -> str:
    return string


register_type(LiveSdk=_sdk)

_TOOL_OPTIONS: dict[str, dict[str, Any]] = {
    "the Anthropic SDK's messages.stream": {"tools": [_TOOL], "tool_choice": {"type": "tool", "name": "record_tide"}},
    "the OpenAI SDK's chat.completions stream": {
        "tools": [{"type": "function", "function": {"name": _TOOL["name"], "parameters": _TOOL["input_schema"]}}],
        "tool_choice": {"type": "function", "function": {"name": "record_tide"}},
    },
    "the OpenAI SDK's responses.stream": {
        "tools": [{"type": "function", "name": _TOOL["name"], "parameters": _TOOL["input_schema"]}],
        "tool_choice": {"type": "function", "name": "record_tide"},
    },
}


@when('"{prompt}" is streamed from lowtide serve with {sdk:LiveSdk}')
def streamed(context: Context, prompt: str, sdk: str) -> None:
    context.live.prompt, context.live.sdk = prompt, sdk
    context.runner.run(_CLIENTS[sdk](context, prompt))


@when('"{prompt}" is streamed from lowtide serve with {sdk:LiveSdk}, the tool "record_tide" forced')
def streamed_tool(context: Context, prompt: str, sdk: str) -> None:
    context.live.prompt, context.live.sdk = prompt, sdk
    context.runner.run(_CLIENTS[sdk](context, prompt, **_TOOL_OPTIONS[sdk]))


_THINKING_OPTIONS: dict[str, dict[str, Any]] = {
    "the Anthropic SDK's messages.stream": {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048},
    "the OpenAI SDK's responses.stream": {"reasoning": {"effort": "low", "summary": "auto"}},
    "the Gemini SDK's generate_content_stream": {
        "config": genai_types.GenerateContentConfig(
            thinking_config=genai_types.ThinkingConfig(include_thoughts=True, thinking_budget=1024)
        )
    },
}


@when('"{prompt}" is streamed from lowtide serve with {sdk:LiveSdk}, asked to think')
def streamed_thinking(context: Context, prompt: str, sdk: str) -> None:
    context.live.prompt, context.live.sdk = prompt, sdk
    context.runner.run(_CLIENTS[sdk](context, prompt, **_THINKING_OPTIONS[sdk]))


@then("the client had a piece of thinking while the emulator still held the rest")
def thinking_while_held(context: Context) -> None:
    live = context.live
    assert live.kinds[:1] == ["thinking"], f"the pieces came as {live.kinds}"
    assert live.first_piece_while_held is True, (
        f"the first piece reached the client only after the emulator had sent the rest"
        f" ({live.held.held} stream(s) held, {live.held.overran} let go unreleased)"
    )


@then("the SDK's finished answer thinks first, its thinking the thinking pieces joined, its text the text pieces")
def thinking_whole(context: Context) -> None:
    live = context.live
    assert live.order == ["thinking", "text"], live.order
    assert len(live.thoughts) > 1, live.thoughts
    assert live.thinking == "".join(live.thoughts), (live.thinking, live.thoughts)
    assert live.kinds == sorted(live.kinds, key=["thinking", "text"].index), live.kinds
    assert live.text, live.pieces
    assert live.text == "".join(live.pieces), (live.text, live.pieces)
    if live.sdk.startswith("the Anthropic"):
        assert live.signature, "the thinking came unsigned"


@when('"{prompt}" is streamed from lowtide serve with {sdk:LiveSdk}, which fails')
def streamed_fails(context: Context, prompt: str, sdk: str) -> None:
    try:
        context.runner.run(_CLIENTS[sdk](context, prompt))
    except (anthropic.APIError, openai.APIError) as error:
        context.live.error = error


@given("the emulator refuses the next Messages call with status {status:d}")
def refuses_next(context: Context, status: int) -> None:
    context.live.held.emulator.faults.fail_next("messages.create", status)


@given("the emulator's next stream breaks after its first piece")
def cut_next(context: Context) -> None:
    context.live.held.cut_next = True


@then('the SDK got {count:d} piece(s), then raised the API\'s error event saying "{words}"')
def broke_mid_stream(context: Context, count: int, words: str) -> None:
    live = context.live
    assert len(live.pieces) == count, live.pieces
    assert isinstance(live.error, anthropic.APIStatusError), repr(live.error)
    assert words in str(live.error), str(live.error)


@when('the Anthropic SDK\'s messages.stream of "{prompt}" is left after its first piece of text')
def left_early(context: Context, prompt: str) -> None:
    live = context.live
    server = shared_server(context, "serve-live-anthropic")
    live.tasks_before = _tasks(server)

    async def leave() -> None:
        async with (
            anthropic.AsyncAnthropic(base_url=live.urls["anthropic"], api_key=_KEY, max_retries=0) as client,
            client.messages.stream(model=_MODELS["anthropic"], max_tokens=256, messages=_messages(prompt)) as stream,
        ):
            async for event in stream:
                if event.type == "text":
                    live.first_piece_while_held = live.held.held == 1 and not live.held.overran
                    live.pieces.append(event.text)
                    break

    context.runner.run(leave())


def _tasks(server: Slot) -> set[asyncio.Task[Any]]:
    """The tasks the server's event loop runs now."""
    assert server.loop is not None

    async def running() -> set[asyncio.Task[Any]]:
        return asyncio.all_tasks()

    return asyncio.run_coroutine_threadsafe(running(), server.loop).result(HOLD_SECONDS)


# What the client, the emulator and the server saw.


@then("the client had a piece of the answer while the emulator still held the rest")
def piece_while_held(context: Context) -> None:
    live = context.live
    assert live.pieces, "no piece of text reached the client"
    assert live.first_piece_while_held is True, (
        f"the first piece reached the client only after the emulator had sent the rest"
        f" ({live.held.held} stream(s) held, {live.held.overran} let go unreleased)"
    )


@then("the text the SDK put together is the pieces joined, and the answer the same request gets unstreamed")
def same_as_unstreamed(context: Context) -> None:
    live = context.live
    assert live.text == "".join(live.pieces), (live.text, live.pieces)
    unstreamed = context.runner.run(_unstreamed(context, live.prompt))
    assert live.text == unstreamed, (live.text, unstreamed)


async def _unstreamed(context: Context, prompt: str) -> str:
    live = context.live
    if live.sdk.startswith("the Anthropic"):
        async with anthropic.AsyncAnthropic(base_url=live.urls["anthropic"], api_key=_KEY, max_retries=0) as client:
            message = await client.messages.create(
                model=_MODELS["anthropic"], max_tokens=256, messages=_messages(prompt)
            )
        return "".join(block.text for block in message.content if block.type == "text")
    if live.sdk.startswith("the OpenAI"):
        async with openai.AsyncOpenAI(base_url=f"{live.urls['openai']}/v1", api_key=_KEY, max_retries=0) as client:
            if "chat" in live.sdk:
                completion = await client.chat.completions.create(model=_MODELS["openai"], messages=_messages(prompt))
                return completion.choices[0].message.content or ""
            response = await client.responses.create(model=_MODELS["openai"], input=prompt)
            return response.output_text
    client = genai.Client(api_key=_KEY, http_options=genai_types.HttpOptions(base_url=live.urls["gemini"]))
    try:
        answer = await client.aio.models.generate_content(model=_MODELS["gemini"], contents=prompt)
    finally:
        await client.aio.aclose()
    return answer.text or ""


@then('the SDK\'s finished answer calls "record_tide" with the arguments its pieces joined make')
def tool_call_whole(context: Context) -> None:
    live = context.live
    assert [name for name, _ in live.tool_calls] == ["record_tide"], live.tool_calls
    arguments = live.tool_calls[0][1]
    assert arguments, "the tool call came without arguments"
    assert arguments == json.loads("".join(live.pieces)), (arguments, live.pieces)


@then("the emulator streamed {count:d} answer(s)")
def streams_count(context: Context, count: int) -> None:
    assert context.live.held.streams == count, context.live.held.streams


@then("lowtide serve closed its stream from the emulator while the rest was held, and ran nothing more for it")
def closed_upstream(context: Context) -> None:
    live = context.live
    assert live.first_piece_while_held is True, "the client's first piece came after the emulator had sent the rest"
    assert live.held.closed_while_held.wait(HOLD_SECONDS), "lowtide serve kept reading the emulator's stream"
    server = shared_server(context, "serve-live-anthropic")
    assert server.loop is not None

    async def settled() -> list[str]:
        # The tasks the request started, awaited: they end once their cancellation has run (bounded by the steps'
        # own limit, never reached unless something is left running).
        started = asyncio.all_tasks() - live.tasks_before - {asyncio.current_task()}
        if started:
            await asyncio.wait(started, timeout=HOLD_SECONDS)
        gc.collect()  # an abandoned task's unretrieved exception is reported when it is collected
        return [repr(task) for task in started if not task.done()]

    running = asyncio.run_coroutine_threadsafe(settled(), server.loop).result(HOLD_SECONDS * 2)
    assert not running, running


@then('nothing was logged saying "{words}"')
def nothing_logged(context: Context, words: str) -> None:
    # The server's loop was collected already (`closed_upstream`): an abandoned task's exception is said then.
    said = [record.getMessage() for record in context.live.records if words in record.getMessage()]
    assert not said, said


@then('the SDK raised status {status:d} "{kind}" before any piece, as unstreamed')
def raised_before_pieces(context: Context, status: int, kind: str) -> None:
    live = context.live
    error = live.error
    assert isinstance(error, anthropic.APIStatusError), repr(error)
    assert error.status_code == status, error.status_code
    body: Any = error.body
    assert body["error"]["type"] == kind, body
    assert not live.pieces, live.pieces
