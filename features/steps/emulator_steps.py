"""Steps of features/emulator.feature: the emulator driven through the real anthropic SDK, in process (httpx2
ASGI transport) and over a socket. Every step text starts with "the emulator", "I ... the emulator" or names the
socket emulator, so that it cannot clash with the other step modules."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import math
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import anthropic
import httpx2
from anthropic.lib._parse._transform import transform_schema
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
from anthropic.types.messages.batch_create_params import Request
from pydantic import UUID4, AnyUrl, BaseModel, Field
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import cli
from lowtide.core.clock import ManualClock
from lowtide.emulator import ROUTES, Emulator, RunningServer, StateFileError, generate_instance, serve_in_thread
from lowtide.emulator.anthropic.catalogue import ModelCatalogue


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    emulator_command: tuple[str, int, dict[str, httpx2.Response]]
    emulator_refusal: tuple[str, str, int, dict[str, str]]


MODEL = "claude-sonnet-5-5"
KEY = "emulator-scenario-key"
VERSION = {"anthropic-version": "2023-06-01"}


# -- models for structured output and tool input ---------------------------------------------------------------------


class Tide(Enum):
    HIGH = "high"
    LOW = "low"


class Reading(BaseModel):
    at: datetime.datetime
    height_m: float = Field(ge=-2, le=12)


class Port(BaseModel):
    name: str = Field(min_length=3, max_length=40)
    country: str | None = None
    website: AnyUrl | None = None


class Report(BaseModel):
    port: Port
    day: datetime.date
    tide: Tide
    readings: list[Reading] = Field(min_length=1)
    notes: list[str] = []
    warning: Literal["none", "storm"] = "none"
    confidence: float = Field(gt=0, lt=1)


class Tree(BaseModel):
    label: str
    children: list[Tree] = []
    parent: Tree | None = None


class Bounded(BaseModel):
    count: int = Field(ge=10, le=20, multiple_of=3)
    ratio: float = Field(gt=0.1, lt=0.2)
    code: str = Field(pattern=r"^[A-Z]{3}$")
    short: str = Field(max_length=2)
    padded: str = Field(min_length=30)
    price: Decimal


class Collections(BaseModel):
    pair: tuple[int, str]
    many: tuple[int, ...]
    tags: set[str] = Field(min_length=2)
    frozen: frozenset[int]
    table: dict[str, list[int]]
    flags: dict[str, bool] = {}


class Identifiers(BaseModel):
    id: uuid.UUID
    v4: UUID4
    address: IPv4Address
    wait: datetime.timedelta
    when: datetime.time
    raw: bytes


class Circle(BaseModel):
    kind: Literal["circle"]
    radius: float


class Square(BaseModel):
    kind: Literal["square"]
    side: int


class Shapes(BaseModel):
    shape: Circle | Square = Field(discriminator="kind")
    others: list[Circle | Square] = []
    empty: None = None


class Lookup(BaseModel):
    station: str = Field(min_length=2)
    days: int = Field(ge=1, le=7)
    units: Literal["m", "ft"] = "m"


MODELS: dict[str, type[BaseModel]] = {
    model.__name__: model for model in (Report, Tree, Bounded, Collections, Identifiers, Shapes, Lookup)
}
# behave runs step files outside of any importable module, so forward references resolve from here.
for _model in (Port, Reading, Circle, Square, *MODELS.values()):
    _model.model_rebuild()


# -- scenario state --------------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    """What one emulator scenario set up, did and saw."""

    runner: Any
    cleanups: list[Callable[[], object]]
    clock: ManualClock = field(default_factory=ManualClock)
    emulator: Emulator | None = None
    client: anthropic.AsyncAnthropic | None = None
    server: RunningServer | None = None
    params: dict[str, Any] = field(default_factory=dict[str, Any])
    reply: Any = None
    previous: Any = None
    error: Exception | None = None
    elapsed: float = 0.0
    """The process's CPU seconds during the last call: what the emulator's own work costs, whatever the load."""
    batch: Any = None
    batch_ids: list[str] = field(default_factory=list[str])
    listed: list[Any] = field(default_factory=list[Any])
    page: Any = None
    results: dict[str, Any] = field(default_factory=dict[str, Any])
    result_order: list[str] = field(default_factory=list[str])
    raw: httpx2.Response | None = None
    deleted: Any = None
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    downloads: dict[str, httpx2.Response] = field(default_factory=dict[str, httpx2.Response])

    @property
    def emu(self) -> Emulator:
        assert self.emulator is not None, "start the emulator first"
        return self.emulator

    @property
    def sdk(self) -> anthropic.AsyncAnthropic:
        assert self.client is not None, "start the emulator first"
        return self.client

    def run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Run an SDK call, timing it; an API error is kept for the Then steps instead of raised."""
        self.error = None
        started = time.perf_counter()
        try:
            return self.runner.run(_awaited(make))
        except (anthropic.APIStatusError, anthropic.AnthropicError) as error:
            self.error = error
            return None
        finally:
            self.elapsed = time.perf_counter() - started


async def _awaited(make: Callable[[], Awaitable[Any]]) -> Any:
    # Some SDK calls return awaitables that are not coroutines, such as the list paginator.
    return await make()


def scenario(context: StepContext) -> Scenario:
    current = getattr(context, "emulator_scenario", None)
    if not isinstance(current, Scenario):
        current = context.emulator_scenario = Scenario(runner=context.runner, cleanups=context.cleanups)
    return current


def start(context: StepContext, **settings: Any) -> Scenario:
    s = scenario(context)
    s.settings = settings
    s.emulator = Emulator(clock=s.clock, **settings)
    s.client = s.emulator.client(api_key=KEY)
    s.cleanups.append(s.client.close)
    return s


def base_params(text: str = "Hello", **changes: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": text}], **changes}


def changed(change: str) -> dict[str, Any]:
    """The base params with top-level keys replaced; a null value removes the key."""
    params = base_params()
    for key, value in json.loads(change, strict=False).items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return params


def request(custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"custom_id": custom_id, "params": params}


def numbered(count: int, **changes: Any) -> list[dict[str, Any]]:
    return [request(f"r{index}", base_params(f"Question {index}", **changes)) for index in range(count)]


async def _post_message(client: anthropic.AsyncAnthropic, params: dict[str, Any]) -> Any:
    # The SDK's generic post sends any body, valid or not, and raises the SDK's own errors.
    return await client.post("/v1/messages", cast_to=anthropic.types.Message, body=params)


def send(s: Scenario, params: dict[str, Any], client: anthropic.AsyncAnthropic | None = None) -> None:
    s.params = params
    s.previous = s.reply
    s.reply = s.run(lambda: _post_message(client or s.sdk, params))


def create_batch(s: Scenario, requests: list[dict[str, Any]]) -> None:
    batch = s.run(lambda: s.sdk.messages.batches.create(requests=cast("list[Request]", requests)))
    s.reply = batch
    if batch is not None:
        s.batch = batch
        s.batch_ids.append(batch.id)


async def _collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in stream]


def fetch_results(s: Scenario, client: anthropic.AsyncAnthropic | None = None) -> None:
    sdk = client or s.sdk

    async def fetch() -> list[Any]:
        return await _collect(await sdk.messages.batches.results(s.batch.id))

    lines = s.run(fetch)
    if lines is not None:
        s.result_order = [line.custom_id for line in lines]
        s.results = {line.custom_id: line.result for line in lines}


def raw_call(
    s: Scenario, method: str, path: str, *, headers: dict[str, str] | None = None, content: Any = None
) -> httpx2.Response:
    path = path.replace("<id>", s.batch.id if s.batch is not None else "none")
    sent = {"x-api-key": KEY, **VERSION} if headers is None else headers

    async def call() -> httpx2.Response:
        async with s.emu.http_client() as http:
            response = await http.request(method, path, headers=sent, content=content)
            await response.aread()
            return response

    raw = s.raw = s.runner.run(call())
    return raw


# -- setting up ------------------------------------------------------------------------------------------------------


@given("the emulator runs on a manual clock")
def step_start(context: Context) -> None:
    start(context)


@given("the emulator runs on a manual clock with {seconds:g} processing seconds")
def step_start_processing(context: Context, seconds: float) -> None:
    start(context, processing_seconds=seconds)


@given("the emulator runs on a manual clock with {seconds:g} processing seconds and {cancel:g} cancel seconds")
def step_start_cancel(context: Context, seconds: float, cancel: float) -> None:
    start(context, processing_seconds=seconds, cancel_seconds=cancel)


@given('the emulator runs on a manual clock and accepts only the API key "{key}"')
def step_start_keys(context: Context, key: str) -> None:
    start(context, api_keys=[key])


@given("the emulator runs on a manual clock with bodies limited to {size:d} bytes")
def step_start_limits(context: Context, size: int) -> None:
    start(context, max_batch_bytes=size, max_request_bytes=size)


class _BrokenClock(ManualClock):
    def now(self) -> float:
        raise RuntimeError("the clock stopped")


@given("the emulator runs on a clock that has stopped working")
def step_start_broken(context: Context) -> None:
    s = scenario(context)
    s.clock = _BrokenClock()
    start(context)


@when('I send the emulator a raw "{method:w}" to "{path:S}" that fails inside the emulator')
def step_raw_internal_error(context: Context, method: str, path: str) -> None:
    s = scenario(context)
    # As a server would: answer the error, and let the exception go only to the log.
    transport = httpx2.ASGITransport(app=s.emu.app, raise_app_exceptions=False)

    async def call() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=transport, base_url=s.emu.base_url) as http:
            return await http.request(method, path, headers={"x-api-key": KEY, **VERSION}, json=base_params())

    s.raw = s.runner.run(call())


@when("the emulator clock advances {seconds:g} seconds")
def step_advance(context: Context, seconds: float) -> None:
    scenario(context).clock.advance(seconds)


# -- faults ----------------------------------------------------------------------------------------------------------


@given('the emulator fails the next "{route}" call with status {status:d}')
def step_fault(context: Context, route: str, status: int) -> None:
    scenario(context).emu.faults.fail_next(route, status)


@given(
    'the emulator fails the next "{route}" call with status {status:d}, {times:d} {unit:w}, '
    'retry-after {retry:g} and message "{message}"'
)
def step_fault_full(
    context: Context, route: str, status: int, times: int, unit: str, retry: float, message: str
) -> None:
    scenario(context).emu.faults.fail_next(route, status, times=times, retry_after=retry, message=message)


@given('the emulator ends request "{custom_id}" as errored with "{error_type}" saying "{message}"')
def step_outcome_errored(context: Context, custom_id: str, error_type: str, message: str) -> None:
    scenario(context).emu.faults.outcome(custom_id, "errored", error_type=error_type, message=message)


@given('the emulator ends request "{custom_id}" as expired')
def step_outcome_expired(context: Context, custom_id: str) -> None:
    scenario(context).emu.faults.outcome(custom_id, "expired")


@then("arming these emulator faults raises ValueError:")
def step_bad_faults(context: Context) -> None:
    faults = scenario(context).emu.faults
    for row in context.table:
        with contextlib.suppress(ValueError):
            faults.fail_next(row["route"], int(row["status"]), times=int(row["times"]))
            raise AssertionError(f"armed {dict(row.items())}")


@then("arming these emulator outcomes raises ValueError:")
def step_bad_outcomes(context: Context) -> None:
    faults = scenario(context).emu.faults
    for row in context.table:
        with contextlib.suppress(ValueError):
            faults.outcome(row["custom_id"], row["kind"], error_type=row["error_type"])
            raise AssertionError(f"armed {dict(row.items())}")


@when('I call the emulator route "{route}"')
def step_call_route(context: Context, route: str) -> None:
    s = scenario(context)
    batches = s.sdk.messages.batches
    if route == "messages.create":
        send(s, base_params())
        return
    if route == "messages.count_tokens":
        s.reply = s.run(lambda: s.sdk.messages.count_tokens(model=MODEL, messages=base_params()["messages"]))
        return
    if route == "batches.create":
        create_batch(s, numbered(1))
        return
    if route == "batches.list":
        s.reply = s.run(lambda: batches.list(limit=5))
        return
    # The other routes act on a batch: an in-progress one to cancel, an ended one otherwise.
    s.emu.processing_seconds = 60 if route == "batches.cancel" else 0
    s.batch = s.runner.run(batches.create(requests=cast("list[Request]", numbered(1))))
    batch_id = s.batch.id
    actions: dict[str, Callable[[], Awaitable[Any]]] = {
        "batches.retrieve": lambda: batches.retrieve(batch_id),
        "batches.cancel": lambda: batches.cancel(batch_id),
        "batches.delete": lambda: batches.delete(batch_id),
    }
    if route == "batches.results":
        fetch_results(s)
        s.reply = s.results
    else:
        s.reply = s.run(actions[route])


# -- errors ----------------------------------------------------------------------------------------------------------


@then('the emulator call fails with {exception}, status {status:d} and error type "{error_type}"')
def step_fails(context: Context, exception: str, status: int, error_type: str) -> None:
    error = scenario(context).error
    assert isinstance(error, anthropic.APIStatusError), f"expected {exception}, got {error!r}"
    assert type(error).__name__ == exception, f"{type(error).__name__} is not {exception}"
    assert error.status_code == status, error.status_code
    assert error.type == error_type, error.type
    # The exact error body, with the request id of the response header.
    body = error.body
    assert isinstance(body, dict), body
    assert set(body) == {"type", "error", "request_id"}, body
    assert body["type"] == "error", body
    assert set(body["error"]) == {"type", "message"}, body
    assert error.request_id is not None, error.request_id
    assert error.request_id.startswith("req_"), error.request_id
    assert body["request_id"] == error.request_id, (body["request_id"], error.request_id)


@then('the emulator error message mentions "{text}"')
def step_error_mentions(context: Context, text: str) -> None:
    error = scenario(context).error
    assert isinstance(error, anthropic.APIStatusError), error
    assert error.api_message is not None, error.api_message
    assert text in error.api_message, error.api_message


@then('the emulator error has the header "{name}" set to "{value}"')
def step_error_header(context: Context, name: str, value: str) -> None:
    error = scenario(context).error
    assert isinstance(error, anthropic.APIStatusError), error
    assert error.response.headers.get(name) == value, dict(error.response.headers)


@then("the emulator call succeeded")
def step_succeeded(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert s.reply is not None


# -- raw HTTP --------------------------------------------------------------------------------------------------------


@when('I send the emulator a raw "{method:w}" to "{path:S}"')
def step_raw(context: Context, method: str, path: str) -> None:
    raw_call(scenario(context), method, path)


@when('I send the emulator a raw "{method:w}" to "{path:S}" with the body "{body}"')
def step_raw_body(context: Context, method: str, path: str, body: str) -> None:
    # "-" stands for no body at all.
    raw_call(scenario(context), method, path, content=None if body == "-" else body.encode())


@when('I send the emulator a raw "{method:w}" to "{path:S}" without credentials')
def step_raw_anonymous(context: Context, method: str, path: str) -> None:
    raw_call(scenario(context), method, path, headers=dict(VERSION), content=json.dumps(base_params()).encode())


@when('I send the emulator a raw "{method:w}" to "{path:S}" without an anthropic-version header')
def step_raw_unversioned(context: Context, method: str, path: str) -> None:
    raw_call(scenario(context), method, path, headers={"x-api-key": KEY})


@when("I send the emulator a chunked batch body of {size:d} bytes")
def step_raw_chunked(context: Context, size: int) -> None:
    async def body() -> AsyncIterator[bytes]:
        # A generator body goes out chunked, without a content-length for the emulator to check first.
        for _ in range(size // 100):
            yield b" " * 100

    raw_call(scenario(context), "POST", "/v1/messages/batches", content=body())


@when("I post the emulator a raw batch of {count:d} requests")
def step_raw_batch(context: Context, count: int) -> None:
    """One JSON body over the in-process transport, as any HTTP client sends it: the SDK deep-copies a body it sends,
    which for 100,000 requests costs more than the emulator's whole work on them."""
    s = scenario(context)
    raw = raw_call(s, "POST", "/v1/messages/batches", content=json.dumps({"requests": numbered(count)}))
    if raw.status_code == 200:
        s.batch = MessageBatch.model_validate(raw.json())
        s.batch_ids.append(s.batch.id)


@then('the emulator raw answer\'s message mentions "{text}"')
def step_raw_error_mentions(context: Context, text: str) -> None:
    response = scenario(context).raw
    assert response is not None, "no raw response was kept"
    message = response.json()["error"]["message"]
    assert text in message, message


@then('the emulator answers {status:d} with error type "{error_type}"')
@then('the emulator raw answer is {status:d} with error type "{error_type}"')
def step_raw_error(context: Context, status: int, error_type: str) -> None:
    response = scenario(context).raw
    assert response is not None
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    request_id = response.headers["request-id"]
    assert request_id.startswith("req_"), request_id
    assert body == {
        "type": "error",
        "error": {"type": error_type, "message": body["error"]["message"]},
        "request_id": request_id,
    }, body
    assert isinstance(body["error"]["message"], str), body
    assert body["error"]["message"], body


@then('the emulator raw answer is JSON lines served as "{content_type}"')
def step_raw_jsonl(context: Context, content_type: str) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == 200, response
    assert response.headers["content-type"].startswith(content_type), response.headers
    assert response.text.endswith("\n"), response.text[-20:]
    for line in response.text.splitlines():
        MessageBatchIndividualResponse.model_validate_json(line)


@then("downloading the emulator results again gives the same file")
def step_results_again(context: Context) -> None:
    s = scenario(context)
    first = s.raw
    assert first is not None
    second = raw_call(s, "GET", "/v1/messages/batches/<id>/results")
    assert second.content == first.content


# -- messages --------------------------------------------------------------------------------------------------------


@when("I send the emulator a message")
def step_message(context: Context) -> None:
    s = scenario(context)
    send(s, base_params())


@when('I send the emulator a message saying "{text}"')
def step_message_saying(context: Context, text: str) -> None:
    s = scenario(context)
    send(s, base_params(text))


@when("I send the emulator a message of {size:d} characters")
def step_message_long(context: Context, size: int) -> None:
    send(scenario(context), base_params(("word " * size)[:size]))


@when("I send the emulator a message with the params changed by {change}")
def step_message_changed(context: Context, change: str) -> None:
    send(scenario(context), changed(change))


@when("I send the emulator the same message again")
def step_message_again(context: Context) -> None:
    s = scenario(context)
    send(s, s.params)


@when("I send the emulator a message authenticated by x-api-key")
def step_message_x_api_key(context: Context) -> None:
    send(scenario(context), base_params())


@when("I send the emulator a message authenticated by a bearer token")
def step_message_bearer(context: Context) -> None:
    s = scenario(context)
    client = anthropic.AsyncAnthropic(
        auth_token="a-bearer-token", base_url=s.emu.base_url, http_client=s.emu.http_client()
    )
    s.cleanups.append(client.close)
    send(s, base_params(), client)


@when('I send the emulator a message with the API key "{key}"')
def step_message_key(context: Context, key: str) -> None:
    s = scenario(context)
    client = s.emu.client(api_key=key)
    s.cleanups.append(client.close)
    send(s, base_params(), client)


@when("I send the emulator a message allowing {retries:d} SDK retries")
def step_message_retries(context: Context, retries: int) -> None:
    s = scenario(context)
    client = s.emu.client(api_key=KEY, max_retries=retries)
    s.cleanups.append(client.close)
    send(s, base_params(), client)


@when("I send the emulator a message with a {size:d}-character cached system prompt")
def step_message_cached(context: Context, size: int) -> None:
    system = [{"type": "text", "text": "x" * size, "cache_control": {"type": "ephemeral"}}]
    send(scenario(context), base_params(system=system))


@when('I send the emulator a message with a {size:d}-character system prompt cached for "{ttl}"')
def step_message_cached_ttl(context: Context, size: int, ttl: str) -> None:
    system = [{"type": "text", "text": "x" * size, "cache_control": {"type": "ephemeral", "ttl": ttl}}]
    send(scenario(context), base_params(system=system))


@when('I send the emulator a {size:d}-character message for "{model}" with automatic caching')
def step_message_automatic_cache(context: Context, size: int, model: str) -> None:
    params = base_params("x" * size, model=model, cache_control={"type": "ephemeral"})
    send(scenario(context), params)


def _tool_of(size: int) -> dict[str, Any]:
    """A tool whose definition, as JSON with sorted keys and no spaces, is `size` characters long."""
    tool: dict[str, Any] = {"name": "t", "description": "", "input_schema": {"type": "object"}}
    bare = len(json.dumps(tool, sort_keys=True, separators=(",", ":")))
    return {**tool, "description": "d" * (size - bare)}


@when("I send the emulator a {question:d}-character question after a {tool:d}-character tool, cached at the tool")
def step_message_tool_cached(context: Context, question: int, tool: int) -> None:
    tools = [{**_tool_of(tool), "cache_control": {"type": "ephemeral"}}]
    send(scenario(context), base_params("q" * question, tools=tools))


@when(
    "I send the emulator a {question:d}-character question after a {tool:d}-character tool, cached at the tool "
    'and for "{ttl}" at the question'
)
def step_message_tool_and_question_cached(context: Context, question: int, tool: int, ttl: str) -> None:
    tools = [{**_tool_of(tool), "cache_control": {"type": "ephemeral"}}]
    text = {"type": "text", "text": "q" * question, "cache_control": {"type": "ephemeral", "ttl": ttl}}
    send(scenario(context), base_params(tools=tools, messages=[{"role": "user", "content": [text]}]))


def reply(context: Context) -> anthropic.types.Message:
    s = scenario(context)
    assert s.error is None, s.error
    assert isinstance(s.reply, anthropic.types.Message), s.reply
    return s.reply


def reply_text(context: Context) -> str:
    blocks = [block for block in reply(context).content if block.type == "text"]
    assert len(blocks) == 1, reply(context).content
    return blocks[0].text


@then('the emulator reply has stop reason "{reason:w}"')
def step_stop_reason(context: Context, reason: str) -> None:
    message = reply(context)
    assert message.stop_reason == reason, message
    assert message.id.startswith("msg_"), message
    # The API names the dated model its alias resolves to.
    assert message.model == ModelCatalogue().resolved(scenario(context).params["model"]), message
    assert message.usage.service_tier == "standard", message.usage


@then('the emulator reply has stop reason "{reason:w}" and stop sequence "{sequence}"')
def step_stop_sequence(context: Context, reason: str, sequence: str) -> None:
    message = reply(context)
    assert (message.stop_reason, message.stop_sequence) == (reason, sequence), message


@then("the emulator reply text starts with '{text}'")
def step_text_starts(context: Context, text: str) -> None:
    assert reply_text(context).startswith(text), reply_text(context)


@then("the emulator reply text is '{text}'")
def step_text_is(context: Context, text: str) -> None:
    assert reply_text(context) == text, reply_text(context)


@then("the emulator reply counts {count:d} input tokens and output tokens for its text")
def step_tokens(context: Context, count: int) -> None:
    usage = reply(context).usage
    assert usage.input_tokens == count, usage
    assert usage.output_tokens == math.ceil(len(reply_text(context)) / 4), usage


@then("the emulator reply counts {count:d} output tokens")
def step_output_tokens(context: Context, count: int) -> None:
    assert reply(context).usage.output_tokens == count, reply(context).usage


@then("the emulator reply has the same content as before but a new id")
def step_same_content(context: Context) -> None:
    s = scenario(context)
    assert s.previous is not None
    assert reply(context).content == s.previous.content
    assert reply(context).id != s.previous.id


@then("the emulator reply differs from before")
def step_differs(context: Context) -> None:
    s = scenario(context)
    assert reply(context).content != s.previous.content


@then("the emulator reply quotes {count:d} characters and an ellipsis")
def step_quote(context: Context, count: int) -> None:
    quoted = re.fullmatch(r'Emulated reply to "(.*)": [0-9a-f]{16}', reply_text(context))
    assert quoted is not None, reply_text(context)
    assert len(quoted.group(1)) == count + 1, quoted.group(1)
    assert quoted.group(1).endswith("…"), quoted.group(1)


@then('the emulator reply content is "{kinds}"')
def step_content_kinds(context: Context, kinds: str) -> None:
    found = ", ".join(block.type for block in reply(context).content)
    assert found == kinds, found


@then('the emulator reply content is ""')
def step_content_empty(context: Context) -> None:
    assert reply(context).content == [], reply(context).content


@then('the emulator reply\'s thinking is signed and mentions "{text}"')
def step_thinking(context: Context, text: str) -> None:
    block = reply(context).content[0]
    assert block.type == "thinking", block
    assert text in block.thinking, block
    assert len(block.signature) > 40, block


@then("the emulator reply's thinking is signed and empty")
def step_thinking_omitted(context: Context) -> None:
    block = reply(context).content[0]
    assert block.type == "thinking", block
    assert block.thinking == "", block
    assert block.signature, block


@then(
    "the emulator usage is input {input_tokens:d}, cache writes {written:d} (5m {five:d}, 1h {hour:d}) "
    "and cache reads {read:d}"
)
def step_usage(context: Context, input_tokens: int, written: int, five: int, hour: int, read: int) -> None:
    usage = reply(context).usage
    assert usage.cache_creation is not None
    found = (
        usage.input_tokens,
        usage.cache_creation_input_tokens,
        usage.cache_creation.ephemeral_5m_input_tokens,
        usage.cache_creation.ephemeral_1h_input_tokens,
        usage.cache_read_input_tokens,
    )
    assert found == (input_tokens, written, five, hour, read), usage


# -- structured output and tools -------------------------------------------------------------------------------------


def report_params(**changes: Any) -> dict[str, Any]:
    schema = {"type": "json_schema", "schema": Report.model_json_schema()}
    return base_params("Give me the tide report", output_config={"format": schema}, max_tokens=4096, **changes)


@when("I ask the emulator for a structured Report")
def step_structured(context: Context) -> None:
    send(scenario(context), report_params())


@then("the emulator reply is one text block holding a valid Report")
def step_structured_valid(context: Context) -> None:
    assert len(reply(context).content) == 1
    Report.model_validate_json(reply_text(context))


@when("I ask the emulator for a Report through the SDK's parse helper")
def step_parse(context: Context) -> None:
    s = scenario(context)
    s.reply = s.run(
        lambda: s.sdk.messages.parse(
            model=MODEL,
            max_tokens=4096,
            messages=[{"role": "user", "content": "Give me the tide report"}],
            output_format=Report,
        )
    )


@then("the emulator parsed output is a Report")
def step_parsed(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert isinstance(s.reply.parsed_output, Report), s.reply


@when("I create an emulator batch asking for a structured Report")
def step_batch_structured(context: Context) -> None:
    create_batch(scenario(context), [request("report", report_params())])


@then('the emulator result "{custom_id}" holds a valid Report')
def step_result_report(context: Context, custom_id: str) -> None:
    result = scenario(context).results[custom_id]
    assert result.type == "succeeded", result
    Report.model_validate_json(result.message.content[0].text)


@then("the emulator generates valid instances for these models:")
def step_generate_models(context: Context) -> None:
    for row in context.table:
        model = MODELS[row["model"]]
        for schema in (model.model_json_schema(), transform_schema(model)):
            for seed in ("", "seed-1", "another"):
                instance = generate_instance(schema, seed=seed)
                model.model_validate(instance)
                # What the API would send: the instance as JSON text, parsed back.
                model.model_validate_json(json.dumps(instance))


@then('the emulator generates an instance of {schema} that satisfies "{check}"')
def step_generate_schema(context: Context, schema: str, check: str) -> None:
    value = generate_instance(json.loads(schema, strict=False))
    assert eval(check, {}, {"value": value}), value


def lookup_params(choice: str, text: str = "Tide times for Brest") -> dict[str, Any]:
    tool = {"name": "lookup", "description": "Look up tide times", "input_schema": Lookup.model_json_schema()}
    return base_params(text, tools=[tool], tool_choice=json.loads(choice))


@when("I ask the emulator with the Lookup tool and tool choice {choice}")
def step_tool(context: Context, choice: str) -> None:
    send(scenario(context), lookup_params(choice))


@when('I ask the emulator "{text}" with the Lookup tool and tool choice {choice}')
def step_tool_text(context: Context, text: str, choice: str) -> None:
    send(scenario(context), lookup_params(choice, text))


@then('the emulator reply is one tool_use block calling "{name}" with a valid Lookup')
def step_tool_use(context: Context, name: str) -> None:
    message = reply(context)
    assert message.stop_reason == "tool_use", message
    assert len(message.content) == 1, message.content
    block = message.content[0]
    assert block.type == "tool_use", block
    assert block.name == name, block
    assert block.id.startswith("toolu_"), block
    Lookup.model_validate(block.input)


@when('I answer the emulator\'s tool call with "{text}"')
def step_tool_result(context: Context, text: str) -> None:
    s = scenario(context)
    call = reply(context)
    tool_use = call.content[0]
    assert tool_use.type == "tool_use"
    messages = [
        *s.params["messages"],
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in call.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": text}]},
    ]
    send(s, {**s.params, "messages": messages, "tool_choice": {"type": "auto"}})


@when("I ask the emulator with the weather and final_result tools and tool choice {choice}")
def step_agent_tools(context: Context, choice: str) -> None:
    weather = {
        "name": "weather",
        "description": "Today's weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
    final = {
        "name": "final_result",
        "description": "The final response which ends this conversation",
        "input_schema": Lookup.model_json_schema(),
    }
    send(scenario(context), base_params("Weather in Paris?", tools=[weather, final], tool_choice=json.loads(choice)))


@then('the emulator reply calls the tool "{name}"')
def step_reply_calls(context: Context, name: str) -> None:
    message = reply(context)
    assert message.stop_reason == "tool_use", message
    calls = [block for block in message.content if block.type == "tool_use"]
    assert [call.name for call in calls] == [name], message.content


@when('I answer the emulator\'s last tool call with "{text}" keeping tool choice any')
def step_tool_result_any(context: Context, text: str) -> None:
    s = scenario(context)
    call = reply(context)
    tool_use = next(block for block in call.content if block.type == "tool_use")
    messages = [
        *s.params["messages"],
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in call.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": text}]},
    ]
    send(s, {**s.params, "messages": messages})


# -- streaming -------------------------------------------------------------------------------------------------------


@when("I stream the same message from the emulator")
def step_stream(context: Context) -> None:
    s = scenario(context)
    params = dict(s.params)

    async def stream() -> Any:
        async with s.sdk.messages.stream(**params) as events:
            return await events.get_final_message()

    s.previous = s.reply
    s.reply = s.run(stream)


@then("the streamed message equals the emulator reply except for its id")
def step_stream_equal(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    streamed = s.reply.model_dump(exclude={"id"})
    direct = s.previous.model_dump(exclude={"id"})
    for block in [*streamed["content"], *direct["content"]]:
        block.pop("parsed_output", None)
        # Tool use ids are new for every message, as in the API.
        if block["type"] == "tool_use":
            assert block.pop("id").startswith("toolu_")
    assert streamed == direct, (streamed, direct)
    assert s.reply.id != s.previous.id


@when("I stream a raw emulator message with the params changed by {change}")
def step_stream_raw(context: Context, change: str) -> None:
    raw_call(scenario(context), "POST", "/v1/messages", content=json.dumps({**changed(change), "stream": True}))


@then('the emulator event names are, collapsing repeats: "{names}"')
def step_event_names(context: Context, names: str) -> None:
    response = scenario(context).raw
    assert response is not None
    found: list[str] = []
    for line in response.text.splitlines():
        if line.startswith("event: ") and (not found or found[-1] != line[7:]):
            found.append(line[7:])
    assert found == [name.strip() for name in names.split(",")], found


@then('the emulator stream is served as "{content_type}"')
def step_stream_type(context: Context, content_type: str) -> None:
    response = scenario(context).raw
    assert response is not None, "no raw response was kept"
    assert response.headers["content-type"].startswith(content_type), response.headers


# -- batches ---------------------------------------------------------------------------------------------------------


@when("I create an emulator batch of {count:d} requests")
def step_create_batch(context: Context, count: int) -> None:
    create_batch(scenario(context), numbered(count))


@when("I create an emulator batch of {count:d} requests with a {size:d}-character cached system prompt")
def step_create_cached_batch(context: Context, count: int, size: int) -> None:
    system = [{"type": "text", "text": "x" * size, "cache_control": {"type": "ephemeral"}}]
    create_batch(scenario(context), numbered(count, system=system))


@when("I post the emulator the batch body {body}")
def step_post_batch_body(context: Context, body: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.post("/v1/messages/batches", cast_to=MessageBatch, body=json.loads(body)))


@when("I create an emulator batch whose requests change the params by:")
def step_batch_changes(context: Context) -> None:
    create_batch(scenario(context), [request(row["custom_id"], changed(row["change"])) for row in context.table])


@when("I create an emulator batch whose requests say:")
def step_batch_texts(context: Context) -> None:
    create_batch(scenario(context), [request(row["custom_id"], base_params(row["text"])) for row in context.table])


@when("I create {count:d} emulator batches, one second apart")
def step_create_batches(context: Context, count: int) -> None:
    s = scenario(context)
    for index in range(count):
        create_batch(s, numbered(index + 1))
        s.clock.advance(1)


@when("I retrieve the emulator batch")
def step_retrieve(context: Context) -> None:
    s = scenario(context)
    batch = s.run(lambda: s.sdk.messages.batches.retrieve(s.batch.id))
    if batch is not None:
        s.batch = batch


@when("I cancel the emulator batch")
def step_cancel(context: Context) -> None:
    s = scenario(context)
    batch = s.run(lambda: s.sdk.messages.batches.cancel(s.batch.id))
    if batch is not None:
        s.batch = batch


@when("I delete the emulator batch")
def step_delete(context: Context) -> None:
    s = scenario(context)
    s.deleted = s.run(lambda: s.sdk.messages.batches.delete(s.batch.id))


@when("I poll the emulator batch every {seconds:g} seconds until it has ended")
def step_poll(context: Context, seconds: float) -> None:
    s = scenario(context)

    async def poll() -> Any:
        batch = s.batch
        while batch.processing_status != "ended":
            await s.clock.sleep(seconds)
            batch = await s.sdk.messages.batches.retrieve(batch.id)
        return batch

    s.batch = s.run(poll)


@when("I fetch the emulator batch results")
def step_fetch_results(context: Context) -> None:
    fetch_results(scenario(context))


@when("I download the emulator batch results as raw lines")
def step_results_raw(context: Context) -> None:
    s = scenario(context)
    started = time.perf_counter()
    raw_call(s, "GET", "/v1/messages/batches/<id>/results")
    s.elapsed = time.perf_counter() - started


@then("the emulator results file has {count:d} lines")
def step_results_lines(context: Context, count: int) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == 200, response
    assert response.content.count(b"\n") == count


@then("the emulator results file has {count:d} lines, {succeeded:d} of them succeeded")
def step_results_lines_succeeded(context: Context, count: int, succeeded: int) -> None:
    """Every request once, by its custom_id, and how many were answered."""
    step_results_lines(context, count)
    response = scenario(context).raw
    assert response is not None
    lines = [json.loads(line) for line in response.content.splitlines()]
    assert {line["custom_id"] for line in lines} == {f"r{index}" for index in range(count)}
    kinds = [line["result"]["type"] for line in lines]
    assert kinds.count("succeeded") == succeeded, {kind: kinds.count(kind) for kind in set(kinds)}


def _counts(text: str) -> dict[str, int]:
    counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    for item in text.split():
        name, _, value = item.partition("=")
        counts[name] = int(value)
    return counts


@then('the emulator batch is "{status:w}" with {count:d} requests processing')
def step_batch_processing(context: Context, status: str, count: int) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert s.batch.processing_status == status, s.batch
    assert s.batch.request_counts.model_dump() == _counts(f"processing={count}"), s.batch.request_counts
    assert s.batch.results_url is None, s.batch
    assert s.batch.ended_at is None, s.batch
    assert s.batch.id.startswith("msgbatch_"), s.batch
    assert s.batch.type == "message_batch", s.batch


@then('the emulator batch is "{status:w}" with counts {counts}')
def step_batch_counts(context: Context, status: str, counts: str) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert s.batch.processing_status == status, s.batch
    assert s.batch.request_counts.model_dump() == _counts(counts), s.batch.request_counts


@then("the emulator batch expires 24 hours after it was created")
def step_expires(context: Context) -> None:
    batch = scenario(context).batch
    assert batch.expires_at - batch.created_at == datetime.timedelta(hours=24), batch
    assert batch.created_at.timestamp() == scenario(context).clock.now(), batch


@then("the emulator batch ended {seconds:g} seconds after it was created")
def step_ended_at(context: Context, seconds: float) -> None:
    batch = scenario(context).batch
    assert batch.ended_at is not None
    assert batch.ended_at - batch.created_at == datetime.timedelta(seconds=seconds)


@then("the emulator batch shows its cancel was initiated {seconds:g} seconds after it was created")
def step_cancel_at(context: Context, seconds: float) -> None:
    batch = scenario(context).batch
    assert batch.cancel_initiated_at is not None
    assert batch.cancel_initiated_at - batch.created_at == datetime.timedelta(seconds=seconds)


@then('the emulator batch results URL is "{url}"')
def step_results_url(context: Context, url: str) -> None:
    batch = scenario(context).batch
    assert batch.results_url == url.replace("<id>", batch.id), batch.results_url


@then("the emulator clock slept {times:d} times for {seconds:g} seconds in all")
def step_slept(context: Context, times: int, seconds: float) -> None:
    sleeps = scenario(context).clock.sleeps
    assert len(sleeps) == times, sleeps
    assert sum(sleeps) == seconds, sleeps


@then("the emulator deleted the batch")
def step_deleted(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert s.deleted.id == s.batch.id, s.deleted
    assert s.deleted.type == "message_batch_deleted", s.deleted


@then("the emulator holds {count:d} batches")
def step_holds(context: Context, count: int) -> None:
    s = scenario(context)
    listed = s.run(lambda: s.sdk.messages.batches.list(limit=1000))
    assert len(listed.data) == count, listed


@then("the SDK refused to fetch results without a results URL")
def step_results_refused(context: Context) -> None:
    error = scenario(context).error
    assert isinstance(error, anthropic.AnthropicError), error
    assert "No `results_url`" in str(error), error


@then("the emulator results are:")
def step_results(context: Context) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert sorted(s.results) == sorted(row["custom_id"] for row in context.table), sorted(s.results)
    for row in context.table:
        result = s.results[row["custom_id"]]
        assert result.type == row["result"], (row["custom_id"], result)
        if "error_type" in row.headings and row["error_type"]:
            assert result.error.type == "error", result
            assert result.error.error.type == row["error_type"], result
        if "message" in row.headings and row["message"]:
            assert row["message"] in result.error.error.message, result.error.error.message
        if "service_tier" in row.headings:
            assert result.message.usage.service_tier == row["service_tier"], result.message.usage
        if "cache_writes" in row.headings:
            usage = result.message.usage
            found = (usage.cache_creation_input_tokens, usage.cache_read_input_tokens)
            assert found == (int(row["cache_writes"]), int(row["cache_reads"])), usage


@then("every errored emulator result carries a request id of its own, the same on every download")
def step_results_request_ids(context: Context) -> None:
    s = scenario(context)
    errored = {custom_id: result for custom_id, result in s.results.items() if result.type == "errored"}
    assert errored, s.results
    ids = {custom_id: result.error.request_id for custom_id, result in errored.items()}
    # A request that ran and failed has the id of the worker request that ran it (as recorded: `workerreq_...`).
    assert all(str(request_id).startswith("workerreq_") for request_id in ids.values()), ids
    assert len(set(ids.values())) == len(ids), ids
    fetch_results(s)
    again = {custom_id: s.results[custom_id].error.request_id for custom_id in errored}
    assert again == ids, (again, ids)


@then("each emulator result answers its own request")
def step_results_joined(context: Context) -> None:
    for custom_id, result in scenario(context).results.items():
        question = f"Question {custom_id[1:]}"
        assert result.message.content[0].text.startswith(f'Emulated reply to "{question}": '), result
        assert result.message.id.startswith("msg_"), result.message.id


@then("the emulator results hold every custom_id once, not in request order")
def step_results_order(context: Context) -> None:
    order = scenario(context).result_order
    expected = [f"r{index}" for index in range(len(order))]
    assert sorted(order) == sorted(expected), order
    assert len(set(order)) == len(order), order
    assert order != expected, order


# -- listing ---------------------------------------------------------------------------------------------------------


@when("I list the emulator batches {size:d} at a time")
def step_list_all(context: Context, size: int) -> None:
    s = scenario(context)

    async def walk() -> list[Any]:
        return [batch async for batch in s.sdk.messages.batches.list(limit=size)]

    s.listed = s.run(walk)


@when("I list the emulator batches {size:d} at a time before the oldest batch")
def step_list_before(context: Context, size: int) -> None:
    s = scenario(context)

    async def walk() -> list[Any]:
        return [batch async for batch in s.sdk.messages.batches.list(limit=size, before_id=s.batch_ids[0])]

    s.listed = s.run(walk)


@when("I list one emulator page of {size:d} batches")
def step_list_page(context: Context, size: int) -> None:
    s = scenario(context)
    s.page = s.run(lambda: s.sdk.messages.batches.list(limit=size))


@when("I list one emulator page of {size:d} batches after the 2nd newest batch")
def step_list_after(context: Context, size: int) -> None:
    s = scenario(context)
    s.page = s.run(lambda: s.sdk.messages.batches.list(limit=size, after_id=s.batch_ids[-2]))


@when('I list the emulator batches with the query "{query}"')
def step_list_query(context: Context, query: str) -> None:
    s = scenario(context)
    query = query.replace("NEWEST", s.batch_ids[-1]).replace("OLDEST", s.batch_ids[0])
    params = dict(item.split("=", 1) for item in query.split("&"))
    s.page = s.run(lambda: s.sdk.get("/v1/messages/batches", cast_to=object, options={"params": params}))


@then("the emulator listed all {count:d} batches, newest first")
def step_listed_all(context: Context, count: int) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert [batch.id for batch in s.listed] == list(reversed(s.batch_ids)), s.listed
    assert len(s.listed) == count


@then("the emulator listed the {count:d} newer batches, each once")
def step_listed_newer(context: Context, count: int) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    ids = [batch.id for batch in s.listed]
    assert len(ids) == count, ids
    assert sorted(ids) == sorted(s.batch_ids[1:]), ids


@then("the emulator page holds the {count:d} newest batches and has more")
def step_page_newest(context: Context, count: int) -> None:
    s = scenario(context)
    page = s.page
    expected = list(reversed(s.batch_ids))[:count]
    assert [batch.id for batch in page.data] == expected, page
    assert page.has_more is True, page
    assert (page.first_id, page.last_id) == (expected[0], expected[-1]), page


@then("the emulator page holds the {count:d} oldest batches and has no more")
def step_page_oldest(context: Context, count: int) -> None:
    s = scenario(context)
    page = s.page
    expected = list(reversed(s.batch_ids))[-count:]
    assert [batch.id for batch in page.data] == expected, page
    assert page.has_more is False, page


@then("the emulator page is empty")
def step_page_empty(context: Context) -> None:
    page = scenario(context).page
    assert page.data == [], page
    assert page.has_more is False, page
    assert page.first_id is None, page
    assert page.last_id is None, page


# -- counting, inspecting, resetting ---------------------------------------------------------------------------------


@then('the emulator counted {count:d} "{route}" call')
@then('the emulator counted {count:d} "{route}" calls')
def step_counted(context: Context, count: int, route: str) -> None:
    calls = scenario(context).emu.calls
    assert calls[route] == count, calls


@then("the emulator counted these calls:")
def step_counted_table(context: Context) -> None:
    calls = scenario(context).emu.calls
    expected = {row["route"]: int(row["count"]) for row in context.table}
    assert dict(calls) == expected, calls


@then('inspecting the emulator batch shows it "{status}" with no outcomes yet')
def step_inspect_running(context: Context, status: str) -> None:
    s = scenario(context)
    snapshot = s.emu.batch(s.batch.id)
    assert snapshot.processing_status == status
    assert snapshot.outcomes is None
    assert snapshot.ended_at is None
    assert [custom_id for custom_id, _ in snapshot.requests] == ["r0", "r1"], snapshot.requests
    assert snapshot.request_counts["processing"] == 2
    assert snapshot.expires_at == snapshot.created_at + 86400


@then('inspecting the emulator batch shows it "{status}" with outcomes "{outcomes}"')
def step_inspect_ended(context: Context, status: str, outcomes: str) -> None:
    s = scenario(context)
    snapshot = s.emu.batch(s.batch.id)
    expected = dict(item.strip().split("=") for item in outcomes.split(","))
    assert snapshot.processing_status == status, snapshot
    assert snapshot.outcomes == expected, snapshot
    assert snapshot.request_counts["succeeded"] == len(expected)
    assert snapshot.ended_at is not None
    assert snapshot.cancel_initiated_at is None


@then("inspecting an unknown emulator batch raises KeyError")
def step_inspect_unknown(context: Context) -> None:
    with contextlib.suppress(KeyError):
        scenario(context).emu.batch("msgbatch_unknown")
        raise AssertionError("no KeyError")


@then("the emulator settings are {processing:g} processing seconds and {cancel:g} cancel seconds")
def step_settings(context: Context, processing: float, cancel: float) -> None:
    emu = scenario(context).emu
    assert (emu.processing_seconds, emu.cancel_seconds) == (processing, cancel)


@when("the emulator settings change to {processing:g} processing seconds and {cancel:g} cancel seconds")
def step_settings_change(context: Context, processing: float, cancel: float) -> None:
    emu = scenario(context).emu
    emu.processing_seconds = processing
    emu.cancel_seconds = cancel


@when("the emulator is reset")
def step_reset(context: Context) -> None:
    scenario(context).emu.reset()


@then("creating the emulator with {seconds:g} processing seconds raises ValueError")
def step_negative(context: Context, seconds: float) -> None:
    with contextlib.suppress(ValueError):
        Emulator(processing_seconds=seconds)
        raise AssertionError("no ValueError")


# -- answers lost, late or slow, and the count of what was created ---------------------------------------------------


@given('the emulator drops the answer of the next "{route}" call after doing its work')
def step_drop(context: Context, route: str) -> None:
    scenario(context).emu.faults.drop_after_commit(route)


@given('the emulator answers the next {times:d} "{route}" calls {seconds:g} seconds after doing their work')
def step_delay(context: Context, times: int, route: str, seconds: float) -> None:
    scenario(context).emu.faults.delay_after_commit(route, seconds=seconds, times=times)


@when("the emulator streams results one line every {seconds:g} seconds")
def step_slow_results(context: Context, seconds: float) -> None:
    scenario(context).emu.faults.slow_results(seconds)


@when('the emulator makes "{route}" slow by {seconds:g} seconds for {times:d} call')
@when('the emulator makes "{route}" slow by {seconds:g} seconds for {times:d} calls')
def step_slow_times(context: Context, route: str, seconds: float, times: int) -> None:
    scenario(context).emu.faults.slow(route, seconds=seconds, times=times)


@when('the emulator makes "{route}" slow by {seconds:g} seconds')
def step_slow(context: Context, route: str, seconds: float) -> None:
    """Standing until a reset (or `seconds=0`); the emulator clock's sleeps are counted afresh from here."""
    s = scenario(context)
    s.emu.faults.slow(route, seconds=seconds)
    s.clock.sleeps.clear()


@then("the emulator call failed with a dropped connection")
def step_dropped(context: Context) -> None:
    error = scenario(context).error
    assert isinstance(error, anthropic.APIConnectionError), repr(error)
    assert not isinstance(error, anthropic.APITimeoutError), repr(error)
    assert isinstance(error.__cause__, httpx2.RemoteProtocolError), repr(error.__cause__)


@then("the emulator call took at least {seconds:g} seconds")
def step_slow_call(context: Context, seconds: float) -> None:
    assert scenario(context).elapsed >= seconds, scenario(context).elapsed


@then("the emulator batch was created {seconds:g} seconds before its answer came")
def step_created_before(context: Context, seconds: float) -> None:
    s = scenario(context)
    assert s.error is None, s.error
    assert s.batch.created_at.timestamp() == s.clock.now() - seconds, (s.batch.created_at, s.clock.now())


@then("the emulator clock slept {seconds:g} seconds before each event of the stream")
def step_slept_per_event(context: Context, seconds: float) -> None:
    s = scenario(context)
    assert s.raw is not None, s.raw
    assert s.raw.status_code == 200, s.raw.text
    events = sum(1 for line in s.raw.text.splitlines() if line.startswith("event: "))
    assert events > 2, s.raw.text
    assert s.clock.sleeps == [seconds] * events, (events, s.clock.sleeps)


@then("the emulator clock did not sleep")
def step_no_sleep(context: Context) -> None:
    s = scenario(context)
    assert s.raw is not None, s.raw
    assert s.raw.status_code == 200, s.raw.text
    assert s.clock.sleeps == [], s.clock.sleeps


@then("arming these emulator timing faults raises ValueError:")
def step_bad_timing_faults(context: Context) -> None:
    faults = scenario(context).emu.faults
    for row in context.table:
        kind, route = row["kind"], row["route"]
        with contextlib.suppress(ValueError):
            if kind == "drop_after_commit":
                faults.drop_after_commit(route, times=int(row["times"]))
            elif kind == "delay_after_commit":
                faults.delay_after_commit(route, seconds=float(row["seconds"]), times=int(row["times"]))
            else:
                times = int(row["times"]) if row["times"] else None
                faults.slow(route, seconds=float(row["seconds"]), times=times)
            raise AssertionError(f"armed {dict(row.items())}")
    assert all(faults.pending(route) == 0 for route in ROUTES)
    assert all(faults.take_slow(route) is None for route in ROUTES)


@when('I post the emulator admin route "{route}" the body {body}')
def step_admin_post(context: Context, route: str, body: str) -> None:
    raw_call(scenario(context), "POST", route, content=body.encode())


@then("the emulator admin answer is {body}")
def step_admin_answer(context: Context, body: str) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == 200, response.text
    assert response.json() == json.loads(body), response.json()


def _created(ids: str) -> dict[str, int]:
    return {name.strip(): int(count) for name, _, count in (item.partition("=") for item in ids.split(","))}


@then('the emulator created {count:d} batch holding "{ids}"')
@then('the emulator created {count:d} batches holding "{ids}"')
def step_created(context: Context, count: int, ids: str) -> None:
    emu = scenario(context).emu
    assert emu.created_batches == count, emu.created_batches
    assert dict(emu.created_custom_ids) == _created(ids), emu.created_custom_ids


@then("the emulator has created no batch")
def step_created_none(context: Context) -> None:
    emu = scenario(context).emu
    assert emu.created_batches == 0, emu.created_batches
    assert not emu.created_custom_ids, emu.created_custom_ids


# -- the state file --------------------------------------------------------------------------------------------------


def scratch_folder(s: Scenario) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="lowtide-emulator-state-"))
    s.cleanups.append(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


@given(
    "the emulator runs on a manual clock with {seconds:g} processing seconds and {cancel:g} cancel seconds, "
    "keeping its state in a file"
)
def step_start_state(context: Context, seconds: float, cancel: float) -> None:
    state_file = scratch_folder(scenario(context)) / "state.json"
    start(context, processing_seconds=seconds, cancel_seconds=cancel, state_file=state_file)


@when("the emulator is started again from its state file")
def step_restart(context: Context) -> None:
    s = scenario(context)
    assert s.settings.get("state_file") is not None, s.settings
    start(context, **s.settings)


@when("I download the results of every emulator batch")
def step_download_all(context: Context) -> None:
    s = scenario(context)
    s.downloads = {batch_id: raw_call(s, "GET", f"/v1/messages/batches/{batch_id}/results") for batch_id in s.batch_ids}


@then('every emulator batch answers the same results as before, with the statuses "{statuses}"')
def step_same_results(context: Context, statuses: str) -> None:
    s = scenario(context)
    assert [before.status_code for before in s.downloads.values()] == [int(x) for x in statuses.split(",")]
    for batch_id, before in s.downloads.items():
        after = raw_call(s, "GET", f"/v1/messages/batches/{batch_id}/results")
        assert after.status_code == before.status_code, (after.status_code, after.text)
        if before.status_code == 200:
            assert b'"custom_id"' in before.content, before.content
            assert after.content == before.content, (before.content, after.content)
        else:
            assert after.json()["error"] == before.json()["error"], (before.text, after.text)


@then('inspecting every emulator batch shows "{statuses}"')
def step_inspect_all(context: Context, statuses: str) -> None:
    s = scenario(context)
    found: list[str] = []
    for batch_id in s.batch_ids:
        try:
            found.append(s.emu.batch(batch_id).processing_status)
        except KeyError:
            found.append("gone")
    assert found == [status.strip() for status in statuses.split(",")], found


@then('starting the emulator on a state file that {case} raises StateFileError mentioning "{mention}"')
def step_bad_state_file(context: Context, case: str, mention: str) -> None:
    path = scratch_folder(scenario(context)) / "state.json"
    if case.startswith("holds "):
        path.write_text(case.removeprefix("holds "), encoding="utf-8")
    elif case == "is a directory":
        path.mkdir()
    else:
        assert case == "is in a missing directory", case
        path = path.parent / "missing" / path.name
    refusal = ""
    try:
        Emulator(state_file=path)
    except StateFileError as error:
        refusal = str(error)
    assert mention in refusal, f"a state file that {case}: {refusal!r}"
    assert str(path) in refusal, refusal


# -- the emulator on a socket ----------------------------------------------------------------------------------------


@given("the emulator serves on a socket")
def step_serve(context: Context) -> None:
    s = scenario(context)
    s.emulator = Emulator()
    serving = serve_in_thread(s.emulator)
    s.server = serving.__enter__()
    s.cleanups.append(lambda: serving.__exit__(None, None, None))
    s.client = anthropic.AsyncAnthropic(api_key="any-key", base_url=s.server.url, max_retries=0)
    s.cleanups.append(s.client.close)


def admin(s: Scenario, method: str, path: str, body: Any = None) -> httpx2.Response:
    assert s.server is not None
    with httpx2.Client(base_url=s.server.url) as http:
        s.raw = http.request(method, path, json=body)
    return s.raw


@when("I send the socket emulator a message")
def step_socket_message(context: Context) -> None:
    send(scenario(context), base_params())


@when("I arm the socket emulator's fault {body}")
def step_socket_fault(context: Context, body: str) -> None:
    assert admin(scenario(context), "POST", "/_emulator/faults", json.loads(body)).status_code == 200


@when("I arm the socket emulator's outcome {body}")
def step_socket_outcome(context: Context, body: str) -> None:
    assert admin(scenario(context), "POST", "/_emulator/outcomes", json.loads(body)).status_code == 200


@when("I run a {count:d}-request batch on the socket emulator")
def step_socket_batch(context: Context, count: int) -> None:
    s = scenario(context)
    create_batch(s, numbered(count))
    assert s.batch.results_url is None
    fetch_results(s)
    assert s.server is not None
    assert s.runner.run(s.sdk.messages.batches.retrieve(s.batch.id)).results_url.startswith(s.server.url)


@then("the socket emulator's stats show {count:d} batch and these calls:")
def step_socket_stats(context: Context, count: int) -> None:
    stats = admin(scenario(context), "GET", "/_emulator/stats").json()
    assert stats["batches"] == count, stats
    for row in context.table:
        assert stats["calls"].get(row["route"]) == int(row["count"]), stats


@when("I reset the socket emulator")
def step_socket_reset(context: Context) -> None:
    assert admin(scenario(context), "POST", "/_emulator/reset").json() == {"reset": True}


@then("the socket emulator's stats show {count:d} batches and no calls")
def step_socket_empty(context: Context, count: int) -> None:
    stats = admin(scenario(context), "GET", "/_emulator/stats").json()
    openai = {"openai_batches": 0, "openai_created_batches": 0, "openai_created_custom_ids": {}, "rate_limited": 0}
    openai["openai_webhooks_sent"] = 0  # deliveries of its batch webhooks answered 2xx
    gemini = {"gemini_batches": 0, "gemini_created_batches": 0, "gemini_created_custom_ids": {}}
    gemini["gemini_webhooks_sent"] = 0  # likewise, the Gemini API's
    bedrock = {
        "bedrock_batches": 0,
        "bedrock_created_batches": 0,
        "bedrock_created_custom_ids": {},
        "bedrock_objects": 0,
    }
    mistral = {"mistral_batches": 0, "mistral_created_batches": 0, "mistral_created_custom_ids": {}}
    azure = {"azure_openai_batches": 0, "azure_openai_created_batches": 0, "azure_openai_created_custom_ids": {}}
    compatible = {
        f"{name}_{stat}": value
        for name in ("groq", "together", "xai", "openrouter", "fireworks")
        for stat, value in (("batches", 0), ("created_batches", 0), ("created_custom_ids", {}))
    }
    vertex = {"vertex_batches": 0, "vertex_created_batches": 0, "vertex_created_custom_ids": {}, "vertex_objects": 0}
    live = {"live_answers": {}, "abandoned_answers": 0}
    empty = {
        "calls": {}, "batches": count, "created_batches": 0, "created_custom_ids": {},
        **openai, **gemini, **bedrock, **mistral, **azure, **compatible, **vertex, **live,
    }  # fmt: skip
    assert stats == empty, stats


@then('the socket emulator\'s stats show {count:d} batch created, holding "{ids}"')
@then('the socket emulator\'s stats show {count:d} batches created, holding "{ids}"')
def step_socket_created(context: Context, count: int, ids: str) -> None:
    stats = admin(scenario(context), "GET", "/_emulator/stats").json()
    assert stats["created_batches"] == count, stats
    assert stats["created_custom_ids"] == _created(ids), stats


@when("I create a {count:d}-request batch on the socket emulator")
def step_socket_create(context: Context, count: int) -> None:
    create_batch(scenario(context), numbered(count))


@when('I post {body} to the socket emulator\'s "{route}"')
def step_socket_admin_post(context: Context, body: str, route: str) -> None:
    admin(scenario(context), "POST", route, json.loads(body))


# -- the `lowtide emulator` command ----------------------------------------------------------------------------------


class _Capture(io.StringIO):
    """stdout for the command, watched from the thread that talks to it."""

    def __init__(self) -> None:
        super().__init__()
        self.announced = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if "\n" in self.getvalue():
            self.announced.set()
        return written


@when('I run "{command}" and stop it after one call')
def step_cli(context: Context, command: str) -> None:
    s = scenario(context)
    output = _Capture()
    seen: dict[str, Any] = {}

    def talk_then_stop() -> None:
        try:
            if output.announced.wait(30):
                url = output.getvalue().split()[-1]
                with httpx2.Client(base_url=url) as http:
                    headers = {"x-api-key": "secret", **VERSION}
                    seen["message"] = http.post("/v1/messages", json=base_params(), headers=headers)
                    seen["refused"] = http.post(
                        "/v1/messages", json=base_params(), headers={**headers, "x-api-key": "other"}
                    )
        finally:
            # Sent to this process: the command runs in the main thread, as it would from a shell.
            os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=talk_then_stop, daemon=True)
    helper.start()
    with contextlib.redirect_stdout(output):
        status = cli.main(command.split()[1:])
    helper.join(30)
    s.raw = seen.get("message")
    context.emulator_command = (output.getvalue(), status, seen)


@then('the command announced "{line}" and returned {status:d}')
def step_cli_announced(context: Context, line: str, status: int) -> None:
    printed, returned, _ = context.emulator_command
    pattern = re.escape(line).replace(re.escape("<port>"), r"(\d+)")
    assert re.fullmatch(pattern + "\n", printed), repr(printed)
    assert int(re.findall(r"\d+", printed)[-1]) > 0
    assert returned == status, returned


@then('the command\'s emulator answered the call with the key "{key}"')
def step_cli_answered(context: Context, key: str) -> None:
    _, _, seen = context.emulator_command
    assert seen["message"].status_code == 200, seen["message"].text
    assert seen["message"].json()["type"] == "message"
    assert seen["refused"].status_code == 401, seen["refused"].text


@when('I run "{command}" expecting it to stop at once')
def step_cli_refused(context: Context, command: str) -> None:
    s = scenario(context)
    busy = socket.create_server(("127.0.0.1", 0))
    s.cleanups.append(busy.close)
    values = {"<busy-port>": str(busy.getsockname()[1]), "<missing-dir>": str(scratch_folder(s) / "missing")}
    for name, value in values.items():
        command = command.replace(name, value)
    printed, complained = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(complained):
        status = cli.main(command.split()[1:])
    context.emulator_refusal = (printed.getvalue(), complained.getvalue(), status, values)


@then('the command printed "{message}" on stderr and returned {status:d}')
def step_cli_refusal(context: Context, message: str, status: int) -> None:
    printed, complained, returned, values = context.emulator_refusal
    for name, value in values.items():
        message = message.replace(name, value)
    assert printed == "", printed
    assert complained.startswith(message), complained
    assert complained.count("\n") == 1, complained
    assert complained.endswith("\n"), complained
    assert returned == status, returned
