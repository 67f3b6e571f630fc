"""Steps of features/emulator_gemini.feature: the official google-genai SDK against the emulator's Gemini API, in
process (its `httpx_async_client` over the emulator's transport) or over a socket (`GOOGLE_GEMINI_BASE_URL`). Every
step text names "Gemini", so that it cannot clash with the other step modules."""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import _support  # noqa: F401  (registers the Q type of quoted step text)
import httpx2
import openai
from google import genai
from google.genai import errors, types
from pydantic import BaseModel, ConfigDict, Field
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator, serve_in_thread

KEY = "AIza-gemini-scenario-key"
LOOKUP_TIDE: dict[str, Any] = {
    "type": "object",
    "properties": {"station": {"type": "string", "minLength": 2}, "days": {"type": "integer", "minimum": 1}},
    "required": ["station", "days"],
}
VOYAGE: dict[str, Any] = {
    "type": "object",
    "properties": {"port": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 30}},
    "required": ["port", "days"],
}


class LookupTide(BaseModel):
    model_config = ConfigDict(strict=True)
    station: str = Field(min_length=2)
    days: int = Field(ge=1)


class Voyage(BaseModel):
    model_config = ConfigDict(strict=True)
    port: str
    days: int = Field(ge=1, le=30)


@dataclass
class GeminiScenario:
    emulator: Emulator
    version: str = "v1beta"
    client: genai.Client | None = None
    answer: types.GenerateContentResponse | None = None
    previous: types.GenerateContentResponse | None = None
    chunks: list[types.GenerateContentResponse] = field(default_factory=list[types.GenerateContentResponse])
    error: errors.APIError | None = None
    raw: httpx2.Response | None = None


class Context(StepContext, Protocol):
    gemini: GeminiScenario
    """The scenario's emulator and the google-genai client pointed at it."""


def _client(emulator: Emulator, version: str, key: str = KEY) -> genai.Client:
    options = types.HttpOptions(
        base_url=emulator.base_url, api_version=version, httpx_async_client=emulator.http_client()
    )
    return genai.Client(api_key=key, http_options=options)


def _start(context: Context, version: str, api_keys: list[str] | None = None) -> GeminiScenario:
    emulator = Emulator(clock=ManualClock(), api_keys=api_keys)
    s = context.gemini = GeminiScenario(emulator=emulator, version=version)
    s.client = _client(emulator, version)
    return s


def _s(context: Context) -> GeminiScenario:
    return context.gemini


def _call(
    context: Context,
    model: str,
    prompt: str,
    config: types.GenerateContentConfig | None = None,
    client: genai.Client | None = None,
) -> None:
    s = _s(context)
    chosen = client or s.client
    assert chosen is not None
    s.previous, s.answer, s.error = s.answer, None, None
    try:
        s.answer = context.runner.run(chosen.aio.models.generate_content(model=model, contents=prompt, config=config))
    except errors.APIError as error:
        s.error = error


def _text(answer: types.GenerateContentResponse | None) -> str:
    assert answer is not None
    assert answer.candidates, answer
    content = answer.candidates[0].content
    assert content is not None
    assert content.parts is not None
    return "".join(part.text or "" for part in content.parts if not part.thought)


@given('the Gemini emulator runs on a manual clock, called through API version "{version}"')
def step_start(context: Context, version: str) -> None:
    _start(context, version)


@given('the Gemini emulator runs on a manual clock and accepts only the key "{key}"')
def step_start_keys(context: Context, key: str) -> None:
    _start(context, "v1beta", [key])


@given("the Gemini emulator serves on a socket and GOOGLE_GEMINI_BASE_URL names it")
def step_socket(context: Context) -> None:
    emulator = Emulator()
    context.gemini = GeminiScenario(emulator=emulator)
    stack = ExitStack()
    server = stack.enter_context(serve_in_thread(emulator))
    context.cleanups.append(stack.close)
    before = os.environ.get("GOOGLE_GEMINI_BASE_URL")
    os.environ["GOOGLE_GEMINI_BASE_URL"] = server.url

    def restore() -> None:
        if before is None:
            os.environ.pop("GOOGLE_GEMINI_BASE_URL", None)
        else:
            os.environ["GOOGLE_GEMINI_BASE_URL"] = before

    context.cleanups.append(restore)


@when('a google-genai client made with only an API key asks "{model}" "{prompt}"')
def step_plain_client(context: Context, model: str, prompt: str) -> None:
    _call(context, model, prompt, client=genai.Client(api_key=KEY))


@when('I ask the Gemini emulator\'s "{model}" "{prompt}"')
def step_ask(context: Context, model: str, prompt: str) -> None:
    _call(context, model, prompt)


@when('I ask the Gemini emulator\'s "{model}" "{prompt}" again')
def step_ask_again(context: Context, model: str, prompt: str) -> None:
    _call(context, model, prompt)


@when('I ask the Gemini emulator\'s "{model}" "{prompt}" given {setting}')
def step_ask_with(context: Context, model: str, prompt: str, setting: str) -> None:
    configs = {
        "nothing more": types.GenerateContentConfig(),
        "a temperature of 2.5": types.GenerateContentConfig(temperature=2.5),
        "a top_p of 1.5": types.GenerateContentConfig(top_p=1.5),
        "9000 output tokens": types.GenerateContentConfig(max_output_tokens=9000),
        "six stop sequences": types.GenerateContentConfig(stop_sequences=[f"s{n}" for n in range(6)]),
    }
    _call(context, model, prompt, configs[setting])


@when('I ask the Gemini emulator\'s "{model}" "{prompt}" with the function "{name}" forced')
def step_ask_tool(context: Context, model: str, prompt: str, name: str) -> None:
    declaration = types.FunctionDeclaration(name=name, description="The tide", parameters_json_schema=LOOKUP_TIDE)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.ANY)
        ),
    )
    _call(context, model, prompt, config)


@when('I ask the Gemini emulator\'s "{model}" "{prompt}" for JSON of a voyage schema')
def step_ask_json(context: Context, model: str, prompt: str) -> None:
    config = types.GenerateContentConfig(response_mime_type="application/json", response_json_schema=VOYAGE)
    _call(context, model, prompt, config)


@when('I ask the Gemini emulator\'s "{model}" "{prompt}" stopping at the word {stop}')
def step_ask_stop(context: Context, model: str, prompt: str, stop: str) -> None:
    _call(context, model, prompt, types.GenerateContentConfig(stop_sequences=[stop]))


@when('I ask the Gemini emulator with the key "{key}"')
def step_ask_key(context: Context, key: str) -> None:
    s = _s(context)
    _call(context, "gemini-2.5-flash", "Hello", client=_client(s.emulator, s.version, key))


@when("I call the Gemini emulator raw without a key")
def step_raw(context: Context) -> None:
    s = _s(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            return await http.post("/v1beta/models/gemini-2.5-flash:generateContent", json={"contents": []})

    s.raw = context.runner.run(send())


@when("I post the Gemini emulator's generateContent the body {body}")
def step_raw_body(context: Context, body: str) -> None:
    """A body as a client of its own might send it, not as the SDK builds it: the emulator reads what arrives."""
    s = _s(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            return await http.post(
                f"/{s.version}/models/gemini-2.5-flash:generateContent",
                content=body.encode(),
                headers={"x-goog-api-key": KEY, "content-type": "application/json"},
            )

    s.raw = context.runner.run(send())


@when('I post the Gemini emulator\'s streamGenerateContent "{prompt}" without asking for server-sent events')
def step_raw_stream(context: Context, prompt: str) -> None:
    s = _s(context)

    async def send() -> httpx2.Response:
        async with s.emulator.http_client() as http:
            return await http.post(
                f"/{s.version}/models/gemini-2.5-flash:streamGenerateContent",
                json={"contents": [{"role": "user", "parts": [{"text": prompt}]}]},
                headers={"x-goog-api-key": KEY},
            )

    s.raw = context.runner.run(send())


@then('the Gemini emulator raw answer is one JSON array of pieces whose text quotes "{prompt}"')
def step_raw_array(context: Context, prompt: str) -> None:
    raw = _s(context).raw
    assert raw is not None
    assert raw.status_code == 200, (raw, raw.text)
    assert raw.headers["content-type"].startswith("application/json"), raw.headers
    pieces = raw.json()
    assert isinstance(pieces, list), pieces
    assert len(pieces) > 1, pieces
    text = "".join(
        part.get("text", "") for piece in pieces for c in piece.get("candidates", []) for part in c["content"]["parts"]
    )
    assert f'"{prompt}"' in text, text
    assert pieces[-1]["candidates"][0]["finishReason"] == "STOP", pieces[-1]


@then('the Gemini emulator raw answer is {code:d} "{status}" mentioning "{mention}"')
def step_raw_answer_mentioning(context: Context, code: int, status: str, mention: str) -> None:
    raw = _s(context).raw
    assert raw is not None
    assert raw.status_code == code, (raw, raw.text)
    error = raw.json()["error"]
    assert error["status"] == status, error
    assert mention in error["message"], error


@when('I stream the Gemini emulator\'s "{model}" "{prompt}"')
def step_stream(context: Context, model: str, prompt: str) -> None:
    s = _s(context)
    assert s.client is not None
    client = s.client

    async def stream() -> list[types.GenerateContentResponse]:
        return [chunk async for chunk in await client.aio.models.generate_content_stream(model=model, contents=prompt)]

    s.chunks = context.runner.run(stream())
    _call(context, model, prompt)


@when('the Gemini emulator\'s "{route}" fails next with {status:d} asking for a wait of {seconds:d} seconds')
def step_fault_wait(context: Context, route: str, status: int, seconds: int) -> None:
    _s(context).emulator.faults.fail_next(route, status, retry_after=seconds)


@when('the Gemini emulator\'s "{route}" fails next with {status:d}')
def step_fault(context: Context, route: str, status: int) -> None:
    _s(context).emulator.faults.fail_next(route, status)


@then('the Gemini emulator answer\'s text quotes "{prompt}"')
def step_quotes(context: Context, prompt: str) -> None:
    text = _text(_s(context).answer)
    assert f'"{prompt}"' in text, text


@then('the Gemini emulator answer finished with "{reason}"')
def step_finished(context: Context, reason: str) -> None:
    answer = _s(context).answer
    assert answer is not None
    assert answer.candidates
    assert answer.candidates[0].finish_reason == reason, answer.candidates[0].finish_reason


@then("the Gemini emulator answer's usage adds up, with thinking tokens counted apart")
def step_usage(context: Context) -> None:
    usage = _s(context).answer.usage_metadata  # type: ignore[union-attr]
    assert usage is not None
    assert usage.prompt_token_count, usage
    assert usage.candidates_token_count, usage
    assert usage.thoughts_token_count, usage
    total = usage.prompt_token_count + usage.candidates_token_count + usage.thoughts_token_count
    assert usage.total_token_count == total, usage


@then("the Gemini emulator answer is the same text as before")
def step_same(context: Context) -> None:
    s = _s(context)
    assert _text(s.answer) == _text(s.previous)


@then("the Gemini emulator answer reports no thinking tokens")
def step_no_thinking(context: Context) -> None:
    usage = _s(context).answer.usage_metadata  # type: ignore[union-attr]
    assert usage is not None
    assert usage.thoughts_token_count is None, usage


@then('the Gemini emulator counts the same prompt tokens for "{prompt}"')
def step_count(context: Context, prompt: str) -> None:
    s = _s(context)
    assert s.client is not None
    assert s.answer is not None
    assert s.answer.usage_metadata is not None
    counted = context.runner.run(s.client.aio.models.count_tokens(model="gemini-2.0-flash", contents=prompt))
    assert counted.total_tokens == s.answer.usage_metadata.prompt_token_count, counted


@then('the Gemini emulator lists "{name}" with a window of {window:d} tokens')
def step_lists(context: Context, name: str, window: int) -> None:
    s = _s(context)
    assert s.client is not None
    client = s.client

    async def names() -> dict[str, int | None]:
        return {model.name or "": model.input_token_limit async for model in await client.aio.models.list()}

    listed = context.runner.run(names())
    assert listed.get(name) == window, listed


@then('the Gemini emulator describes "{model}" with at most {limit:d} output tokens')
def step_describes(context: Context, model: str, limit: int) -> None:
    s = _s(context)
    assert s.client is not None
    described = context.runner.run(s.client.aio.models.get(model=model))
    assert described.output_token_limit == limit, described


@then('an OpenAI caller of the same emulator still lists OpenAI\'s models at "/v1/models"')
def step_openai_models(context: Context) -> None:
    client: openai.AsyncOpenAI = _s(context).emulator.openai_client()

    async def listed() -> list[str]:
        try:
            return [model.id async for model in client.models.list()]
        finally:
            await client.close()

    ids = context.runner.run(listed())
    assert ids
    assert not any(model.startswith("gemini") for model in ids), ids


@then("the Gemini emulator stream came in more than one piece")
def step_pieces(context: Context) -> None:
    assert len(_s(context).chunks) > 1, _s(context).chunks


@then("the Gemini emulator stream's pieces make the text a plain call gives")
def step_pieces_text(context: Context) -> None:
    s = _s(context)
    assert "".join(_text(chunk) for chunk in s.chunks) == _text(s.answer)


@then('only the last piece of the Gemini emulator stream says "{reason}" and the answer\'s usage')
def step_last_piece(context: Context, reason: str) -> None:
    s = _s(context)
    reasons = [chunk.candidates[0].finish_reason if chunk.candidates else None for chunk in s.chunks]
    assert reasons[-1] == reason, reasons
    assert not any(reasons[:-1]), reasons
    last, whole = s.chunks[-1].usage_metadata, s.answer.usage_metadata  # type: ignore[union-attr]
    assert last is not None
    assert whole is not None
    assert last.total_token_count == whole.total_token_count


@then('the Gemini emulator answer calls "{name}" with arguments valid against its declaration')
def step_called(context: Context, name: str) -> None:
    answer = _s(context).answer
    assert answer is not None
    assert answer.function_calls, answer
    call = answer.function_calls[0]
    assert call.name == name
    LookupTide.model_validate(call.args)


@then("the Gemini emulator answer's text is JSON valid against the voyage schema")
def step_json(context: Context) -> None:
    Voyage.model_validate(json.loads(_text(_s(context).answer)))


@then('the Gemini emulator answer\'s text is "{text}"')
def step_text_is(context: Context, text: str) -> None:
    assert _text(_s(context).answer) == text, _text(_s(context).answer)


@then('the Gemini emulator call fails with {code:d} "{status}" mentioning "{mention}"')
def step_fails(context: Context, code: int, status: str, mention: str) -> None:
    error = _s(context).error
    assert error is not None, _s(context).answer
    assert (error.code, error.status) == (code, status), error
    assert mention in (error.message or ""), error.message


@then('the Gemini emulator error does not mention "{text}"')
def step_not_mention(context: Context, text: str) -> None:
    assert text not in str(_s(context).error)


@then('the Gemini emulator error asks for a retry delay of "{delay}"')
def step_retry_delay(context: Context, delay: str) -> None:
    error = _s(context).error
    assert error is not None
    body = error.details
    assert isinstance(body, dict), body
    details = cast("dict[str, dict[str, object]]", body)["error"]["details"]
    assert isinstance(details, list), details
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay} in details, details


@then('the Gemini emulator raw answer is {code:d} "{status}"')
def step_raw_answer(context: Context, code: int, status: str) -> None:
    raw = _s(context).raw
    assert raw is not None
    assert raw.status_code == code, raw
    assert raw.json()["error"]["status"] == status, raw.json()


@then('the Gemini emulator answer finished with "{reason}" with no content and a blocked safety rating')
def step_safety(context: Context, reason: str) -> None:
    answer = _s(context).answer
    assert answer is not None
    assert answer.candidates
    candidate = answer.candidates[0]
    assert candidate.finish_reason == reason, candidate
    assert candidate.content is None, candidate
    assert any(rating.blocked for rating in candidate.safety_ratings or []), candidate.safety_ratings


@then('the Gemini emulator answer finished with "{reason}" with no content')
def step_no_content(context: Context, reason: str) -> None:
    answer = _s(context).answer
    assert answer is not None
    assert answer.candidates
    assert answer.candidates[0].finish_reason == reason
    assert answer.candidates[0].content is None


@then('the Gemini emulator answer has no candidate and its prompt was blocked for "{reason}"')
def step_blocked(context: Context, reason: str) -> None:
    answer = _s(context).answer
    assert answer is not None
    assert not answer.candidates
    assert answer.prompt_feedback is not None
    assert answer.prompt_feedback.block_reason == reason, answer.prompt_feedback
