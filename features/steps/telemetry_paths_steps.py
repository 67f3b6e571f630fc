"""Steps of telemetry_paths.feature: calls that fail, are refused, are retried or carry a whole conversation, read from
the in-memory exporter telemetry.feature's Background configures (its steps make the actor and read the metrics)."""

from __future__ import annotations

import json
from typing import Any, Protocol

import yaml
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from step_context import Context as StepContext
from step_context import then, when

from lowtide import Actor, ActorError


class Context(StepContext, Protocol):
    spans: InMemorySpanExporter
    telemetry_actor: Actor
    traced_error: BaseException | None


def _chats(context: Context) -> list[ReadableSpan]:
    return [span for span in context.spans.get_finished_spans() if span.name.startswith("chat ")]


def _last_chat(context: Context) -> ReadableSpan:
    chats = _chats(context)
    assert chats, [span.name for span in context.spans.get_finished_spans()]
    return chats[-1]


def _attempt(context: Context, prompt: str | None, **options: Any) -> None:
    context.traced_error = None
    try:
        context.runner.run(context.telemetry_actor.run(prompt, **options))
    except ActorError as exc:
        context.traced_error = exc


@when('the traced call "{prompt}" is made and fails')
def step_fails(context: Context, prompt: str) -> None:
    _attempt(context, prompt)


@when('the traced call "{prompt}" is made with a budget of ${budget:g} and fails')
def step_over_budget(context: Context, prompt: str, budget: float) -> None:
    _attempt(context, prompt, max_cost_usd=budget)


@when('the traced call "{prompt}" is made in the mode "{mode}" and fails')
def step_bad_mode(context: Context, prompt: str, mode: str) -> None:
    _attempt(context, prompt, mode=mode)


@when("the traced call is made with:")
def step_made_with(context: Context) -> None:
    _attempt(context, None, **yaml.safe_load(context.text or ""))
    assert context.traced_error is None, context.traced_error


@then("the traced call failed with a {name:w}")
@then("the traced call failed with an {name:w}")
def step_failed_with(context: Context, name: str) -> None:
    assert type(context.traced_error).__name__ == name, repr(context.traced_error)


@then('the traced call\'s span ended with the error "{name}"')
def step_span_error(context: Context, name: str) -> None:
    span = _last_chat(context)
    assert (span.attributes or {}).get("error.type") == name, span.attributes
    assert span.status.status_code is StatusCode.ERROR, span.status


@then('the traced call\'s span has "{attribute}" "{value}"')
def step_span_value(context: Context, attribute: str, value: str) -> None:
    found = (_last_chat(context).attributes or {}).get(attribute)
    assert found == value, found


@then('the traced call\'s span has "{attribute}" {expected}')
def step_span_json(context: Context, attribute: str, expected: str) -> None:
    found: Any = (_last_chat(context).attributes or {}).get(attribute)
    wanted = json.loads(expected)
    read = json.loads(found) if isinstance(found, str) else list(found or ())
    assert read == wanted, read


@then('every traced chat span holds its prompt in "{attribute}"')
def step_each_prompt(context: Context, attribute: str) -> None:
    seen = set()
    for span in _chats(context):
        [turn] = json.loads(str((span.attributes or {})[attribute]))
        [part] = turn["parts"]
        seen.add(part["content"])
    assert seen == {"one", "two"}, seen


@then('the traced batch\'s span ended with the error "{name}"')
def step_batch_error(context: Context, name: str) -> None:
    [batch] = [span for span in context.spans.get_finished_spans() if span.name == "lowtide.batch"]
    attributes = batch.attributes or {}
    assert attributes.get("error.type") == name, attributes
    assert batch.status.status_code is StatusCode.ERROR, batch.status
