"""Steps of features/emulator_openai.feature about the model endpoints (Responses, Chat Completions, Embeddings),
authentication and errors, driven through the official openai SDK in process. Every step text names "the OpenAI
emulator", so that it cannot clash with the other step modules."""

from __future__ import annotations

import base64
import json
import math
import struct
from typing import Any

import _support  # noqa: F401  (registers the Q type of quoted step text)
import httpx2
import openai
from _openai_support import (
    KEY,
    MODEL,
    connect,
    data_url,
    gif,
    jpeg,
    png,
    raw_call,
    scenario,
    start,
    strict,
    webp,
)
from openai.types import CreateEmbeddingResponse
from openai.types.chat import ChatCompletion, ChatCompletionMessageFunctionToolCall
from openai.types.responses import Response
from pydantic import BaseModel, Field
from step_context import Context, given, then, when

from lowtide.core.clock import ManualClock
from lowtide.emulator.core.pdf import simple_pdf

PDF_PAGE = "Tides at Brest!!"
LOOKUP_TIDE = {
    "type": "object",
    "properties": {
        "station": {"type": "string", "minLength": 2},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["station", "days"],
    "additionalProperties": False,
}


class Voyage(BaseModel):
    port: str = Field(min_length=3)
    days: int = Field(ge=1, le=30)
    stops: list[str]
    crewed: bool


class LookupTide(BaseModel):
    station: str = Field(min_length=2)
    days: int = Field(ge=1, le=7)


# -- setting up ------------------------------------------------------------------------------------------------------


@given("the OpenAI emulator runs on a manual clock")
def step_start(context: Context) -> None:
    start(context)


@given("the OpenAI emulator runs on a manual clock with {seconds:d} processing seconds")
def step_start_processing(context: Context, seconds: int) -> None:
    start(context, processing_seconds=seconds)


@given("the OpenAI emulator runs on a manual clock with {seconds:d} processing seconds and {cancel:d} cancel seconds")
def step_start_cancel(context: Context, seconds: int, cancel: int) -> None:
    start(context, processing_seconds=seconds, cancel_seconds=cancel)


@given('the OpenAI emulator runs on a manual clock and accepts only the API key "{key:Q}"')
def step_start_keys(context: Context, key: str) -> None:
    start(context, api_keys=[key])


@given("the OpenAI emulator runs on a manual clock with bodies limited to {size:d} bytes")
def step_start_limits(context: Context, size: int) -> None:
    start(context, max_request_bytes=size)


class _BrokenClock(ManualClock):
    def now(self) -> float:
        raise RuntimeError("the clock stopped")


@given("the OpenAI emulator runs on a clock that has stopped working")
def step_start_broken(context: Context) -> None:
    scenario(context).clock = _BrokenClock()
    start(context)


@when("the OpenAI emulator clock advances {seconds:d} seconds")
def step_advance(context: Context, seconds: int) -> None:
    scenario(context).clock.advance(seconds)


# -- raw HTTP and errors ---------------------------------------------------------------------------------------------


@when('I send the OpenAI emulator a raw "{method:w}" to "{path:S}" without a key')
def step_raw_anonymous(context: Context, method: str, path: str) -> None:
    raw_call(scenario(context), method, path, headers={}, content=b"{}")


@when('I send the OpenAI emulator a raw "{method:w}" to "{path:S}" with the body "{body:Q}"')
def step_raw_body(context: Context, method: str, path: str, body: str) -> None:
    content = {"-": None, "big": json.dumps({"model": MODEL, "input": "x" * 3000}).encode()}.get(body, body.encode())
    headers = {"authorization": f"Bearer {KEY}"}
    if body == "garbage":
        headers["content-type"] = "multipart/form-data"
    raw_call(scenario(context), method, path, headers=headers, content=content)


@when('I send the OpenAI emulator a raw "{method:w}" to "{path:S}" that fails inside the emulator')
def step_raw_crash(context: Context, method: str, path: str) -> None:
    s = scenario(context)
    transport = httpx2.ASGITransport(app=s.emu.app, raise_app_exceptions=False)
    raw_call(s, method, path, content=json.dumps({"model": MODEL, "input": "x"}).encode(), transport=transport)


@when('I send the OpenAI emulator a raw "{method:w}" to "{path:S}" as an Anthropic client')
def step_raw_anthropic(context: Context, method: str, path: str) -> None:
    raw_call(scenario(context), method, path, headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})


@when('I send the OpenAI emulator a raw "{method:w}" to "{path:S}" as an OpenAI client')
def step_raw_openai(context: Context, method: str, path: str) -> None:
    raw_call(scenario(context), method, path)


def _function_calls(completion: ChatCompletion) -> list[ChatCompletionMessageFunctionToolCall]:
    """The tool calls of the completion's first choice: function calls, as the emulator makes them."""
    calls = completion.choices[0].message.tool_calls or []
    assert all(isinstance(call, ChatCompletionMessageFunctionToolCall) for call in calls), calls
    return [call for call in calls if isinstance(call, ChatCompletionMessageFunctionToolCall)]


@then('the OpenAI emulator raw answer is {status:d} with type "{error_type:Q}" and code "{code:Q}"')
def step_raw_error(context: Context, status: int, error_type: str, code: str) -> None:
    response = scenario(context).raw
    assert response is not None
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"message", "type", "param", "code"}, body
    assert body["error"]["type"] == error_type, body
    assert body["error"]["code"] == (None if code == "-" else code), body
    assert response.headers["x-request-id"].startswith("req_"), response.headers


@then('the OpenAI emulator raw error message mentions "{text:Q}"')
def step_raw_mentions(context: Context, text: str) -> None:
    response = scenario(context).raw
    assert response is not None
    assert text in response.json()["error"]["message"], response.text


@then("the OpenAI emulator raw answer is Anthropic's list of {count:d} files")
def step_raw_anthropic_files(context: Context, count: int) -> None:
    """The Anthropic Files API answered, in its own shape: no OpenAI `object: list` envelope."""
    response = scenario(context).raw
    assert response is not None
    assert response.status_code == 200, response.text
    body = response.json()
    assert "object" not in body, body
    assert len(body["data"]) == count, body


@then("the OpenAI emulator raw answer is a list of {count:d} files")
def step_raw_list(context: Context, count: int) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == 200, response
    page = response.json()
    assert page["object"] == "list", page
    assert len(page["data"]) == count, page


@then('the OpenAI emulator call fails with {exception}, status {status:d}, type "{error_type:Q}" and code "{code:Q}"')
def step_fails(context: Context, exception: str, status: int, error_type: str, code: str) -> None:
    error = scenario(context).error
    assert isinstance(error, openai.APIStatusError), f"expected {exception}, got {error!r}"
    assert type(error).__name__ == exception, f"{type(error).__name__} is not {exception}"
    assert error.status_code == status, error.status_code
    body = error.response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"message", "type", "param", "code"}, body
    assert error.type == error_type, error.type
    assert error.code == (None if code == "-" else code), error.code
    assert error.request_id is not None, error.request_id
    assert error.request_id.startswith("req_"), error.request_id


@then('the OpenAI emulator error names the parameter "{param:Q}"')
def step_error_param(context: Context, param: str) -> None:
    error = scenario(context).error
    assert isinstance(error, openai.APIStatusError), error
    assert error.param == param, (error.param, error.message)


@then('the OpenAI emulator error message mentions "{text:Q}"')
def step_error_mentions(context: Context, text: str) -> None:
    error = scenario(context).error
    assert isinstance(error, openai.APIStatusError), error
    assert text in error.message, error.message


@then('the OpenAI emulator error message does not mention "{text:Q}"')
def step_error_not_mentions(context: Context, text: str) -> None:
    error = scenario(context).error
    assert isinstance(error, openai.APIStatusError), error
    assert text not in error.message, error.message


@then('the OpenAI emulator error has the header "{name:Q}" set to "{value:Q}"')
def step_error_header(context: Context, name: str, value: str) -> None:
    error = scenario(context).error
    assert isinstance(error, openai.APIStatusError), error
    assert error.response.headers.get(name) == value, dict(error.response.headers)


@then("the OpenAI emulator call succeeded")
def step_succeeded(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, repr(s.error)


# -- asking ----------------------------------------------------------------------------------------------------------


def _ask(context: Context, api: str, body: dict[str, Any], client: openai.AsyncOpenAI | None = None) -> None:
    s = scenario(context)
    sdk = client or s.sdk
    s.previous = s.reply
    if api == "Responses":
        s.reply = s.run(lambda: sdk.responses.create(**body))
    else:
        s.reply = s.run(lambda: sdk.chat.completions.create(**body))


def _question(api: str, text: str) -> dict[str, Any]:
    if api == "Responses":
        return {"model": MODEL, "input": text}
    return {"model": MODEL, "messages": [{"role": "user", "content": text}]}


def _changed(api: str, change: str) -> dict[str, Any]:
    body = _question(api, "Hello")
    for key, value in json.loads(change).items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


@when("I send the OpenAI emulator's {api} API the body changed by {change}")
def step_send_changed(context: Context, api: str, change: str) -> None:
    s = scenario(context)
    path = "/responses" if api == "Responses" else "/chat/completions"
    kind = Response if api == "Responses" else ChatCompletion
    body = _changed(api, change)
    s.reply = s.run(lambda: s.sdk.post(path, cast_to=kind, body=body))


@when("I ask the OpenAI emulator's {api} API the body changed by {change}")
def step_ask_changed(context: Context, api: str, change: str) -> None:
    _ask(context, api, _changed(api, change))


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}"')
def step_ask(context: Context, api: str, text: str) -> None:
    _ask(context, api, _question(api, text))


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}" again')
def step_ask_again(context: Context, api: str, text: str) -> None:
    _ask(context, api, _question(api, text))


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}" with the API key "{key:Q}"')
def step_ask_key(context: Context, api: str, text: str, key: str) -> None:
    s = scenario(context)
    client = s.emu.openai_client(api_key=key)
    s.cleanups.append(client.close)
    _ask(context, api, _question(api, text), client)


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}" with {retries:d} SDK retries')
def step_ask_retries(context: Context, api: str, text: str, retries: int) -> None:
    s = scenario(context)
    connect(s, max_retries=retries)
    _ask(context, api, _question(api, text))


def _tool(api: str) -> dict[str, Any]:
    if api == "Responses":
        return {"type": "function", "name": "lookup_tide", "parameters": LOOKUP_TIDE, "strict": True}
    return {"type": "function", "function": {"name": "lookup_tide", "parameters": LOOKUP_TIDE, "strict": True}}


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}" with the tool lookup_tide')
def step_ask_tool(context: Context, api: str, text: str) -> None:
    _ask(context, api, {**_question(api, text), "tools": [_tool(api)]})


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}" with the tool lookup_tide and the tool choice "{choice:Q}"')
def step_ask_tool_choice(context: Context, api: str, text: str, choice: str) -> None:
    chosen: Any = choice
    if choice == "lookup_tide":
        chosen = {"type": "function", "function": {"name": choice}}
        if api == "Responses":
            chosen = {"type": "function", "name": choice}
    _ask(context, api, {**_question(api, text), "tools": [_tool(api)], "tool_choice": chosen})


@when('I ask the OpenAI emulator\'s {api} API a {tokens:d}-token question "{topic:Q}"')
def step_ask_long(context: Context, api: str, tokens: int, topic: str) -> None:
    _ask(context, api, _question(api, _long(topic, tokens)))


@when('I ask the OpenAI emulator\'s {api} API a {tokens:d}-token question "{topic:Q}" kept for 24h')
def step_ask_long_kept(context: Context, api: str, tokens: int, topic: str) -> None:
    # A short turn first: a prefix under 1024 tokens, which is never cached.
    body = _question(api, "Hello")
    if api == "Responses":
        body["input"] = [{"role": "user", "content": "Hello"}, {"role": "user", "content": _long(topic, tokens)}]
    else:
        body["messages"].append({"role": "user", "content": _long(topic, tokens)})
    _ask(context, api, {**body, "prompt_cache_retention": "24h"})


def _long(topic: str, tokens: int) -> str:
    """A text of `tokens` * 4 + 1 characters: `tokens` + 1 tokens."""
    return ((topic + " ") * (tokens * 4))[: tokens * 4 + 1]


# -- answers ---------------------------------------------------------------------------------------------------------


def _response(context: Context) -> Response:
    s = scenario(context)
    assert s.error is None, repr(s.error)
    assert isinstance(s.reply, Response), s.reply
    return strict(s.reply)


def _completion(context: Context) -> ChatCompletion:
    s = scenario(context)
    assert s.error is None, repr(s.error)
    assert isinstance(s.reply, ChatCompletion), s.reply
    return strict(s.reply)


@then("the OpenAI emulator answer is a completed response")
def step_completed(context: Context) -> None:
    response = _response(context)
    assert response.status == "completed", response
    assert response.id.startswith("resp_"), response.id


@then('the OpenAI emulator answer is a completed response saying "{start}"')
def step_completed_saying(context: Context, start: str) -> None:
    response = _response(context)
    assert response.status == "completed", response
    assert response.incomplete_details is None, response
    assert response.output_text.startswith(start.replace('\\"', '"')), response.output_text
    assert response.output[0].type == "message", response.output


@then("the OpenAI emulator answer says the same as before")
def step_same(context: Context) -> None:
    s = scenario(context)
    assert s.reply.output_text == s.previous.output_text, (s.reply.output_text, s.previous.output_text)
    assert s.reply.id != s.previous.id, s.reply.id


@then('the OpenAI emulator answer is a chat completion saying "{start}" and stopping for "{finish:Q}"')
def step_chat_saying(context: Context, start: str, finish: str) -> None:
    completion = _completion(context)
    choice = completion.choices[0]
    assert completion.id.startswith("chatcmpl-"), completion.id
    assert choice.finish_reason == finish, choice
    assert choice.message.content is not None, choice.message
    assert choice.message.content.startswith(start.replace('\\"', '"')), choice.message.content


@then('the OpenAI emulator answer is a chat completion stopping for "{finish:Q}" after {tokens:d} output tokens')
def step_chat_stopped(context: Context, finish: str, tokens: int) -> None:
    completion = _completion(context)
    assert completion.choices[0].finish_reason == finish, completion
    assert completion.usage is not None, completion.usage
    assert completion.usage.completion_tokens == tokens, completion.usage


@then("the OpenAI emulator chat completion has {count:d} identical choices")
def step_chat_choices(context: Context, count: int) -> None:
    completion = _completion(context)
    assert [choice.index for choice in completion.choices] == list(range(count)), completion.choices
    assert len({choice.message.content for choice in completion.choices}) == 1, completion.choices


@then("the OpenAI emulator answer is an incomplete response, cut at {tokens:d} output tokens")
def step_incomplete(context: Context, tokens: int) -> None:
    response = _response(context)
    assert response.status == "incomplete", response.status
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.usage is not None, response.usage
    assert response.usage.output_tokens == tokens, response.usage
    assert len(response.output_text) == tokens * 4, response.output_text


@then("the OpenAI emulator answer used {tokens:d} input tokens, {cached:d} of them cached")
def step_usage(context: Context, tokens: int, cached: int) -> None:
    reply = scenario(context).reply
    if isinstance(reply, Response):
        usage = strict(reply).usage
        assert usage is not None
        found = (usage.input_tokens, usage.input_tokens_details.cached_tokens)
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens, usage
        assert usage.output_tokens_details.reasoning_tokens == 0, usage
    else:
        usage = _completion(context).usage
        assert usage is not None
        assert usage.prompt_tokens_details is not None
        found = (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens)
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, usage
    assert found == (tokens, cached), found


@then('the OpenAI emulator answer text is a JSON object with the key "{key:Q}"')
def step_json_object(context: Context, key: str) -> None:
    reply = scenario(context).reply
    text = (
        _response(context).output_text
        if isinstance(reply, Response)
        else _completion(context).choices[0].message.content
    )
    assert key in json.loads(text or ""), text


# -- structured output and tools -------------------------------------------------------------------------------------


@when('I ask the OpenAI emulator\'s {api} API to parse "{text:Q}" into a Voyage')
def step_parse(context: Context, api: str, text: str) -> None:
    s = scenario(context)
    if api == "Responses":
        s.reply = s.run(lambda: s.sdk.responses.parse(model=MODEL, input=text, text_format=Voyage))
    else:
        messages: Any = [{"role": "user", "content": text}]
        s.reply = s.run(lambda: s.sdk.chat.completions.parse(model=MODEL, messages=messages, response_format=Voyage))


@then("the OpenAI emulator parsed answer is a valid Voyage")
def step_parsed(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, repr(s.error)
    if hasattr(s.reply, "output_parsed"):
        strict(s.reply, Response)
        parsed = s.reply.output_parsed
    else:
        strict(s.reply, ChatCompletion)
        parsed = s.reply.choices[0].message.parsed
    assert isinstance(parsed, Voyage), parsed
    Voyage.model_validate(parsed.model_dump())


@then("the OpenAI emulator response calls lookup_tide with valid arguments")
def step_response_calls(context: Context) -> None:
    response = _response(context)
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) == 1, response.output
    assert calls[0].name == "lookup_tide", response.output
    assert calls[0].call_id.startswith("call_"), calls[0]
    assert (calls[0].id or "").startswith("fc_"), calls[0]
    LookupTide.model_validate_json(calls[0].arguments)


@then("the OpenAI emulator chat completion calls lookup_tide with valid arguments")
def step_chat_calls(context: Context) -> None:
    completion = _completion(context)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    calls = choice.message.tool_calls or []
    assert len(calls) == 1, calls
    assert calls[0].type == "function", calls
    assert calls[0].function.name == "lookup_tide", calls[0]
    assert calls[0].id.startswith("call_"), calls[0]
    LookupTide.model_validate_json(calls[0].function.arguments)


# -- images and files ------------------------------------------------------------------------------------------------

_IMAGE_MAKERS = {"png": ("image/png", png), "gif": ("image/gif", gif), "jpeg": ("image/jpeg", jpeg),
                 "webp": ("image/webp", webp)}  # fmt: skip


def _part(s: Any, api: str, description: str) -> dict[str, Any]:
    words = description.split()
    responses = api == "Responses"
    if words[0] == "image" and words[1] == "url":
        return _image(responses, "https://example.com/chart.png", "auto")
    if words[:2] == ["uploaded", "image"]:
        return {"type": "input_image", "file_id": s.files[words[2]], "detail": "auto"}
    if words[0] == "image":
        width, height = (int(side) for side in words[1].split("x"))
        kind = words[2] if len(words) > 2 and words[2] in _IMAGE_MAKERS else "png"
        media_type, make = _IMAGE_MAKERS[kind]
        detail = words[2] if len(words) > 3 and words[3] == "detail" else "auto"
        return _image(responses, data_url(media_type, make(width, height)), detail)
    if words[:2] == ["pdf", "of"]:
        raw = simple_pdf([PDF_PAGE] * int(words[2]))
        return _file(responses, file_data=data_url("application/pdf", raw), filename="tides.pdf")
    if words[:2] == ["uploaded", "pdf"]:
        return _file(responses, file_id=s.files[words[2]])
    if words[:2] == ["pdf", "url"]:
        return {"type": "input_file", "file_url": "https://example.com/tides.pdf"}
    return _file(responses, file_data=data_url("text/plain", b"hello world!"), filename="hello.txt")


def _image(responses: bool, url: str, detail: str) -> dict[str, Any]:
    if responses:
        return {"type": "input_image", "image_url": url, "detail": detail}
    return {"type": "image_url", "image_url": {"url": url, "detail": detail}}


def _file(responses: bool, **source: str) -> dict[str, Any]:
    return {"type": "input_file", **source} if responses else {"type": "file", "file": source}


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}" with these parts:')
def step_ask_parts(context: Context, api: str, text: str) -> None:
    s = scenario(context)
    parts = [_part(s, api, row["part"]) for row in context.table]
    s.expected_tokens = sum(int(row["tokens"]) for row in context.table)
    if api == "Responses":
        content: list[dict[str, Any]] = [{"type": "input_text", "text": text}, *parts]
        _ask(context, api, {"model": MODEL, "input": [{"role": "user", "content": content}]})
    else:
        _ask(
            context,
            api,
            {"model": MODEL, "messages": [{"role": "user", "content": [{"type": "text", "text": text}, *parts]}]},
        )


@then("the OpenAI emulator answer used the tokens of its parts and {more:d} more")
def step_part_tokens(context: Context, more: int) -> None:
    s = scenario(context)
    reply = s.reply
    assert s.error is None, repr(s.error)
    found = strict(reply).usage.input_tokens if isinstance(reply, Response) else strict(reply).usage.prompt_tokens
    assert found == s.expected_tokens + more, (found, s.expected_tokens, more)


# -- streams ---------------------------------------------------------------------------------------------------------


def _stream_body(api: str, question: str, tools: str) -> dict[str, Any]:
    body = _question(api, question.strip('"'))
    if tools == "the tool lookup_tide":
        body["tools"] = [_tool(api)]
    elif tools == "at most 16 tokens":
        body["max_output_tokens"] = 16
    return body


@when("I ask the OpenAI emulator's {api} API {question} with {tools}, streamed and not")
def step_stream_both(context: Context, api: str, question: str, tools: str) -> None:
    s = scenario(context)
    body = _stream_body(api, question, tools)

    async def streamed() -> Any:
        if api == "Responses":
            # The helper's get_final_response() wants `response.completed`; an incomplete answer ends otherwise.
            async with s.sdk.responses.stream(**body) as stream:
                async for event in stream:
                    if event.type == "response.completed" or event.type == "response.incomplete":
                        return event.response
            raise AssertionError("the stream ended without its final event")
        async with s.sdk.chat.completions.stream(**body) as stream:
            return await stream.get_final_completion()

    s.streamed = s.run(streamed)
    assert s.error is None, repr(s.error)
    _ask(context, api, body)
    path = "/v1/responses" if api == "Responses" else "/v1/chat/completions"
    extra = {"stream": True} if api == "Responses" else {"stream": True, "stream_options": {"include_usage": True}}
    raw_call(s, "POST", path, content=json.dumps({**body, **extra}).encode())


@when('I ask the OpenAI emulator\'s {api} API "{text:Q}", streamed and not')
def step_stream_plain(context: Context, api: str, text: str) -> None:
    step_stream_both(context, api, f'"{text}"', "no tools")


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        dropped = ("id", "call_id", "created_at", "completed_at", "parsed", "parsed_arguments")
        return {key: _without_ids(item) for key, item in value.items() if key not in dropped}
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


@then("the OpenAI emulator streamed response is the non-streamed one")
def step_streamed_response(context: Context) -> None:
    s = scenario(context)
    streamed = strict(s.streamed, Response)
    plain = _response(context)
    assert _without_ids(streamed.model_dump(mode="json")) == _without_ids(plain.model_dump(mode="json")), (
        streamed,
        plain,
    )


@then("the OpenAI emulator stream's events are in OpenAI's order, ending with \"{last}\"")
def step_stream_events(context: Context, last: str) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == 200, response
    assert response.headers["content-type"].startswith("text/event-stream"), response.headers
    text = response.text
    assert "[DONE]" not in text, text[-200:]
    events = [block for block in text.split("\n\n") if block]
    names = [block.split("\n")[0].removeprefix("event: ") for block in events]
    datas = [json.loads(block.split("\n")[1].removeprefix("data: ")) for block in events]
    assert [data["type"] for data in datas] == names, names
    assert [data["sequence_number"] for data in datas] == list(range(len(datas))), datas
    assert names[:2] == ["response.created", "response.in_progress"], names
    assert names[-1] == last, names
    assert "response.output_item.added" in names, names
    assert "response.output_item.done" in names, names
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    for data in datas:
        adapter.validate_python(data)


@then("the OpenAI emulator streamed completion is the non-streamed one")
def step_streamed_completion(context: Context) -> None:
    s = scenario(context)
    streamed = strict(s.streamed, ChatCompletion)
    plain = _completion(context)

    def projection(completion: ChatCompletion) -> Any:
        choice = completion.choices[0]
        calls = [(call.function.name, call.function.arguments) for call in _function_calls(completion)]
        return choice.message.content, calls, choice.finish_reason, completion.model

    assert projection(streamed) == projection(plain), (projection(streamed), projection(plain))
    # Without `include_usage` there is no usage chunk: the raw stream, which asked for one, is checked for it.
    assert streamed.usage is None, streamed.usage
    s.snapshot["usage"] = plain.usage


@then('the OpenAI emulator chat stream ends with a usage chunk and "{done:Q}"')
def step_chat_stream_end(context: Context, done: str) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == 200, response
    blocks = [block for block in response.text.split("\n\n") if block]
    assert blocks[-1] == done, blocks[-1]
    assert all(block.startswith("data: ") for block in blocks), blocks
    from openai.types.chat import ChatCompletionChunk

    chunks = [ChatCompletionChunk.model_validate_json(block.removeprefix("data: ")) for block in blocks[:-1]]
    assert chunks[-1].choices == [], chunks[-1]
    assert chunks[-1].usage == scenario(context).snapshot["usage"], chunks[-1]
    assert all(chunk.usage is None for chunk in chunks[:-1]), chunks
    assert chunks[-2].choices[0].finish_reason is not None, chunks[-2]


# -- embeddings ------------------------------------------------------------------------------------------------------


def _vectors(reply: Any) -> list[list[float]]:
    # The SDK types an embedding as floats even when it asks for base64, which arrives as a string.
    data = reply.to_dict(mode="json")
    strict({**data, "data": [{**item, "embedding": [0.0]} for item in data["data"]]}, CreateEmbeddingResponse)
    vectors: list[list[float]] = []
    for item in reply.data:
        found: Any = item.embedding
        if isinstance(found, str):
            raw = base64.b64decode(found)
            found = list(struct.unpack(f"<{len(raw) // 4}f", raw))
        vectors.append(found)
    return vectors


@when('I ask the OpenAI emulator for embeddings of "{first:Q}" and "{second:Q}" with {params}')
def step_embed_two(context: Context, first: str, second: str, params: str) -> None:
    s = scenario(context)
    s.previous = s.vectors
    s.reply = s.run(lambda: s.sdk.embeddings.create(input=[first, second], **json.loads(params)))


@when('I ask the OpenAI emulator for embeddings of "{text:Q}" with {params}')
def step_embed_one(context: Context, text: str, params: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.embeddings.create(input=text, **json.loads(params)))


@when("I ask the OpenAI emulator for embeddings of tokens {tokens} with {params}")
def step_embed_tokens(context: Context, tokens: str, params: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.embeddings.create(input=json.loads(tokens), **json.loads(params)))


@then("the OpenAI emulator gives {count:d} unit vectors of {size:d} numbers, {tokens:d} tokens")
def step_vectors(context: Context, count: int, size: int, tokens: int) -> None:
    s = scenario(context)
    assert s.error is None, repr(s.error)
    s.vectors = _vectors(s.reply)
    assert len(s.vectors) == count, [len(v) for v in s.vectors]
    assert all(len(vector) == size for vector in s.vectors), [len(v) for v in s.vectors]
    for vector in s.vectors:
        assert math.isclose(math.sqrt(sum(value * value for value in vector)), 1.0, rel_tol=1e-5), vector[:3]
    assert s.reply.usage.prompt_tokens == tokens == s.reply.usage.total_tokens, s.reply.usage


@then("the OpenAI emulator gives the same vectors as before")
def step_same_vectors(context: Context) -> None:
    s = scenario(context)
    assert _vectors(s.reply) == s.vectors


@when("I send the OpenAI emulator's Embeddings API the body {body}")
def step_embed_raw(context: Context, body: str) -> None:
    s = scenario(context)
    payload = json.loads(body)
    s.reply = s.run(lambda: s.sdk.post("/embeddings", cast_to=CreateEmbeddingResponse, body=payload))
