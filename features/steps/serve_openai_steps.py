"""Steps for `lowtide serve` in front of an OpenAI actor: the server and a socket emulator each on a loopback port in a
background thread, and the official `openai` SDK (and plain HTTP) as its clients. The emulator's steps are shared
with `serve_steps.py`."""

from __future__ import annotations

import asyncio
import json
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.shared_params import FunctionDefinition
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.actor import Actor
from lowtide.http.server import app_in_thread
from lowtide.serve.app import build_app

if TYPE_CHECKING:
    from serve_steps import Served


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    emulator_url: str
    serve_stack: ExitStack
    served: Served
    served_openai: ServedOpenAI
    tool_conversation: list[ChatCompletionMessageParam]
    tool_input: list[dict[str, Any]]
    tool_name: str


_MODEL = "gpt-5.4-mini"
_UPSTREAM_ENV = "LOWTIDE_SERVE_TEST_OPENAI_KEY"
_TIDE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"place": {"type": "string"}, "height_m": {"type": "number"}},
    "required": ["place", "height_m"],
    "additionalProperties": False,
}
_TIDE_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"port": {"type": "string"}},
    "required": ["port"],
    "additionalProperties": False,
}


@dataclass
class ServedOpenAI:
    url: str = ""
    answers: list[Any] = field(default_factory=list[Any])
    chunks: list[Any] = field(default_factory=list[Any])
    events: list[Any] = field(default_factory=list[Any])
    raw: list[str] = field(default_factory=list[str])
    error: BaseException | None = None
    http: httpx.Response | None = None


def _state(context: Context) -> ServedOpenAI:
    return context.served_openai


def _client(context: Context, key: str = "local-secret") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{_state(context).url}/v1", api_key=key, max_retries=0)


def _start(context: Context, budget: float | None = None) -> None:
    os.environ[_UPSTREAM_ENV] = "sk-upstream-never-shown"
    context.cleanups.append(lambda: os.environ.pop(_UPSTREAM_ENV, None))
    settings: dict[str, Any] = {
        "name": "served-openai",
        "provider": "openai",
        "model": _MODEL,
        "max_tokens": 256,
        "batch_processing": "batch",
        "base_url": f"{context.emulator_url}/v1",
        "api_key_env": _UPSTREAM_ENV,
        "batch": {"poll_interval": 0.05, "coalesce_window": 0.2},
    }
    if budget is not None:
        settings["max_cost_usd"] = budget
    app = build_app(Actor(settings), client_keys=["local-secret"])
    url, _ = context.serve_stack.enter_context(app_in_thread(app))
    _state(context).url = url


@given('lowtide serve runs an OpenAI actor in a background thread with client key "{key}"')
def serve_openai(context: Context, key: str) -> None:
    assert key == "local-secret"
    context.served_openai = ServedOpenAI()
    _start(context)


@given("lowtide serve's OpenAI actor has a budget of ${budget:f} a call")
def serve_with_budget(context: Context, budget: float) -> None:
    _start(context, budget)


def _user(text: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "user", "content": text}]


async def _chat(context: Context, **body: Any) -> Any:
    async with _client(context) as client:
        return await client.chat.completions.create(model=_MODEL, **body)


async def _respond(context: Context, **body: Any) -> Any:
    async with _client(context) as client:
        return await client.responses.create(model=_MODEL, **body)


def _keep(context: Context, attempt: Any) -> None:
    try:
        _state(context).answers.append(context.runner.run(attempt))
    except openai.APIError as error:
        _state(context).error = error


# Asking.


@when('the chat completion "{prompt}" is asked of lowtide serve')
def ask_chat(context: Context, prompt: str) -> None:
    _state(context).answers.append(context.runner.run(_chat(context, messages=_user(prompt))))


@when('the chat completion "{prompt}" is asked of lowtide serve and fails')
def ask_chat_failing(context: Context, prompt: str) -> None:
    _keep(context, _chat(context, messages=_user(prompt)))
    assert _state(context).error is not None, _state(context).answers


@when('the response "{prompt}" is asked of lowtide serve and fails')
def ask_response_failing(context: Context, prompt: str) -> None:
    _keep(context, _respond(context, input=prompt))
    assert _state(context).error is not None, _state(context).answers


@when('the response "{prompt}" is asked of lowtide serve with instructions "{instructions}"')
def ask_response(context: Context, prompt: str, instructions: str) -> None:
    answer = _respond(context, input=prompt, instructions=instructions, max_output_tokens=200)
    _state(context).answers.append(context.runner.run(answer))


@when("{count:d} different chat completions are asked of lowtide serve at once")
def ask_many(context: Context, count: int) -> None:
    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(_chat(context, messages=_user(f"Question number {n}")) for n in range(count)))

    _state(context).answers = context.runner.run(all_at_once())


@when('the chat completion "{prompt}" is streamed from lowtide serve with its usage')
def stream_chat(context: Context, prompt: str) -> None:
    async def stream() -> list[Any]:
        async with _client(context) as client:
            chunks = await client.chat.completions.create(
                model=_MODEL, messages=_user(prompt), stream=True, stream_options={"include_usage": True}
            )
            return [chunk async for chunk in chunks]

    _state(context).chunks = context.runner.run(stream())
    body = {"model": _MODEL, "messages": _user(prompt), "stream": True}
    raw = httpx.post(f"{_state(context).url}/v1/chat/completions", json=body, headers=_bearer(), timeout=60)
    _state(context).raw = [line for line in raw.text.splitlines() if line]
    ask_chat(context, prompt)


@when('the chat completion "{prompt}" is streamed from lowtide serve and fails')
def stream_chat_failing(context: Context, prompt: str) -> None:
    async def stream() -> list[Any]:
        async with _client(context) as client:
            chunks = await client.chat.completions.create(model=_MODEL, messages=_user(prompt), stream=True)
            return [chunk async for chunk in chunks]

    _keep(context, stream())


@when('the response "{prompt}" is streamed from lowtide serve and fails')
def stream_response_failing(context: Context, prompt: str) -> None:
    async def stream() -> list[Any]:
        async with _client(context) as client:
            events = await client.responses.create(model=_MODEL, input=prompt, stream=True)
            return [event async for event in events]

    _keep(context, stream())


@when('the response "{prompt}" is streamed from lowtide serve')
def stream_response(context: Context, prompt: str) -> None:
    async def stream() -> list[Any]:
        async with _client(context) as client:
            events = await client.responses.create(model=_MODEL, input=prompt, stream=True)
            return [event async for event in events]

    _state(context).events = context.runner.run(stream())


def _chat_tool(name: str) -> list[ChatCompletionToolParam]:
    function: FunctionDefinition = {
        "name": name,
        "description": "The next tide at a port.",
        "parameters": _TIDE_TOOL_PARAMETERS,
    }
    return [{"type": "function", "function": function}]


def _responses_tool(name: str) -> list[dict[str, Any]]:
    return [{"type": "function", "name": name, "description": "The next tide.", "parameters": _TIDE_TOOL_PARAMETERS}]


def _asking_for(name: str) -> str:
    return f"When is the next tide at Brest? [[emulator:tool:{name}]]"


@when('a chat completion with the tool "{name}" is asked of lowtide serve to call it')
def ask_chat_tool(context: Context, name: str) -> None:
    context.tool_conversation = _user(_asking_for(name))
    answer = _chat(context, messages=context.tool_conversation, tools=_chat_tool(name), tool_choice="auto")
    _state(context).answers.append(context.runner.run(answer))
    context.tool_name = name


@when('the tool\'s result "{result}" is sent back in a chat completion')
def chat_tool_result(context: Context, result: str) -> None:
    call = _state(context).answers[-1].choices[0].message.tool_calls[0]
    messages = [
        {"role": "system", "content": "You read tide tables."},
        *context.tool_conversation,
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump(exclude_none=True)]},
        {"role": "tool", "tool_call_id": call.id, "content": result},
    ]
    answer = _chat(context, messages=messages, tools=_chat_tool(context.tool_name), parallel_tool_calls=False)
    _state(context).answers.append(context.runner.run(answer))


@when('a response with the function "{name}" is asked of lowtide serve to call it')
def ask_response_tool(context: Context, name: str) -> None:
    context.tool_input = [{"role": "user", "content": [{"type": "input_text", "text": _asking_for(name)}]}]
    answer = _respond(context, input=context.tool_input, tools=_responses_tool(name), tool_choice="auto")
    _state(context).answers.append(context.runner.run(answer))
    context.tool_name = name


@when('the function\'s output "{result}" is sent back in a response')
def response_tool_result(context: Context, result: str) -> None:
    call = next(item for item in _state(context).answers[-1].output if item.type == "function_call")
    items = [
        {"role": "developer", "content": "You read tide tables."},
        *context.tool_input,
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": result},
    ]
    answer = _respond(context, input=items, tools=_responses_tool(context.tool_name))
    _state(context).answers.append(context.runner.run(answer))


@when('a chat completion with the tool "{name}" is streamed from lowtide serve to call it')
def stream_chat_tool(context: Context, name: str) -> None:
    async def stream() -> list[Any]:
        async with _client(context) as client:
            chunks = await client.chat.completions.create(
                model=_MODEL, messages=_user(_asking_for(name)), tools=_chat_tool(name), stream=True
            )
            return [chunk async for chunk in chunks]

    _state(context).chunks = context.runner.run(stream())


@when('a chat completion with the json_schema "{name}" is asked of lowtide serve')
def ask_chat_schema(context: Context, name: str) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": name, "schema": _TIDE_SCHEMA, "strict": True}}
    answer = _chat(context, messages=_user("The tide at Brest?"), response_format=response_format)
    _state(context).answers.append(context.runner.run(answer))


@when('a response with the json_schema "{name}" is asked of lowtide serve')
def ask_response_schema(context: Context, name: str) -> None:
    text = {"format": {"type": "json_schema", "name": name, "schema": _TIDE_SCHEMA, "strict": True}}
    _state(context).answers.append(context.runner.run(_respond(context, input="The tide at Brest?", text=text)))


@when('a chat completion is asked of lowtide serve with the client key "{key}"')
def ask_with_key(context: Context, key: str) -> None:
    async def attempt() -> Any:
        async with _client(context, key) as client:
            return await client.chat.completions.create(model=_MODEL, messages=_user("Hi"))

    _keep(context, attempt())


def _bearer() -> dict[str, str]:
    return {"Authorization": "Bearer local-secret"}


@when('the body {body} is posted to lowtide serve at "{path}"')
def post_body(context: Context, body: str, path: str) -> None:
    url = f"{_state(context).url}{path}"
    _state(context).http = httpx.post(url, json=json.loads(body), headers=_bearer(), timeout=30)


@when('the text "{text}" is posted to lowtide serve at "{path}"')
def post_text(context: Context, text: str, path: str) -> None:
    url = f"{_state(context).url}{path}"
    _state(context).http = httpx.post(url, content=text.encode(), headers=_bearer(), timeout=30)


# Checking.


@then('the served chat completion answers with text, finish reason "{finish}" and its usage')
def chat_answered(context: Context, finish: str) -> None:
    answer = _state(context).answers[-1]
    assert isinstance(answer, ChatCompletion), answer
    assert answer.object == "chat.completion", answer
    choice = answer.choices[0]
    assert choice.message.content, answer
    assert choice.finish_reason == finish, answer
    assert answer.usage is not None, answer
    assert answer.usage.completion_tokens > 0, answer
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens, answer
    assert answer.id.startswith("chatcmpl-"), answer.id


@then("the served response is completed with output text and its usage")
def response_answered(context: Context) -> None:
    answer = _state(context).answers[-1]
    assert answer.object == "response", answer
    assert answer.status == "completed", answer
    assert answer.output_text, answer
    assert answer.usage is not None, answer
    assert answer.usage.output_tokens > 0, answer
    assert answer.id.startswith("resp_"), answer.id


@then('the served response echoes the instructions "{instructions}"')
def response_echoes(context: Context, instructions: str) -> None:
    answer = _state(context).answers[-1]
    assert answer.instructions == instructions, answer
    assert answer.max_output_tokens == 200, answer


@then('the served response echoes the text format "{kind}"')
def response_echoes_format(context: Context, kind: str) -> None:
    answer = _state(context).answers[-1]
    assert answer.text.format.type == kind, answer.text


@then("all {count:d} served chat completions have text and different ids")
def all_chat_answered(context: Context, count: int) -> None:
    answers = _state(context).answers
    assert len(answers) == count, answers
    assert all(answer.choices[0].message.content for answer in answers), answers
    assert len({answer.id for answer in answers}) == count


@then("both served chat completions are the same answer")
def same_chat(context: Context) -> None:
    first, second = _state(context).answers
    assert first.id == second.id, (first, second)
    assert first.choices == second.choices, (first, second)
    assert first.usage == second.usage, (first, second)


@then(
    'behind lowtide serve the emulator created {batches:d} OpenAI batch(es) holding {requests:d} request(s) to "{path}"'
)
def created_openai(context: Context, batches: int, requests: int, path: str) -> None:
    upstream = _served_emulator(context).openai
    assert upstream.created_batches == batches, upstream.created_batches
    assert sum(upstream.created_custom_ids.values()) == requests, upstream.created_custom_ids
    assert all(batch.endpoint == path for batch in upstream.batches.oldest_first()), path
    calls = _served_emulator(context).calls
    assert calls["openai.chat.completions.create"] == calls["openai.responses.create"] == 0, calls


def _served_emulator(context: Context) -> Any:
    return context.served.emulator


@then("the served chunks rebuild the text of the same chat completion unstreamed")
def chunks_rebuild(context: Context) -> None:
    chunks = _state(context).chunks
    whole = _state(context).answers[-1]
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == whole.choices[0].message.content, (text, whole)
    assert {chunk.id for chunk in chunks} == {whole.id}, chunks
    assert chunks[0].choices[0].delta.role == "assistant", chunks[0]
    finishes = [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason]
    assert finishes == ["stop"], finishes


@then("the last served chunk has no choices and the usage")
def usage_last(context: Context) -> None:
    last = _state(context).chunks[-1]
    assert last.choices == [], last
    assert last.usage is not None, last
    assert last.usage.completion_tokens > 0, last
    assert all(chunk.usage is None for chunk in _state(context).chunks[:-1])


@then('the served stream ends with "{line}"')
def stream_ends(context: Context, line: str) -> None:
    raw = _state(context).raw
    assert raw[-1] == line, raw[-3:]
    assert all(not line.startswith("event:") for line in raw), raw[:3]
    assert '"choices":[]' not in "".join(raw), "usage chunk sent without include_usage"


@then("the served response events are {names}")
def response_events(context: Context, names: str) -> None:
    seen = [event.type for event in _state(context).events]
    distinct = [name for index, name in enumerate(seen) if index == 0 or name != seen[index - 1]]
    assert distinct == [name.strip() for name in names.split(",")], seen
    assert [event.sequence_number for event in _state(context).events] == list(range(len(seen)))


@then("the completed response's output text is the streamed text")
def response_stream_text(context: Context) -> None:
    events = _state(context).events
    streamed = "".join(event.delta for event in events if event.type == "response.output_text.delta")
    final = events[-1].response
    assert final.status == "completed", final
    assert final.output_text == streamed, (final, streamed)
    assert final.usage is not None, final
    assert final.usage.output_tokens > 0, final


@then('the served chat completion calls "{name}" with arguments that are a JSON object, finish reason "{finish}"')
def chat_calls(context: Context, name: str, finish: str) -> None:
    answer = _state(context).answers[-1]
    choice = answer.choices[0]
    assert choice.finish_reason == finish, answer
    [call] = choice.message.tool_calls
    assert call.function.name == name, call
    assert isinstance(json.loads(call.function.arguments), dict), call


@then('the served response holds a function_call to "{name}"')
def response_calls(context: Context, name: str) -> None:
    answer = _state(context).answers[-1]
    [call] = [item for item in answer.output if item.type == "function_call"]
    assert call.name == name, call
    assert isinstance(json.loads(call.arguments), dict), call


@then('the served chunks rebuild a call of "{name}" with finish reason "{finish}"')
def chunks_call(context: Context, name: str, finish: str) -> None:
    chunks = _state(context).chunks
    deltas = [call for chunk in chunks for call in (chunk.choices[0].delta.tool_calls or [])]
    assert deltas[0].function.name == name, deltas
    assert deltas[0].id, deltas
    arguments = "".join(delta.function.arguments or "" for delta in deltas)
    assert isinstance(json.loads(arguments), dict), arguments
    assert chunks[-1].choices[0].finish_reason == finish, chunks[-1]


def _fits_tide(text: str) -> None:
    value = json.loads(text)
    assert set(value) == {"place", "height_m"}, value
    assert isinstance(value["place"], str), value
    assert isinstance(value["height_m"], int | float), value


@then('the served chat completion\'s text is JSON fitting the schema "{name}"')
def chat_schema(context: Context, name: str) -> None:
    assert name == "tide"
    _fits_tide(_state(context).answers[-1].choices[0].message.content)


@then('the served response\'s output text is JSON fitting the schema "{name}"')
def response_schema(context: Context, name: str) -> None:
    assert name == "tide"
    _fits_tide(_state(context).answers[-1].output_text)


@then('the OpenAI SDK raises {kind} with status {status:d} and code "{code}"')
def sdk_raises(context: Context, kind: str, status: int, code: str) -> None:
    error = _state(context).error
    assert type(error).__name__ == kind, repr(error)
    assert isinstance(error, openai.APIStatusError)
    assert error.status_code == status, error
    assert error.code == code, error.body


@then("lowtide serve's answer told the SDK not to retry")
def no_retry(context: Context) -> None:
    error = _state(context).error
    assert isinstance(error, openai.APIStatusError)
    assert error.response.headers.get("x-should-retry") == "false", error.response.headers


@then('the OpenAI SDK raises APIError from the stream saying "{words}"')
def stream_error(context: Context, words: str) -> None:
    error = _state(context).error
    assert isinstance(error, openai.APIError), repr(error)
    assert words in str(error.body) + str(error), (error, error.body)


@then('lowtide serve answers status {status:d} in OpenAI\'s shape naming "{param}"')
def http_refused(context: Context, status: int, param: str) -> None:
    response = _state(context).http
    assert response is not None
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error", error
    assert error["message"], error
    if param:
        assert error["param"] == param or param in error["message"], error


@then('lowtide serve answers status {status:d} with the error code "{code}"')
def http_code(context: Context, status: int, code: str) -> None:
    response = _state(context).http
    assert response is not None
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text
