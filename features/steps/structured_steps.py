"""Steps for structured output: the pydantic models asked for, and what came back.

No `from __future__ import annotations` here: behave runs step files with `exec`, where pydantic could not resolve
string annotations of the models below.
"""

import json
from enum import StrEnum
from typing import Any

from _support import world
from anthropic import transform_schema
from pydantic import BaseModel, Field
from step_context import Context, then, when

from lowtide import ActorResponse, StructuredOutputError


class Priority(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Step(BaseModel):
    title: str
    minutes: int


class Plan(BaseModel):
    goal: str
    priority: Priority
    steps: list[Step]
    owner: str | None = None
    tags: list[str] = Field(default_factory=list[str])


class Permit(BaseModel):
    """Its pattern cannot travel in a strict JSON schema (it ends up in a description), so answers may break it."""

    code: str = Field(pattern=r"^[A-Z]{3}-\d{4}$")
    holder: str


MODELS: dict[str, type[BaseModel]] = {"Plan": Plan, "Permit": Permit}


@when('the actor is asked "{prompt:Q}" for a {model:w}')
def step_ask_for_model(context: Context, prompt: str, model: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, response_model=MODELS[model]))


_NOT_MODELS: dict[str, Any] = {
    "an instance of Plan": Plan.model_construct(),
    "the class int": int,
    'the text "Plan"': "Plan",
}


@when('the actor is asked "{prompt:Q}" with {given} as its response model')
def step_ask_with_not_a_model(context: Context, prompt: str, given: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, response_model=_NOT_MODELS[given]))


@when('the actor is asked "{prompt:Q}" for a {model:w}, through the forced tool "{tool}"')
def step_ask_for_model_tool(context: Context, prompt: str, model: str, tool: str) -> None:
    w = world(context)
    schema = transform_schema(MODELS[model])
    w.response = w.attempt_async(
        lambda: w.current_actor().run(
            prompt,
            response_model=MODELS[model],
            tools=[{"name": tool, "description": f"Submit a {model}", "input_schema": schema}],
            tool_choice={"type": "tool", "name": tool},
        )
    )


@when("the actor runs these requests as one batch:")
def step_run_many_models(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()
    w.custom_ids = [row["custom_id"] for row in context.table]
    requests = [
        actor.request(
            row["prompt"],
            custom_id=row["custom_id"],
            response_model=MODELS[row["response model"]] if row["response model"] else None,
        )
        for row in context.table
    ]
    w.outcomes = w.attempt_async(lambda: actor.run_many(requests)) or []


def _check_plan(parsed: Any) -> None:
    assert isinstance(parsed, Plan), parsed
    assert isinstance(parsed.priority, Priority), parsed.priority
    assert parsed.steps, parsed.steps
    assert all(isinstance(step, Step) for step in parsed.steps), parsed.steps
    assert all(isinstance(tag, str) for tag in parsed.tags), parsed.tags
    assert parsed.owner is None or isinstance(parsed.owner, str), parsed.owner


@then("the parsed answer is a Plan with a priority, a list of steps, each a Step, and a list of tags")
def step_parsed_plan(context: Context) -> None:
    _check_plan(world(context).answer().parsed)


@then("the parsed answer is the answer text, validated")
def step_parsed_is_text(context: Context) -> None:
    response = world(context).answer()
    assert response.parsed == Plan.model_validate_json(response.text), response.text
    assert response.parsed is not None, response
    assert response.parsed.model_dump(mode="json") == json.loads(response.text), response.text


@then('the batch request asked for the output format of a {model:w}, with effort "{effort}"')
def step_batch_output_format(context: Context, model: str, effort: str) -> None:
    w = world(context)
    batch_id = w.answer().ids.batch_id
    assert batch_id is not None
    [(_, params)] = w.emu.batch(batch_id).requests
    expected = {"effort": effort, "format": {"type": "json_schema", "schema": transform_schema(MODELS[model])}}
    assert params["output_config"] == expected, params["output_config"]


def _structured_error(context: Context) -> StructuredOutputError:
    error = world(context).failure()
    assert isinstance(error, StructuredOutputError), error
    return error


@then('the structured output error keeps the raw text, the model name "{model}" and the {mode:w} response it came in')
def step_structured_error(context: Context, model: str, mode: str) -> None:
    error = _structured_error(context)
    assert error.model_name == model, error.model_name
    response = error.response
    assert isinstance(response, ActorResponse), response
    assert error.text == response.text, (error.text, response.text)
    assert error.text, (error.text, response.text)
    assert response.parsed is None, response.parsed
    assert response.mode.value == mode, response.mode
    assert response.usage.output_tokens > 0, response
    assert response.cost is not None, response
    assert (response.ids.message_id or "").startswith("msg_"), response.ids
    if mode == "batch":
        assert (response.ids.batch_id or "").startswith("msgbatch_"), response.ids


@then("the raw text kept is {chars:d} characters of JSON cut short")
def step_raw_text_cut(context: Context, chars: int) -> None:
    error = _structured_error(context)
    assert len(error.text) == chars, error.text
    assert error.text.startswith("{"), error.text
    assert error.response is not None, error.response
    assert error.response.stop_reason == "max_tokens", error.response


@then('the outcome of "{custom_id}" is parsed as a {model:w}')
def step_outcome_parsed(context: Context, custom_id: str, model: str) -> None:
    outcome = world(context).outcome(custom_id)
    assert isinstance(outcome, ActorResponse), outcome
    assert isinstance(outcome.parsed, MODELS[model]), outcome.parsed
    _check_plan(outcome.parsed)


@then('the outcome of "{custom_id}" keeps the raw text and a response from the batch')
def step_outcome_structured_error(context: Context, custom_id: str) -> None:
    outcome = world(context).outcome(custom_id)
    assert isinstance(outcome, StructuredOutputError), outcome
    assert outcome.response is not None, outcome
    assert outcome.text == outcome.response.text, outcome
    assert outcome.response.ids.custom_id == world(context).custom_id(custom_id), outcome.response.ids
    assert (outcome.response.ids.batch_id or "").startswith("msgbatch_"), outcome.response.ids
