"""Steps for OpenAI actors in live mode (features/openai_live.feature): the official openai SDK against the
emulator's OpenAI API, in process."""

from __future__ import annotations

import base64
import os
from typing import Any

import httpx2
import openai
from _openai_provider_support import MODEL, OPENAI_KEY, RESPONSE_MODELS, openai_client
from _openai_support import png
from _support import PathRefused, remember_env, world, yaml_doc
from step_context import Context, given, then, when

from lowtide import BatchProcessingMode, TextContent
from lowtide.emulator import Emulator
from lowtide.emulator.core.pdf import simple_pdf
from lowtide.errors import StructuredOutputError
from lowtide.registry import ProviderRegistry


def _start(context: Context, **settings: Any) -> None:
    """The emulator, and the OpenAI SDK client the scenario's actors get, over the scenario's hooked transport."""
    w = world(context)
    w.emulator = Emulator(clock=w.clock, **settings)
    w.client = openai_client(w)


@given("an emulated OpenAI API")
def step_openai_emulator(context: Context) -> None:
    _start(context)


@given("an emulated OpenAI API whose batches take {seconds:g} seconds")
def step_openai_emulator_slow(context: Context, seconds: float) -> None:
    _start(context, processing_seconds=seconds)


@given('an emulated OpenAI API that accepts only the key "{key}"')
def step_openai_emulator_keys(context: Context, key: str) -> None:
    _start(context, api_keys=[key])


def _settings(name: str, text: str | None = None) -> dict[str, Any]:
    return {"name": name, "provider": "openai", "model": MODEL, **yaml_doc(text)}


@given('an OpenAI actor "{name}" with:')
def step_openai_actor(context: Context, name: str) -> None:
    world(context).add_actor(_settings(name, context.text))


@when('an OpenAI actor "{name}" is configured with:')
def step_openai_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: w.add_actor(_settings(name, context.text)))


@given("the OpenAI API's models endpoint refuses connections")
def step_openai_models_refused(context: Context) -> None:
    w = world(context)
    w.client = openai_client(w, PathRefused(w.transport(), "/v1/models"))


# OpenAI caches prompts of 1,024 tokens or more; the emulator counts a token per four characters.
_LONG_SYSTEM_PROMPT = "You are the harbour master's assistant; you know every tide table of the coast by heart. " * 60


@given('an OpenAI actor "{name}" whose system prompt is long enough to cache')
def step_openai_actor_long(context: Context, name: str) -> None:
    world(context).add_actor({**_settings(name), "system_prompt": _LONG_SYSTEM_PROMPT})


@given('an OpenAI actor "{name}" with no API client, whose key variable "{variable}" is unset')
def step_openai_actor_keyless(context: Context, name: str, variable: str) -> None:
    remember_env(context, variable)
    os.environ.pop(variable, None)
    world(context).add_actor({**_settings(name), "api_key_env": variable}, client=None)


@given('an OpenAI actor "{name}" that builds its own client with the key, the emulator\'s base URL and an HTTP client')
def step_openai_actor_own_client(context: Context, name: str) -> None:
    w = world(context)
    base_url = f"{w.emu.base_url}/v1"
    http = httpx2.AsyncClient(transport=w.transport(), base_url=base_url)
    w.cleanups.append(http.aclose)
    w.add_actor({**_settings(name), "base_url": base_url}, client=None, http_client=http, api_key=OPENAI_KEY)


@given('an OpenAI actor "{name}" handed an Anthropic client')
def step_openai_actor_wrong_client(context: Context, name: str) -> None:
    w = world(context)
    client = w.emu.client(api_key=OPENAI_KEY)
    w.cleanups.append(client.close)
    w.add_actor(_settings(name), client=client)


@given("the OpenAI emulator answers the next Responses call with status {status:d}, asking to wait {seconds:g} seconds")
def step_openai_fault(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("openai.responses.create", status, retry_after=seconds)


@when('the OpenAI actor is asked "{prompt:Q}" for a {model:w}')
def step_openai_ask_model(context: Context, prompt: str, model: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, response_model=RESPONSE_MODELS[model]))


@when('the OpenAI actor is asked "{prompt:Q}" for a {model:w}, with the stop sequence "{stop}"')
def step_openai_ask_model_stop(context: Context, prompt: str, model: str, stop: str) -> None:
    w = world(context)
    w.response = w.attempt_async(
        lambda: w.current_actor().run(prompt, response_model=RESPONSE_MODELS[model], stop_sequences=[stop])
    )


@then('the error keeps the answer cut before "{stop}", stopped by it')
def step_structured_cut(context: Context, stop: str) -> None:
    error = world(context).failure()
    assert isinstance(error, StructuredOutputError), repr(error)
    response = error.response
    assert response is not None, repr(error)
    assert (response.stop_reason, response.stop_sequence) == ("stop_sequence", stop), response
    assert response.text, response
    assert stop not in response.text, response.text
    assert error.text == response.text, (error.text, response.text)


@when('the OpenAI actor is told the result "{result}" of its call to "{tool}"')
def step_openai_tool_result(context: Context, result: str, tool: str) -> None:
    w = world(context)
    messages = [
        {"role": "user", "content": "Record the tide at Brest"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": tool, "input": {"port": "Brest"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": result}]},
    ]
    tools = [{"name": tool, "input_schema": {"type": "object", "properties": {"port": {"type": "string"}}}}]
    w.response = w.attempt_async(lambda: w.current_actor().run(messages=messages, tools=tools))


@when('the OpenAI actor is asked "{prompt:Q}" with a {width:d} x {height:d} PNG image and a one-page PDF')
def step_openai_media(context: Context, prompt: str, width: int, height: int) -> None:
    w = world(context)
    image = base64.b64encode(png(width, height)).decode()
    pdf = base64.b64encode(simple_pdf(["Tide tables for Brest: high water 14:02."])).decode()
    content = [
        {"type": "text", "text": prompt},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
        {
            "type": "document",
            "title": "tides.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": pdf},
        },
    ]
    w.response = w.attempt_async(lambda: w.current_actor().run(messages=[{"role": "user", "content": content}]))


@when('the OpenAI actor is asked "{prompt:Q}" twice')
def step_openai_twice(context: Context, prompt: str) -> None:
    w = world(context)
    for _ in range(2):
        w.response = w.attempt_async(lambda: w.current_actor().run(prompt))


@then('the actor called the OpenAI tool "{tool}" with a string "{text_field}" and a number "{number_field}"')
def step_openai_tool_called(context: Context, tool: str, text_field: str, number_field: str) -> None:
    [call] = world(context).answer().tool_calls
    assert call.name == tool, call
    assert call.id.startswith("call_"), call
    assert isinstance(call.input[text_field], str), call.input
    assert isinstance(call.input[number_field], int | float), call.input


@then("the parsed answer is a {model:w}")
def step_openai_parsed(context: Context, model: str) -> None:
    response = world(context).answer()
    assert isinstance(response.parsed, RESPONSE_MODELS[model]), response.parsed
    assert isinstance(response.content[0], TextContent), response.content


@then("the input counted more than {tokens:d} tokens")
def step_openai_input_tokens(context: Context, tokens: int) -> None:
    usage = world(context).answer().usage
    assert usage.input_tokens > tokens, usage


@then("the first answer read nothing from the prompt cache, and the second read most of its prompt from it")
def step_openai_cache(context: Context) -> None:
    first, second = world(context).answers[-2:]
    assert first.usage.cache_read_input_tokens == 0, first.usage
    assert second.usage.cache_read_input_tokens > second.usage.input_tokens, second.usage
    assert first.usage.total_tokens == second.usage.total_tokens, (first.usage, second.usage)


@then('the default registry has the provider "{name}" for live and batch modes')
def step_openai_registry(context: Context, name: str) -> None:
    registry = ProviderRegistry()
    assert "openai" in registry.load_entry_points()
    assert registry.modes(name) == [BatchProcessingMode.LIVE, BatchProcessingMode.BATCH], registry.modes(name)


@then("once the actor is closed, its OpenAI client is closed too")
def step_openai_closed(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()
    client = getattr(actor.provider(), "_client", None)
    assert isinstance(client, openai.AsyncOpenAI), client
    w.run(actor.aclose())
    assert client.is_closed(), client
