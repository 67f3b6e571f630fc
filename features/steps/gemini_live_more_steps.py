"""Steps for the rest of Gemini's live mode (features/gemini_live_more.feature): streamed answers, the pre-send checks
(models list, token counting), safety ratings kept as provider details (through the ledger too) and the stream's
chunks joined into one answer. The emulator and the actor come from gemini_live_steps.py's steps."""

from __future__ import annotations

import json
from typing import Any, Protocol

from _support import emulated_reply_to, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorResponse, BatchProcessingMode


class Context(StepContext, Protocol):
    gemini_sent: list[dict[str, Any]]
    """The generateContent bodies the scenario's client sent (gemini_live_steps.py keeps them)."""
    gemini_counted: list[dict[str, Any]]
    """The countTokens bodies it sent."""


_LONG_PROMPT = (
    "Tell me how the spring tides of the equinox differ from the neap tides of the quarter moons, port by port, "
    "and why the harbour master posts them a week ahead"
)
_NEGLIGIBLE = {
    "HARM_CATEGORY_HATE_SPEECH": "NEGLIGIBLE",
    "HARM_CATEGORY_DANGEROUS_CONTENT": "NEGLIGIBLE",
    "HARM_CATEGORY_HARASSMENT": "NEGLIGIBLE",
    "HARM_CATEGORY_SEXUALLY_EXPLICIT": "NEGLIGIBLE",
}
_TIDE_TOOL: dict[str, Any] = {
    "name": "record_tide",
    "input_schema": {"type": "object", "properties": {"port": {"type": "string"}}, "required": ["port"]},
}


def _calls(context: Context, route: str) -> int:
    return world(context).emu.calls[f"gemini.{route}"]


# -- streaming ------------------------------------------------------------------------------------------------


def _ask(context: Context, max_tokens: int, **arguments: Any) -> ActorResponse[Any] | None:
    w = world(context)
    return w.attempt_async(lambda: w.current_actor().run(_LONG_PROMPT, max_tokens=max_tokens, **arguments))


@when("the Gemini actor is asked a long question allowing {streamed:d} tokens, then {whole:d}, {case}")
def step_ask_both_ways(context: Context, streamed: int, whole: int, case: str) -> None:
    arguments: dict[str, Any] = {}
    if case == "calling a tool":
        arguments = {"tools": [_TIDE_TOOL], "tool_choice": {"type": "tool", "name": "record_tide"}}
    elif case == "for JSON":
        arguments = {"extra_params": {"generationConfig": {"responseMimeType": "application/json"}}}
    first = _ask(context, streamed, **arguments)
    second = _ask(context, whole, **arguments)
    world(context).value = (first, second)


@when("the Gemini actor is asked a long question allowing {tokens:d} tokens")
def step_ask_long(context: Context, tokens: int) -> None:
    world(context).response = _ask(context, tokens)


@then("the streamed answer is the one answered whole, but for its ids")
def step_same_answer(context: Context) -> None:
    w = world(context)
    w.succeeded()
    streamed, whole = w.value
    assert isinstance(streamed, ActorResponse), streamed
    assert isinstance(whole, ActorResponse), whole
    one = streamed.model_dump(exclude={"ids"})
    other = whole.model_dump(exclude={"ids"})
    assert one == other, (one, other)
    assert streamed.ids.message_id, streamed.ids
    bodies: list[dict[str, Any]] = context.gemini_sent
    sent = [body["generationConfig"]["maxOutputTokens"] for body in bodies]
    assert sent[-2:] == [8000, 4000], sent


@then("the Gemini answer is the emulated reply to the long question")
def step_long_reply(context: Context) -> None:
    answer = world(context).answer()
    assert answer.text.startswith(emulated_reply_to(_LONG_PROMPT)), answer.text
    assert answer.stop_reason == "end_turn", answer.stop_reason


@given("the Gemini emulator breaks the next streamed answer after its first chunk")
def step_break_stream(context: Context) -> None:
    world(context).emu.faults.cut("gemini.stream_generate_content", after_lines=1)


# -- the pre-send checks --------------------------------------------------------------------------------------


@then(
    "Gemini's API was asked about the model {models:d}, listed its models {listed:d}, counted {counted:d}, generated "
    "{generated:d}"
)
def step_gemini_asked(context: Context, models: int, listed: int, counted: int, generated: int) -> None:
    said = {
        "models": _calls(context, "models.get"),
        "listed": _calls(context, "models.list"),
        "counted": _calls(context, "count_tokens"),
        "generated": _calls(context, "generate_content") + _calls(context, "stream_generate_content"),
    }
    expected = {"models": models, "listed": listed, "counted": counted, "generated": generated}
    assert said == expected, said


@when("the Gemini actor is asked a prompt of {count:d} characters")
def step_ask_size(context: Context, count: int) -> None:
    w = world(context)
    prompt = ("The tide is high. " * (count // 18 + 1))[:count]
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt))


@given("the Gemini emulator fails the next {route} call with status {status:d}")
def step_route_fault(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(f"gemini.{route}", status)


@then("Gemini counted a first turn holding the system prompt and the tool's declaration")
def step_counted_first_turn(context: Context) -> None:
    counted = context.gemini_counted[-1]
    first = counted["contents"][0]
    assert first["role"] == "user", counted
    texts = [part["text"] for part in first["parts"]]
    assert texts[0] == "You read tide tables.", texts
    assert json.loads(texts[1])[0]["name"] == "record_tide", texts


@when("the Gemini actor is asked about {case} again")
def step_ask_again(context: Context, case: str) -> None:
    context.execute_steps(f'When the Gemini actor is asked "Hello" given {case}')


# -- provider details -----------------------------------------------------------------------------------------


def _ratings(response: ActorResponse[Any] | None) -> dict[str, str]:
    assert response is not None, "no response"
    details = response.provider_details
    assert details is not None, response
    ratings = details["safety_ratings"]
    assert isinstance(ratings, list), details
    return {str(rating["category"]): str(rating["probability"]) for rating in ratings if isinstance(rating, dict)}


@then("the Gemini answer's provider details hold its safety ratings, each negligible")
def step_ratings(context: Context) -> None:
    answer = world(context).answer()
    assert _ratings(answer) == _NEGLIGIBLE, answer.provider_details
    assert set(answer.provider_details or {}) == {"safety_ratings"}, answer.provider_details


@when("the Gemini actor maps the same {count:d} prompts in live mode again")
def step_map_again(context: Context, count: int) -> None:
    w = world(context)
    prompts, _ = w.value
    assert len(prompts) == count, prompts
    w.value = (prompts, w.run(w.current_actor().map(prompts, mode="live")))


@then("each of the Gemini run's {count:d} results holds its safety ratings, read back from the ledger")
def step_run_ratings(context: Context, count: int) -> None:
    w = world(context)
    _, result = w.value
    items = list(result)
    assert len(items) == count, items
    assert all(item.ok for item in items), items
    for item in items:
        assert _ratings(item.response) == _NEGLIGIBLE, item.response
    # The second go sent nothing: its answers are the ledger's, read back.
    assert _calls(context, "generate_content") == count, w.emu.calls


@then("the Gemini run took at least {seconds:g} seconds, and no call met a 429")
def step_paced(context: Context, seconds: float) -> None:
    w = world(context)
    took = w.clock.now() - w.started_at
    assert took >= seconds, took
    assert w.emu.rate_limited == 0, w.emu.rate_limited


@when("the Gemini actor maps {count:d} prompts in live mode, timed")
def step_map_timed(context: Context, count: int) -> None:
    w = world(context)
    w.started_at = w.clock.now()
    context.execute_steps(f"When the Gemini actor maps {count} prompts in live mode")


# -- pure readings --------------------------------------------------------------------------------------------


@then("a Gemini body with these fields gives these provider details:")
def step_details(context: Context) -> None:
    from lowtide.providers.gemini.answers import answer_and_json

    for row in context.table:
        extra = json.loads(row["fields"])
        answered = {"content": {"parts": [{"text": "High tide at six."}]}, "finishReason": "STOP"}
        candidate = {**answered, **extra.get("candidate", {})}
        body = {"candidates": [candidate], **extra.get("body", {})}
        answer, stored = answer_and_json(body, mode=BatchProcessingMode.LIVE, ids={})
        expected = json.loads(row["details"]) if row["details"] else None
        assert stored.get("provider_details") == expected, stored
        response = answer if isinstance(answer, ActorResponse) else answer.response()
        assert response.provider_details == expected, response


@then("a Gemini answer with safety ratings, stored as a result and read back, keeps them; one without has none")
def step_stored_details(context: Context) -> None:
    from lowtide.batching.records import answer_from_json
    from lowtide.ledger.answer_form import stored_answer
    from lowtide.ledger.records import answer_json
    from lowtide.providers import response_of
    from lowtide.providers.gemini.answers import answer_and_json

    rating = {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}
    for ratings in ([rating], None):
        candidate: dict[str, Any] = {"content": {"parts": [{"text": "High tide at six."}]}, "finishReason": "STOP"}
        if ratings is not None:
            candidate["safetyRatings"] = ratings
        ids = {"batch_id": "batches/b1", "custom_id": "c1", "request_id": None}
        _, stored = answer_and_json({"candidates": [candidate]}, mode=BatchProcessingMode.BATCH, ids=ids)
        # Written, then read, as the ledger does.
        back = response_of(answer_from_json(stored_answer(answer_json(stored))))
        expected = {"safety_ratings": ratings} if ratings is not None else None
        assert back.provider_details == expected, back
        assert back.text == "High tide at six.", back


@then("these streamed Gemini chunks are joined into this body:")
def step_joined(context: Context) -> None:
    from lowtide.providers.gemini.stream import finished, merged

    for row in context.table:
        chunks = json.loads(row["chunks"])
        body = merged(chunks)
        expected = json.loads(row["body"])
        assert body == expected, (body, expected)
        assert finished(body) is (row["finished"] == "yes"), (row["finished"], body)
