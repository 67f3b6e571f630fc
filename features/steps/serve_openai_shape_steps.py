"""Steps for the OpenAI wires of `lowtide serve` on their own: request bodies read into calls, answers and errors
written in OpenAI's shapes, with no server (`serve_openai_steps.py` has the server)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Protocol

from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.actor import Actor
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import (
    ActorError,
    APIError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchTimeoutError,
    BudgetExceededError,
    ConfigurationError,
    LedgerError,
    StructuredOutputError,
)
from lowtide.messages.wire import Refusal, ServedCall, Wire
from lowtide.provider import Provider
from lowtide.providers.openai.serving import ChatCompletionsWire, ResponsesWire
from lowtide.registry import ProviderRegistry
from lowtide.serve.app import build_app
from lowtide.types import ActorRequest, ActorResponse


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    build_error: ActorError | ValueError | None
    openai_shapes: Shapes


_WIRES: dict[str, Wire] = {"/v1/chat/completions": ChatCompletionsWire(), "/v1/responses": ResponsesWire()}


@dataclass
class Shapes:
    call: ServedCall | None = None
    refusal: Refusal | None = None
    answer: ActorResponse[Any] | None = None
    written: dict[str, Any] = field(default_factory=dict[str, Any])


def _shapes(context: Context) -> Shapes:
    if not hasattr(context, "openai_shapes"):
        context.openai_shapes = Shapes()
    return context.openai_shapes


@when("lowtide serve reads this body for {path}")
def read_body(context: Context, path: str) -> None:
    try:
        _shapes(context).call = _WIRES[path].call(json.loads(context.text), {})
    except Refusal as refusal:
        _shapes(context).refusal = refusal


def _call(context: Context) -> ServedCall:
    call = _shapes(context).call
    refusal = _shapes(context).refusal
    assert call is not None, refusal and refusal.message
    return call


@then("the call lowtide serve makes is")
def call_is(context: Context) -> None:
    expected = json.loads(context.text)
    arguments = _call(context).arguments
    assert arguments == expected, json.dumps(arguments, indent=1)


@then("the served call is streamed, with its usage")
def streamed(context: Context) -> None:
    call = _call(context)
    assert call.stream, call
    assert call.echo["include_usage"] is True, call.echo


@then("the served call is not streamed")
def not_streamed(context: Context) -> None:
    call = _call(context)
    assert not call.stream, call
    assert call.echo["include_usage"] is False, call.echo


@then("the call's tool_choice is {named}")
def tool_choice_is(context: Context, named: str) -> None:
    assert _call(context).arguments["tool_choice"] == json.loads(named), _call(context).arguments


@then('it is refused with 400 naming "{param}"')
def refused(context: Context, param: str) -> None:
    refusal = _shapes(context).refusal
    assert refusal is not None, _shapes(context).call
    assert refusal.status == 400, refusal.status
    assert refusal.error_type == "invalid_request_error", refusal.error_type
    assert refusal.param == (None if param == "body" else param), (refusal.param, refusal.message)
    body = _WIRES["/v1/responses"].error_body(refusal)
    assert body["error"]["message"] == refusal.message, body


def _answer(content: list[dict[str, Any]], stop: str) -> ActorResponse[Any]:
    text = "".join(block["text"] for block in content if block["type"] == "text")
    return ActorResponse[Any].model_validate(
        {
            "text": text,
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 4},
            "cost": None,
            "model": "gpt-5.4-mini",
            "provider": "openai",
            "mode": "batch",
            "ids": {"custom_id": "c1"},
        }
    )


@given("an answer of the model holding thinking, two texts, a tool call, a refusal and a web search call")
def rich_answer(context: Context) -> None:
    _shapes(context).answer = _answer(
        [
            {"type": "thinking", "thinking": "The tide tables.", "signature": None},
            {"type": "text", "text": "High tide "},
            {"type": "text", "text": "at 14:02."},
            {"type": "tool_use", "id": "call_1", "name": "tide", "input": {"port": "Brest"}},
            {"type": "refusal", "data": {"type": "refusal", "refusal": "Not that."}},
            {"type": "web_search_call", "data": {"id": "ws_1", "status": "completed"}},
        ],
        "tool_use",
    )


@given('an answer of the model with the stop reason "{stop}"')
def stopped_answer(context: Context, stop: str) -> None:
    _shapes(context).answer = _answer([{"type": "text", "text": "Tides."}], stop)


def _written(context: Context, path: str) -> dict[str, Any]:
    answer = _shapes(context).answer
    assert answer is not None
    return _WIRES[path].message(answer, ServedCall())


@when("lowtide serve writes it as a Response")
def write_response(context: Context) -> None:
    _shapes(context).written = _written(context, "/v1/responses")


@when("lowtide serve writes it as a ChatCompletion")
def write_completion(context: Context) -> None:
    _shapes(context).written = _written(context, "/v1/chat/completions")


@then("the Response's output items are {kinds}")
def output_items(context: Context, kinds: str) -> None:
    written = _shapes(context).written
    assert [item["type"] for item in written["output"]] == [kind.strip() for kind in kinds.split(",")], written
    assert written["id"] == "resp_c1", written["id"]
    assert written["usage"]["input_tokens"] == 14, written["usage"]
    assert written["usage"]["input_tokens_details"]["cached_tokens"] == 4, written["usage"]
    assert written["output"][-1] == {"type": "web_search_call", "id": "ws_1", "status": "completed"}, written


@then("the Response's first message says both texts as one output_text")
def first_message(context: Context) -> None:
    output = _shapes(context).written["output"]
    message = output[1]
    assert [part["text"] for part in message["content"]] == ["High tide at 14:02."], message
    assert output[3]["content"] == [{"type": "refusal", "refusal": "Not that."}], output[3]
    assert output[0]["summary"] == [{"type": "summary_text", "text": "The tide tables."}], output[0]


@then('the ChatCompletion\'s message has both texts, the refusal and one tool call, finish reason "{finish}"')
def completion_message(context: Context, finish: str) -> None:
    written = _shapes(context).written
    choice = written["choices"][0]
    assert choice["message"]["content"] == "High tide at 14:02.", choice
    assert choice["message"]["refusal"] == "Not that.", choice
    assert choice["message"]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "tide", "arguments": '{"port":"Brest"}'}}
    ], choice
    assert choice["finish_reason"] == finish, choice
    assert written["usage"] == {
        "prompt_tokens": 14,
        "completion_tokens": 5,
        "total_tokens": 19,
        "prompt_tokens_details": {"cached_tokens": 4, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }, written["usage"]


@then('as a ChatCompletion its finish reason is "{finish}"')
def finish_reason(context: Context, finish: str) -> None:
    written = _written(context, "/v1/chat/completions")
    assert written["choices"][0]["finish_reason"] == finish, written


@then('as a Response its status is "{status}"')
def response_status(context: Context, status: str) -> None:
    written = _written(context, "/v1/responses")
    assert written["status"] == status, written
    reason = {"reason": "max_output_tokens"} if status == "incomplete" else None
    assert written["incomplete_details"] == reason, written


def _error(description: str) -> ActorError:
    if description.startswith("a configuration error on "):
        return ConfigurationError("Wrong.", field=description.split('"')[1])
    if description.startswith("an API error "):
        status, code = description.removeprefix("an API error ").split(" ")
        return APIError("Refused upstream.", status_code=int(status), error_type=code.strip('"'))
    if description.startswith("a batch request errored "):
        code = description.split('"')[1]
        return BatchRequestErrored(batch_id="b", custom_id="c", error_type=code, api_message="Failed.")
    errors: dict[str, ActorError] = {
        "a structured output error": StructuredOutputError("Not JSON.", text="x", model_name="Tide"),
        "a spent budget": BudgetExceededError(
            scope="call", limit_usd=Decimal("0.01"), spent_usd=Decimal(0), estimate_usd=Decimal("0.02")
        ),
        "a batch that outlived its wait": BatchTimeoutError(batch_id="b", elapsed=10.0, max_wait=5.0, canceled=True),
        "a batch request canceled": BatchRequestCanceled(batch_id="b", custom_id="c"),
        "a ledger error": LedgerError("The disk is full."),
    }
    return errors[description]


@when("the OpenAI wire refuses {error}")
def wire_refuses(context: Context, error: str) -> None:
    _shapes(context).refusal = _WIRES["/v1/chat/completions"].refusal(_error(error))


@then('the refusal is status {status:d}, type "{kind}", code "{code}", retry "{retry}"')
def refusal_is(context: Context, status: int, kind: str, code: str, retry: str) -> None:
    refusal = _shapes(context).refusal
    assert refusal is not None
    body = _WIRES["/v1/chat/completions"].error_body(refusal)["error"]
    assert refusal.status == status, (refusal.status, body)
    assert body["type"] == kind, body
    assert body["code"] == (None if code == "none" else code), body
    assert refusal.headers.get("x-should-retry") == (None if retry == "yes" else "false"), refusal.headers


class _Silent(Provider):
    """A batch provider that serves no wire."""

    name: ClassVar[str] = "silent"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        raise NotImplementedError


def _build(context: Context, actor: Actor, keys: list[str]) -> None:
    try:
        build_app(actor, client_keys=keys)
    except (ActorError, ValueError) as error:
        context.build_error = error
    else:
        context.build_error = None


@when("lowtide serve is built for an actor of a provider that serves no wire")
def build_silent(context: Context) -> None:
    registry = ProviderRegistry()
    registry.register("silent", BatchProcessingMode.BATCH, lambda options: _Silent())
    actor = Actor({"name": "quiet", "provider": "silent", "model": "m", "batch_processing": "batch"}, registry=registry)
    _build(context, actor, ["local-secret"])


@when("lowtide serve is built for an OpenAI actor with no client key")
def build_keyless(context: Context) -> None:
    _build(context, Actor({"name": "keyless", "provider": "openai", "model": "gpt-5.4-mini"}), [])


@then('building it fails with a configuration error saying "{words}"')
def build_failed_configuration(context: Context, words: str) -> None:
    assert isinstance(context.build_error, ConfigurationError), context.build_error
    assert words in str(context.build_error), context.build_error


@then('building it fails saying "{words}"')
def build_failed(context: Context, words: str) -> None:
    assert context.build_error is not None
    assert words in str(context.build_error), context.build_error
