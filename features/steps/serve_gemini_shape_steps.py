"""Steps for the shapes of Gemini's wire in `lowtide serve`: request bodies read into actors' calls, answers and errors
written as the Gemini API writes them, without a server (what the SDK sees over a socket is `serve_gemini_steps.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import (
    ActorError,
    ActorResponse,
    APIConnectionError,
    APIError,
    BatchRequestCanceled,
    BatchRequestErrored,
    BatchRequestExpired,
    BudgetExceededError,
    ConfigurationError,
    InternalError,
    InvalidRequestError,
    RateLimitError,
    StructuredOutputError,
)
from lowtide.providers import Refusal, ServedCall
from lowtide.providers.gemini.serving import GenerateContentWire


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    gemini_shapes: Shapes


_WIRE = GenerateContentWire()


@dataclass
class Shapes:
    call: ServedCall | None = None
    refusal: Refusal | None = None
    answer: ActorResponse[Any] | None = None
    written: dict[str, Any] = field(default_factory=dict[str, Any])


def _shapes(context: Context) -> Shapes:
    if not hasattr(context, "gemini_shapes"):
        context.gemini_shapes = Shapes()
    return context.gemini_shapes


def _read(context: Context, target: str, body: object) -> None:
    model, _, method = target.removeprefix("models/").partition(":")
    try:
        _shapes(context).call = _WIRE.call(body, {"version": "v1beta", "model": model, "method": method})
    except Refusal as refusal:
        _shapes(context).refusal = refusal


@when("lowtide serve reads this Gemini body for {target}")
def read_body(context: Context, target: str) -> None:
    _read(context, target, json.loads(context.text))


@when("lowtide serve reads a Gemini body with the function tide and the function-calling config {config}")
def read_choice(context: Context, config: str) -> None:
    body = {
        "contents": [{"parts": [{"text": "Tide?"}]}],
        "tools": [{"functionDeclarations": [{"name": "tide"}]}],
        "toolConfig": {"functionCallingConfig": json.loads(config)},
    }
    _read(context, "models/gemini-2.5-flash:generateContent", body)


def _call(context: Context) -> ServedCall:
    shapes = _shapes(context)
    assert shapes.call is not None, shapes.refusal and shapes.refusal.message
    return shapes.call


@then("the call lowtide serve makes of the Gemini body is")
def call_is(context: Context) -> None:
    arguments = _call(context).arguments
    assert arguments == json.loads(context.text), json.dumps(arguments, indent=1)


@then("the served Gemini call is streamed")
def streamed(context: Context) -> None:
    assert _call(context).stream


@then("the served Gemini call is not streamed")
def not_streamed(context: Context) -> None:
    assert not _call(context).stream


@then("the Gemini call's tool_choice is {choice}")
def tool_choice_is(context: Context, choice: str) -> None:
    assert _call(context).arguments["tool_choice"] == json.loads(choice), _call(context).arguments


@then('the Gemini body is refused with 400 saying "{words}"')
def refused(context: Context, words: str) -> None:
    refusal = _shapes(context).refusal
    assert refusal is not None, _shapes(context).call
    assert (refusal.status, refusal.error_type) == (400, "INVALID_ARGUMENT"), refusal
    assert words in refusal.message, refusal.message


# Answers.


def _answer(content: list[dict[str, Any]], stop: str) -> ActorResponse[Any]:
    text = "".join(block["text"] for block in content if block["type"] == "text")
    return ActorResponse[Any].model_validate(
        {
            "text": text,
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 4},
            "cost": None,
            "model": "gemini-2.5-flash",
            "provider": "gemini",
            "mode": "batch",
            "ids": {"custom_id": "c1", "message_id": "resp-1"},
        }
    )


@given("a Gemini answer of the model holding a thought, a text, two function calls and an executable code part")
def rich_answer(context: Context) -> None:
    _shapes(context).answer = _answer(
        [
            {"type": "thinking", "thinking": "The tables.", "signature": "c2ln"},
            {"type": "text", "text": "High tide at 14:02."},
            {"type": "tool_use", "id": "call-1", "name": "tide", "input": {"port": "Brest"}},
            {"type": "tool_use", "id": "gemini-call-3-tide", "name": "tide", "input": {"port": "Oslo"}},
            {"type": "other", "data": {"executableCode": {"language": "PYTHON", "code": "print(1)"}}},
        ],
        "tool_use",
    )


@given('a Gemini answer of the model that stopped for "{stop}"')
def stopped_answer(context: Context, stop: str) -> None:
    _shapes(context).answer = _answer([{"type": "text", "text": "High tide."}], stop)


@when("lowtide serve writes it as Gemini's GenerateContentResponse")
def write_answer(context: Context) -> None:
    shapes = _shapes(context)
    assert shapes.answer is not None
    shapes.written = _WIRE.message(shapes.answer, ServedCall())


@then("the written Gemini answer is")
def written_is(context: Context) -> None:
    written = _shapes(context).written
    assert written == json.loads(context.text), json.dumps(written, indent=1)


@then("streamed, it is one server-sent event holding that answer")
def streamed_answer(context: Context) -> None:
    written = _shapes(context).written
    events = list(_WIRE.events(written, ServedCall(stream=True)))
    assert len(events) == 1, events
    assert events[0].startswith(b"data: "), events
    assert events[0].endswith(b"\n\n"), events
    assert json.loads(events[0].removeprefix(b"data: ")) == written, events


@then('the written Gemini answer\'s finish reason is "{finish}"')
def written_finish(context: Context, finish: str) -> None:
    assert _shapes(context).written["candidates"][0]["finishReason"] == finish, _shapes(context).written


# Errors.


def _error(name: str) -> ActorError:
    kind, _, rest = name.partition(" ")
    status, _, error_type = rest.partition(" ")
    typed = None if error_type in ("", "-") else error_type
    match kind:
        case "ConfigurationError":
            return ConfigurationError("temperature: out of range", field="temperature")
        case "StructuredOutputError":
            return StructuredOutputError("not a Tide", text="{}", model_name="Tide")
        case "BudgetExceededError":
            return BudgetExceededError(
                scope="actor", limit_usd=Decimal(1), spent_usd=Decimal(1), estimate_usd=Decimal("0.1")
            )
        case "RateLimitError":
            return RateLimitError("slow down", status_code=int(status), error_type=typed)
        case "APIError":
            return APIError("the API failed", status_code=int(status), error_type=typed)
        case "InvalidRequestError":
            return InvalidRequestError("Gemini stopped the answer for SAFETY", error_type=typed)
        case "APIConnectionError":
            return APIConnectionError("the connection dropped")
        case "BatchRequestErrored":
            return BatchRequestErrored(
                batch_id="b", custom_id="c", error_type=status, api_message="no", retryable=False
            )
        case "BatchRequestExpired":
            return BatchRequestExpired(batch_id="b", custom_id="c")
        case "BatchRequestCanceled":
            return BatchRequestCanceled(batch_id="b", custom_id="c")
        case _:
            return InternalError("something lowtide did not expect")


@when("lowtide serve answers the Gemini SDK with the error {error}")
def answer_error(context: Context, error: str) -> None:
    _shapes(context).refusal = _WIRE.refusal(_error(error))


@when('lowtide serve refuses a Gemini caller with its own {status:d} "{error_type}"')
def own_refusal(context: Context, status: int, error_type: str) -> None:
    _shapes(context).refusal = Refusal(status, error_type, "refused")


@then('the Gemini error is {status:d} "{name}", in Google\'s error shape')
def error_is(context: Context, status: int, name: str) -> None:
    refusal = _shapes(context).refusal
    assert refusal is not None
    body = _WIRE.error_body(refusal)
    assert refusal.status == status, (refusal.status, refusal.message)
    assert body == {"error": {"code": status, "message": refusal.message, "status": name}}, body


@then("as a stream's event, it is that error body")
def error_event(context: Context) -> None:
    refusal = _shapes(context).refusal
    assert refusal is not None
    event = _WIRE.error_event(refusal)
    assert json.loads(event.removeprefix(b"data: ")) == _WIRE.error_body(refusal), event
