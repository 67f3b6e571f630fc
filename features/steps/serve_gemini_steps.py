"""Steps for `lowtide serve` speaking the Gemini API: an actor whose batch provider is a fake one (`lowtide.testing`)
serving Gemini's wire (`GEMINI_WIRES`), served on a loopback socket, and the official google-genai SDK (and plain HTTP,
and a raw socket where the bytes matter) as its clients. The fake codec here also carries tools and calls functions,
and records each request it encoded, so that a scenario sees what the SDK's request became."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

import httpx
from google import genai
from google.genai import errors, types
from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorRequest, ChatMessage, ProviderRegistry, SystemClock
from lowtide.actor import Actor
from lowtide.http.server import app_in_thread
from lowtide.ledger.memory import MemoryLedger
from lowtide.providers import ToolCall, ToolResult, Wire, answer_of, pieces_of
from lowtide.providers.gemini.serving import GEMINI_WIRES
from lowtide.serve.app import build_app
from lowtide.testing import Failure, FakeBatch, FakeBatchAPI, FakeBatchCodec, FakeBatchProvider, FakeRequest


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    gemini_served: GeminiServed


_MODEL = "gemini-2.5-flash"
_KEY = "local-secret"
_TIDE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"port": {"type": "string"}},
    "required": ["port"],
}


class Tide(BaseModel):
    place: str
    height_m: float


def _respond(request: FakeRequest) -> str:
    """The fake model: a function call when asked for a tide, JSON when asked for JSON, else the prompt echoed."""
    if request.prompt.startswith("tide at "):
        return "CALL tide_height " + json.dumps({"port": request.prompt.removeprefix("tide at ")})
    if request.prompt.startswith("JSON tide at "):
        return json.dumps({"place": request.prompt.removeprefix("JSON tide at "), "height_m": 4.2})
    return f"tide: {request.prompt}"


class _GeminiCodec(FakeBatchCodec):
    """The fake codec, taking tools and function calls and results too (as text), answering `CALL name {json}` as a
    tool use, and keeping every request it encoded."""

    def __init__(self, name: str, *, price_per_request: Decimal) -> None:
        super().__init__(name, price_per_request=price_per_request)
        self.encoded: list[ActorRequest] = []

    def encode_request(self, request: ActorRequest) -> dict[str, object]:
        self.encoded.append(request)
        return super().encode_request(request.model_copy(update={"tools": []}))

    def _text(self, message: ChatMessage, index: int) -> str:
        if isinstance(message.content, str):
            return message.content
        said: list[str] = []
        for piece in pieces_of(message.role, message.content, index, rules=self._content):
            if isinstance(piece, ToolCall):
                said.append(f"called {piece.name} {piece.arguments}")
            elif isinstance(piece, ToolResult):
                said.append("the result was " + "".join(getattr(part, "text", "") for part in piece.parts))
            else:
                said.append(getattr(piece, "text", ""))
        return "".join(said)

    def _answer(self, reply: Any, *, batch_id: str, custom_id: str, request_id: str | None) -> Any:
        settled, stored = super()._answer(reply, batch_id=batch_id, custom_id=custom_id, request_id=request_id)
        text = str(reply["text"])
        if not text.startswith("CALL "):
            return settled, stored
        _, name, arguments = text.split(" ", 2)
        block = {"type": "tool_use", "id": "call-1", "name": name, "input": json.loads(arguments)}
        stored = {**stored, "text": "", "content": [block], "stop_reason": "tool_use"}
        held: Any = settled
        answer = answer_of(stored, text_alone=False, usage=held.usage, cost=held.cost, mode=held.mode)
        return answer, stored


@dataclass
class _API(FakeBatchAPI):
    """The fake batch API, failing the requests of the next creates when a scenario says so."""

    failing: list[Failure] = field(default_factory=list[Failure])

    def create(self, body: bytes, *, intent_id: str) -> FakeBatch:
        batch = super().create(body, intent_id=intent_id)
        for request in batch.requests:
            if self.failing:
                batch.outcomes[request.custom_id] = self.failing.pop(0)
        return batch


class _GeminiFake(FakeBatchProvider):
    """A fake batch provider serving Gemini's wire, as the Gemini batch provider does."""

    def serving_wires(self) -> Sequence[Wire]:
        return GEMINI_WIRES


@dataclass
class GeminiServed:
    url: str
    api: _API
    codec: _GeminiCodec
    answers: list[types.GenerateContentResponse] = field(default_factory=list[types.GenerateContentResponse])
    chunks: list[types.GenerateContentResponse] = field(default_factory=list[types.GenerateContentResponse])
    error: errors.APIError | None = None
    status: int = 0
    body: dict[str, Any] = field(default_factory=dict[str, Any])
    contents: list[types.Content] = field(default_factory=list[types.Content])


def _served(context: Context) -> GeminiServed:
    return context.gemini_served


@given('lowtide serve runs a batch actor of "{model}" speaking Gemini\'s API, with client key "{key}"')
def serve_gemini(context: Context, model: str, key: str) -> None:
    clock = SystemClock()
    api = _API(clock, processing_seconds=0.05, respond=_respond)
    registry = ProviderRegistry()
    provider = _GeminiFake.register(registry, api, name="gemini-fake")
    codec = _GeminiCodec("gemini-fake", price_per_request=api.price_per_request)
    provider.codec = codec
    settings = {
        "name": "served-gemini",
        "provider": "gemini-fake",
        "model": model,
        "max_tokens": 256,
        "batch_processing": "batch",
        "batch": {"poll_interval": 0.02, "coalesce_window": 0.02},
    }
    actor = Actor(settings, registry=registry, clock=clock, ledger=MemoryLedger())
    stack = ExitStack()
    context.cleanups.append(stack.close)
    url, _ = stack.enter_context(app_in_thread(build_app(actor, client_keys=[key])))
    context.gemini_served = GeminiServed(url=url, api=api, codec=codec)


# The SDK.


def _client(context: Context, *, key: str = _KEY, version: str = "v1beta", headers: dict[str, str] | None = None):
    options = types.HttpOptions(base_url=_served(context).url, api_version=version, headers=headers)
    return genai.Client(api_key=key, http_options=options)


def _ask(
    context: Context,
    contents: Any,
    config: types.GenerateContentConfig | None = None,
    **client: Any,
) -> None:
    served = _served(context)
    with _client(context, **client) as sdk:
        try:
            served.answers.append(sdk.models.generate_content(model=_MODEL, contents=contents, config=config))
        except errors.APIError as error:
            served.error = error


@when('the Gemini SDK asks lowtide serve "{prompt}" under API version {version}')
def ask_version(context: Context, prompt: str, version: str) -> None:
    _ask(context, prompt, version=version)


@when('the Gemini SDK asks lowtide serve "{prompt}" with the key "{key}" and fails')
def ask_with_key(context: Context, prompt: str, key: str) -> None:
    _ask(context, prompt, key=key)


@when('the Gemini SDK asks lowtide serve "{prompt}" with the Idempotency-Key "{key}"')
def ask_idempotent(context: Context, prompt: str, key: str) -> None:
    _ask(context, prompt, headers={"Idempotency-Key": key})


@when('the Gemini SDK asks lowtide serve "{prompt}" with a temperature of {temperature:g}')
def ask_temperature(context: Context, prompt: str, temperature: float) -> None:
    _ask(context, prompt, types.GenerateContentConfig(temperature=temperature))


@when('the Gemini SDK asks lowtide serve "{prompt}" with')
def ask_with(context: Context, prompt: str) -> None:
    given = {row["setting"]: row["value"] for row in context.table}
    config = types.GenerateContentConfig(
        system_instruction=given["system_instruction"],
        temperature=float(given["temperature"]),
        top_p=float(given["top_p"]),
        top_k=float(given["top_k"]),
        max_output_tokens=int(given["max_output_tokens"]),
        stop_sequences=[given["stop_sequences"]],
        seed=int(given["seed"]),
        thinking_config=types.ThinkingConfig(thinking_budget=int(given["thinking_budget"])),
    )
    _ask(context, prompt, config)


@when('the Gemini SDK asks lowtide serve "{prompt}" streamed')
def ask_streamed(context: Context, prompt: str) -> None:
    with _client(context) as sdk:
        _served(context).chunks.extend(sdk.models.generate_content_stream(model=_MODEL, contents=prompt))


def _tide_tool() -> types.Tool:
    declaration = types.FunctionDeclaration(
        name="tide_height", description="The height of the tide at a port.", parameters_json_schema=_TIDE_PARAMETERS
    )
    return types.Tool(function_declarations=[declaration])


def _tool_config(mode: str | None) -> types.GenerateContentConfig:
    calling = None
    if mode is not None:
        calling = types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode(mode), allowed_function_names=["tide_height"]
            )
        )
    return types.GenerateContentConfig(
        tools=[_tide_tool()],
        tool_config=calling,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


@when('the Gemini SDK asks lowtide serve "{prompt}" with the function tide_height declared')
@when('the Gemini SDK asks lowtide serve "{prompt}" with the function tide_height declared, in mode {mode}')
def ask_with_tool(context: Context, prompt: str, mode: str | None = None) -> None:
    served = _served(context)
    served.contents = [types.Content(role="user", parts=[types.Part.from_text(text=prompt)])]
    _ask(context, served.contents, _tool_config(mode))


@when("the Gemini SDK sends the function's response {response} back with the conversation")
def send_function_response(context: Context, response: str) -> None:
    served = _served(context)
    answer = served.answers[-1]
    assert answer.candidates, answer
    assert answer.candidates[0].content, answer
    assert answer.function_calls, answer
    called, call = answer.candidates[0].content, answer.function_calls[0]
    answered = types.Part.from_function_response(name=str(call.name), response=json.loads(response))
    contents = [*served.contents, called, types.Content(role="user", parts=[answered])]
    _ask(context, contents, _tool_config(None))


@when('the Gemini SDK asks lowtide serve "{prompt}" for JSON of the schema of a Tide')
def ask_json(context: Context, prompt: str) -> None:
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=Tide.model_json_schema()
    )
    _ask(context, prompt, config)


@when('the Gemini SDK asks lowtide serve "{prompt}" and fails')
@when('the Gemini SDK asks lowtide serve "{prompt}"')
def ask(context: Context, prompt: str) -> None:
    _ask(context, prompt)


# What the SDK saw.


def _answer(context: Context) -> types.GenerateContentResponse:
    served = _served(context)
    assert served.error is None, served.error
    return served.answers[-1]


@then('the Gemini SDK\'s answer is "{text}"')
def answer_is(context: Context, text: str) -> None:
    assert _answer(context).text == text, _answer(context)


@then('both Gemini answers are "{text}"')
def both_answers(context: Context, text: str) -> None:
    assert [answer.text for answer in _served(context).answers] == [text, text], _served(context).answers


@then('the answer\'s finish reason is "{reason}", its model version "{model}" and its response id is set')
def answer_finish(context: Context, reason: str, model: str) -> None:
    answer = _answer(context)
    assert answer.candidates, answer
    assert answer.candidates[0].finish_reason == types.FinishReason(reason), answer
    assert answer.model_version == model, answer
    assert answer.response_id, answer


@then("the answer's usage counts {prompt:d} prompt tokens, {output:d} candidate tokens and {total:d} in total")
def answer_usage(context: Context, prompt: int, output: int, total: int) -> None:
    usage = _answer(context).usage_metadata
    assert usage is not None
    seen = (usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count)
    assert seen == (prompt, output, total), usage


@then('the stream held {count:d} chunk, whose text is "{text}"')
def stream_held(context: Context, count: int, text: str) -> None:
    chunks = _served(context).chunks
    assert len(chunks) == count, chunks
    assert chunks[0].text == text, chunks


@then('the Gemini SDK\'s answer calls {name} with {arguments}, and the finish reason is "{reason}"')
def answer_calls(context: Context, name: str, arguments: str, reason: str) -> None:
    answer = _answer(context)
    calls = answer.function_calls or []
    assert [(call.name, call.args) for call in calls] == [(name, json.loads(arguments))], answer
    assert calls[0].id == "call-1", calls
    assert answer.candidates, answer
    assert answer.candidates[0].finish_reason == types.FinishReason(reason), answer


@then('the Gemini SDK\'s parsed answer is a Tide at "{place}" of {height:g} m')
def parsed_tide(context: Context, place: str, height: float) -> None:
    assert Tide.model_validate_json(_answer(context).text or "") == Tide(place=place, height_m=height)


@then('the Gemini SDK raised its ClientError with code {code:d} and status "{status}"')
def sdk_raised(context: Context, code: int, status: str) -> None:
    error = _served(context).error
    assert isinstance(error, errors.ClientError), error
    assert (error.code, error.status) == (code, status), (error.code, error.status, error.message)


# What the batch carried.


def _carried(context: Context) -> ActorRequest:
    return _served(context).codec.encoded[-1]


@then('the request the batch carried has the system prompt "{system}"')
def carried_system(context: Context, system: str) -> None:
    assert _carried(context).system == system, _carried(context)


@then(
    "the request the batch carried has temperature {temperature:g}, top_p {top_p:g}, top_k {top_k:d},"
    ' max_tokens {max_tokens:d} and stop sequence "{stop}"'
)
def carried_settings(
    context: Context, temperature: float, top_p: float, top_k: int, max_tokens: int, stop: str
) -> None:
    request = _carried(context)
    seen = (request.temperature, request.top_p, request.top_k, request.max_tokens, request.stop_sequences)
    assert seen == (temperature, top_p, top_k, max_tokens, [stop]), request


@then("the request the batch carried has the Gemini option {name} {value:d}")
def carried_option(context: Context, name: str, value: int) -> None:
    assert _carried(context).provider_options["gemini"][name] == value, _carried(context)


@then('the request the batch carried sends the generation config\'s "{name}" as it came')
def carried_extra(context: Context, name: str) -> None:
    generation = _carried(context).extra_params["generationConfig"]
    assert generation.get(name) is not None, generation


@then('the request the batch carried has the tool "{name}" and the tool choice "{choice}"')
@then('the request the batch carried has the tool "{name}" and no tool choice')
def carried_tool(context: Context, name: str, choice: str | None = None) -> None:
    request = _carried(context)
    assert [tool.name for tool in request.tools] == [name], request.tools
    assert request.tools[0].input_schema == _TIDE_PARAMETERS, request.tools
    expected: dict[str, Any] | None = None
    if choice is not None:
        kind, _, chosen = choice.partition(" ")
        expected = {"type": kind, **({"name": chosen} if chosen else {})}
    assert request.tool_choice == expected, request.tool_choice


@then("the request the batch carried answers the function call with '{text}'")
def carried_result(context: Context, text: str) -> None:
    request = _carried(context)
    turns = request.model_dump(mode="json")["messages"]
    call, result = turns[-2]["content"][0], turns[-1]["content"][0]
    assert (call["type"], call["id"]) == ("tool_use", "call-1"), turns
    assert (result["type"], result["tool_use_id"], result["content"]) == ("tool_result", "call-1", text), result


@then("the fake batch API was sent {count:d} request(s)")
def fake_sent(context: Context, count: int) -> None:
    sent = sum(len(batch.requests) for batch in _served(context).api.batches.values())
    assert sent == count, _served(context).api.batches


@given('the fake batch API fails the next request with "{status}"')
def fail_next(context: Context, status: str) -> None:
    _served(context).api.failing.append(Failure(error_type=status, message="the request is refused"))


# Plain HTTP.

_ROUTE = f"/v1beta/models/{_MODEL}:generateContent"
_HELLO: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]}
_BODIES: dict[str, tuple[str, object]] = {
    "a body with two candidates": (_ROUTE, {**_HELLO, "generationConfig": {"candidateCount": 2}}),
    "a body with a Google Search tool": (_ROUTE, {**_HELLO, "tools": [{"googleSearch": {}}]}),
    "a body with a temperature of 3": (_ROUTE, {**_HELLO, "generationConfig": {"temperature": 3}}),
    "a body with a field Gemini does not have": (_ROUTE, {**_HELLO, "colour": "blue"}),
    "a body with a cached content": (_ROUTE, {**_HELLO, "cachedContent": "cachedContents/1"}),
    "a body with no contents": (_ROUTE, {}),
    "a body with a file given by URI": (
        _ROUTE,
        {"contents": [{"role": "user", "parts": [{"fileData": {"fileUri": "files/1", "mimeType": "image/png"}}]}]},
    ),
    "a body answering a function never called": (
        _ROUTE,
        {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "tide_height", "response": {}}}]}]},
    ),
    "a body asking for another model": ("/v1beta/models/gemini-1.5-pro:generateContent", _HELLO),
    "a body asking to count its tokens": (f"/v1beta/models/{_MODEL}:countTokens", _HELLO),
    "a body under API version v2": (f"/v2/models/{_MODEL}:generateContent", _HELLO),
    "a body not a JSON object": (_ROUTE, ["Hello"]),
    "a body with a role Gemini does not have": (_ROUTE, {"contents": [{"role": "system", "parts": [{"text": "x"}]}]}),
    "a body with an audio part": (
        _ROUTE,
        {"contents": [{"parts": [{"inlineData": {"mimeType": "audio/wav", "data": "AAAA"}}]}]},
    ),
    "a body with the VALIDATED calling mode": (
        _ROUTE,
        {**_HELLO, "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}}},
    ),
    "a body allowing two of three functions": (
        _ROUTE,
        {
            **_HELLO,
            "tools": [{"functionDeclarations": [{"name": name} for name in ("a", "b", "c")]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}},
        },
    ),
    "a body with a topK of 2.5": (_ROUTE, {**_HELLO, "generationConfig": {"topK": 2.5}}),
    "a body asking for images back": (_ROUTE, {**_HELLO, "generationConfig": {"responseModalities": ["IMAGE"]}}),
    "a body with a generation setting unknown": (_ROUTE, {**_HELLO, "generationConfig": {"colour": 1}}),
    "a body with a non-text system instruction": (
        _ROUTE,
        {**_HELLO, "systemInstruction": {"parts": [{"inlineData": {"mimeType": "image/png", "data": ""}}]}},
    ),
    "a body of thoughts alone": (_ROUTE, {"contents": [{"role": "model", "parts": [{"text": "hm", "thought": True}]}]}),
    "a body with parts not a list": (_ROUTE, {"contents": [{"parts": {"text": "x"}}]}),
}


def _keep(context: Context, response: httpx.Response) -> None:
    served = _served(context)
    served.status, served.body = response.status_code, response.json()


@when("a Gemini client posts {what} to lowtide serve")
def post_body(context: Context, what: str) -> None:
    path, body = _BODIES[what]
    _keep(context, httpx.post(_served(context).url + path, json=body, headers={"x-goog-api-key": _KEY}))


@when("a Gemini client sends {what} to lowtide serve")
def send_guarded(context: Context, what: str) -> None:
    url = _served(context).url
    match what:
        case "a Gemini request with the wrong x-goog-api-key":
            response = httpx.post(url + _ROUTE, json=_HELLO, headers={"x-goog-api-key": "wrong"})
        case "a Gemini request with no key":
            response = httpx.post(url + _ROUTE, json=_HELLO)
        case "a Gemini request with the wrong ?key=":
            response = httpx.post(url + _ROUTE, json=_HELLO, params={"key": "wrong"})
        case "a Gemini request with its key as ?key=":
            response = httpx.post(url + _ROUTE, json=_HELLO, params={"key": _KEY})
        case "a GET of Gemini's route":
            response = httpx.get(url + _ROUTE, headers={"x-goog-api-key": _KEY})
        case "a Gemini body over 20 MB":
            served = _served(context)
            served.status, served.body = _declared_only(url, 20 * 1024 * 1024 + 1)
            return
        case _:
            path = what.removeprefix("a POST to ")
            response = httpx.post(url + path, json=_HELLO, headers={"x-goog-api-key": _KEY})
    _keep(context, response)


def _declared_only(url: str, size: int) -> tuple[int, dict[str, Any]]:
    """A request whose headers declare `size` bytes, sent without its body: the answer read off the socket."""
    host, port = url.removeprefix("http://").split(":")
    head = (
        f"POST {_ROUTE} HTTP/1.1\r\nHost: {host}\r\nx-goog-api-key: {_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())
        received = b""
        while b"\r\n\r\n" not in received:
            received += sock.recv(65536)
        header, _, body = received.partition(b"\r\n\r\n")
        lines = header.decode().split("\r\n")
        length = next(int(line.split(":")[1]) for line in lines if line.lower().startswith("content-length:"))
        while len(body) < length:
            body += sock.recv(65536)
    return int(lines[0].split()[1]), json.loads(body)


@then('lowtide serve answers 200 with a candidate whose text is "{text}"')
def google_answer(context: Context, text: str) -> None:
    served = _served(context)
    assert served.status == 200, (served.status, served.body)
    assert served.body["candidates"][0]["content"]["parts"][0]["text"] == text, served.body


@then('lowtide serve answers {status:d} in Google\'s error shape, status "{name}", saying "{words}"')
def google_error(context: Context, status: int, name: str, words: str) -> None:
    served = _served(context)
    assert served.status == status, (served.status, served.body)
    error = served.body["error"]
    assert set(served.body) == {"error"}, served.body
    assert set(error) == {"code", "message", "status"}, served.body
    assert (error["code"], error["status"]) == (status, name), error
    assert words in error["message"], error["message"]
