"""Steps for answers built without a second validation (`types.built_text_answer`), checked against validation."""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ActorResponse, MemoryLedger, RunResult
from lowtide.batching.records import answer_from_json, response_from_json
from lowtide.core.modes import BatchProcessingMode
from lowtide.emulator import Emulator
from lowtide.messages.answers import Answer, TextAnswer
from lowtide.types import Usage


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    built_actor: Actor
    built_answer: ActorResponse[Any]
    built_run: RunResult
    first_run: RunResult
    batches_before: int
    block_fields: dict[str, Any]
    held: TextAnswer
    stored_answer: dict[str, Any]
    read_back: Answer
    anthropic_line: dict[str, Any]
    anthropic_outcome: object
    anthropic_stored: dict[str, Any] | None


_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.4-mini"}


@given("an actor of {provider} in batch mode against the emulator, on an in-memory ledger")
def step_actor(context: Context, provider: str) -> None:
    emulator = Emulator()
    client = emulator.openai_client() if provider == "openai" else emulator.client()
    context.built_actor = Actor(
        {
            "name": "plain",
            "provider": provider,
            "model": _MODELS[provider],
            "max_tokens": 64,
            "batch_processing": "batch",
            "batch": {"poll_interval": 0.05, "coalesce_window": 0.01},
        },
        client=client,
        ledger=MemoryLedger(),
    )
    context.cleanups.append(context.built_actor.aclose)
    context.cleanups.append(client.close)


@when('it is asked "{prompt}" in batch mode')
def step_ask(context: Context, prompt: str) -> None:
    context.built_answer = context.runner.run(context.built_actor.run(prompt))


def _validated(answer: ActorResponse[Any]) -> ActorResponse[Any]:
    return ActorResponse[Any].model_validate(answer.model_dump(mode="json", exclude_unset=True))


def _parts(answer: ActorResponse[Any]) -> list[BaseModel]:
    return [answer, answer.ids, *answer.content]


@then("the answer, its content blocks and its ids each have the fields set validation would give them")
def step_fields_set(context: Context) -> None:
    answer: ActorResponse[Any] = context.built_answer
    assert answer.content, answer
    for built, validated in zip(_parts(answer), _parts(_validated(answer)), strict=True):
        assert built.model_fields_set == validated.model_fields_set, (type(built), built.model_fields_set)


@then("the answer equals the one validated from its own JSON")
def step_equal(context: Context) -> None:
    answer: ActorResponse[Any] = context.built_answer
    again = _validated(answer)
    assert again == answer, (again, answer)
    assert again.model_dump_json() == answer.model_dump_json()
    assert answer.model_copy() == answer


@when('it maps the prompts "{first}", "{second}" and "{third}" in batch mode')
def step_map(context: Context, first: str, second: str, third: str) -> None:
    context.built_run = context.runner.run(context.built_actor.map([first, second, third], progress="none"))


@then("every item holds its answer as a TextAnswer, not as a response")
def step_held(context: Context) -> None:
    items = list(context.built_run)
    assert len(items) == 3, items
    assert all(item.ok for item in items), items
    for item in items:
        assert isinstance(item.answer, TextAnswer), type(item.answer)


@then("every item's response, built when read, equals the one validated from its own JSON")
def step_item_responses(context: Context) -> None:
    for item in context.built_run:
        response = item.response
        assert response is not None
        again = _validated(response)
        assert again == response
        assert again.model_dump_json() == response.model_dump_json()
        for built_part, validated in zip(_parts(response), _parts(again), strict=True):
            assert built_part.model_fields_set == validated.model_fields_set, type(built_part)
        assert item.response == response, "built anew, and equal each time"


@then("every item's text, usage, cost and batch id are those of its response")
def step_item_fields(context: Context) -> None:
    for item in context.built_run:
        response = item.response
        assert response is not None
        assert response.cost is not None
        assert (item.text, item.usage, item.cost_usd) == (response.text, response.usage, response.cost.total_usd)
        line = item.as_json()
        assert line["batch_id"], line
        assert line["batch_id"] == response.ids.batch_id, line
        assert line["usage"] == response.usage.model_dump(), line


@given('a text answer of the blocks "{first}" (with null citations) and "{second}" (without)')
def step_two_blocks(context: Context, first: str, second: str) -> None:
    usage = Usage(input_tokens=3, output_tokens=2)
    context.block_fields = {
        "text": first + second,
        "content": [{"type": "text", "text": first, "citations": None}, {"type": "text", "text": second}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "model": "claude-sonnet-5-5",
        "provider": "anthropic",
        "ids": {"message_id": "msg_1", "batch_id": "msgbatch_1", "custom_id": "c-1", "request_id": None},
    }
    context.held = TextAnswer(context.block_fields, usage=usage, cost=None, mode=BatchProcessingMode.BATCH)


@when("its response is built")
def step_build(context: Context) -> None:
    context.built_answer = context.held.response()


@then("its response equals the one validated from the same fields, with the same fields set in each part")
def step_same_as_validated(context: Context) -> None:
    fields = context.block_fields
    validated = ActorResponse[Any].model_validate(
        {**fields, "usage": context.held.usage, "cost": None, "mode": BatchProcessingMode.BATCH}
    )
    answer: ActorResponse[Any] = context.built_answer
    assert answer == validated, (answer, validated)
    assert answer.model_dump_json(exclude_unset=True) == validated.model_dump_json(exclude_unset=True)
    for built_part, validated_part in zip(_parts(answer), _parts(validated), strict=True):
        assert built_part.model_fields_set == validated_part.model_fields_set, type(built_part)


@when("it maps the same prompts again, the run read back from the ledger")
def step_map_again(context: Context) -> None:
    context.first_run = context.built_run
    context.batches_before = len(context.built_actor.ledger.batches())
    context.built_run = context.runner.run(context.built_actor.map(["one", "two", "three"], progress="none"))


@then("the second run sent nothing and holds every answer as a TextAnswer")
def step_second_run(context: Context) -> None:
    assert context.built_run.run_id == context.first_run.run_id, (context.built_run, context.first_run)
    assert len(context.built_actor.ledger.batches()) == context.batches_before
    for item in context.built_run:
        assert item.ok, item
        assert isinstance(item.answer, TextAnswer), type(item.answer)


@then("every item's response equals the first run's, and the one validated from its own JSON")
def step_same_responses(context: Context) -> None:
    for again, first in zip(context.built_run, context.first_run, strict=True):
        response = again.response
        assert response is not None
        assert response == first.response, (response, first.response)
        assert first.response is not None, first
        assert response.model_dump_json() == first.response.model_dump_json()
        validated = _validated(response)
        for built_part, validated_part in zip(_parts(response), _parts(validated), strict=True):
            assert built_part.model_fields_set == validated_part.model_fields_set, type(built_part)


_STORED_BASE: dict[str, Any] = {
    "text": "",
    "content": [],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "model": "claude-sonnet-5-5",
    "provider": "anthropic",
    "ids": {"message_id": "msg_1", "batch_id": "msgbatch_1", "custom_id": "c-1", "request_id": None},
    "usage": {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
    "cost": None,
    "mode": "batch",
}
_STORED: dict[str, dict[str, Any]] = {
    "with a tool call": {
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "tide"}}],
    },
    "with a text block citing a document": {
        "text": "Low tide at six.",
        "content": [
            {
                "type": "text",
                "text": "Low tide at six.",
                "citations": [{"type": "char_location", "cited_text": "six", "document_index": 0}],
            }
        ],
    },
    "with a text block whose citations are an empty list": {
        "text": "Calm.",
        "content": [{"type": "text", "text": "Calm.", "citations": []}],
    },
    "with a field a later lowtide added": {
        "text": "Calm.",
        "content": [{"type": "text", "text": "Calm."}],
        "service_tier": "batch",
    },
}


@given("the stored answer {answer}")
def step_stored_answer(context: Context, answer: str) -> None:
    context.stored_answer = {**_STORED_BASE, **_STORED[answer]}


@when("it is read back from the ledger's JSON")
def step_read_back(context: Context) -> None:
    context.read_back = answer_from_json(json.loads(json.dumps(context.stored_answer)))


@then("it is an ActorResponse equal to the one validated from that JSON")
def step_read_back_validated(context: Context) -> None:
    assert isinstance(context.read_back, ActorResponse), type(context.read_back)
    assert context.read_back == response_from_json(context.stored_answer)


@given("an Anthropic results line whose one content block is {block}")
def step_anthropic_line(context: Context, block: str) -> None:
    message = {
        "id": "msg_01calm",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5-20260101",
        "content": [json.loads(block)],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 4, "service_tier": "batch"},
    }
    context.anthropic_line = {"custom_id": "k-1", "result": {"type": "succeeded", "message": message}}


@when("the Anthropic line is read into its outcome")
def step_anthropic_read(context: Context) -> None:
    from lowtide.providers.anthropic.mapping import line_outcome

    # As the results stream gives it: decoded from the line's bytes.
    line = json.loads(json.dumps(context.anthropic_line))
    context.anthropic_outcome, context.anthropic_stored = line_outcome(line, batch_id="msgbatch_1", request_id="req_1")


@then("the outcome is {held}, its response equal to the one validated from the JSON the ledger stores")
def step_anthropic_held(context: Context, held: str) -> None:
    outcome, stored = context.anthropic_outcome, context.anthropic_stored
    assert stored is not None, outcome
    expected = {"a TextAnswer": TextAnswer, "a validated response": ActorResponse}[held]
    assert isinstance(outcome, expected), type(outcome)
    response = outcome.response() if isinstance(outcome, TextAnswer) else outcome
    assert isinstance(response, ActorResponse)
    assert response == response_from_json(json.loads(json.dumps(stored))), (response, stored)
    assert response.ids.custom_id == "k-1", response.ids
    assert response.ids.message_id == "msg_01calm", response.ids


@then('the ledger stores the block as it came, and the text "{text}"')
def step_anthropic_stored(context: Context, text: str) -> None:
    stored = context.anthropic_stored
    assert stored is not None
    assert stored["content"] == context.anthropic_line["result"]["message"]["content"], stored["content"]
    assert stored["text"] == text, stored["text"]
