"""Steps of telemetry_paths.feature: calls that fail, are refused, are retried or carry a whole conversation, read from
the in-memory exporter telemetry.feature's Background configures (its steps make the actor and read the metrics)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Protocol

import yaml
from _otel_globals import reset_otel_globals
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ActorError
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator


class Context(StepContext, Protocol):
    spans: InMemorySpanExporter
    telemetry_actor: Actor
    telemetry_emu: Emulator
    api_clock: ManualClock
    telemetry_ledger: str | None
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


def _run_span(context: Context) -> ReadableSpan:
    [run] = [span for span in context.spans.get_finished_spans() if span.name == "lowtide.run"]
    return run


@given('the telemetry API answers "{route}" only after {seconds:g} seconds')
def step_slow(context: Context, route: str, seconds: float) -> None:
    context.telemetry_emu.faults.slow(route, seconds=seconds)


@when('the telemetry actor maps "{prompts}" live, and the run is cancelled once its first call reached the API')
def step_map_cancelled(context: Context, prompts: str) -> None:
    inputs = [p.strip() for p in prompts.split(",")]
    emulator = context.telemetry_emu

    async def cancelled() -> None:
        task = asyncio.ensure_future(context.telemetry_actor.map(inputs, mode="live", progress="none"))
        for _ in range(3000):  # waits on the call reaching the API (which then holds it), not on a time
            if emulator.calls["messages.create"] or task.done():
                break
            await asyncio.sleep(0.01)
        assert emulator.calls["messages.create"], "the run's first call never reached the API"
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return
        raise AssertionError("the run ended before it was cancelled")

    context.runner.run(cancelled())


@then('the traced run\'s span ended with the error "{name}"')
def step_run_error(context: Context, name: str) -> None:
    run = _run_span(context)
    assert (run.attributes or {}).get("error.type") == name, run.attributes
    assert run.status.status_code is StatusCode.ERROR, run.status


@then("the traced run's span says it sent {batches:d} batch, and its {count:d} items succeeded")
def step_run_batches(context: Context, batches: int, count: int) -> None:
    attributes = _run_span(context).attributes or {}
    assert attributes.get("lowtide.run.batches") == batches, attributes
    assert attributes.get("lowtide.run.items.succeeded") == count, attributes


@given("OpenTelemetry traces to an in-memory exporter, with no meter provider")
def step_traces_only(context: Context) -> None:
    reset_otel_globals()
    context.spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(context.spans))
    trace.set_tracer_provider(provider)
    os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    context.cleanups.append(reset_otel_globals)
    context.telemetry_ledger = None


@then('the chat span has the events "{names}"')
def step_events(context: Context, names: str) -> None:
    seen = [event.name for event in _last_chat(context).events]
    for name in (n.strip() for n in names.split(",")):
        assert name in seen, seen


def _traced_actor(context: Context, emulator: Emulator, settings: dict[str, Any]) -> None:
    from lowtide.ledger.memory.ledger import MemoryLedger

    context.telemetry_emu = emulator
    actor = context.telemetry_actor = Actor(
        {"name": "traced", "max_tokens": 64, **settings}, client=emulator.client(), ledger=MemoryLedger()
    )
    context.cleanups.append(lambda: actor.aclose())


@given('a telemetry actor of the model "{model}", which the API serves and no price list knows')
def step_unpriced_actor(context: Context, model: str) -> None:
    _traced_actor(context, Emulator(extra_models=(model,)), {"model": model, "batch_processing": "live"})


@given('a telemetry actor in "batch" mode that reconciles a create in doubt at once')
def step_reconciling_actor(context: Context) -> None:
    batch = {"poll_interval": 0.01, "coalesce_window": 0.01, "reconcile_grace": 0.05}
    settings = {"model": "claude-haiku-4-5", "batch_processing": "batch", "batch": batch}
    _traced_actor(context, Emulator(), settings)


@given("the telemetry API will create the next batch but drop the connection before answering")
def step_drop_create(context: Context) -> None:
    context.telemetry_emu.faults.drop_after_commit("batches.create")


@then('the traced call\'s span has no attribute "{attribute}"')
def step_no_attribute(context: Context, attribute: str) -> None:
    attributes = _last_chat(context).attributes or {}
    assert attribute not in attributes, attributes


@given('tracing is off while the telemetry actor parks "{prompt}" under the key "{key}"')
def step_park_untraced(context: Context, prompt: str, key: str) -> None:
    provider = trace._TRACER_PROVIDER  # pyright: ignore[reportPrivateUsage]
    trace._TRACER_PROVIDER = None  # pyright: ignore[reportPrivateUsage]
    try:
        context.runner.run(context.telemetry_actor.submit(prompt, key=key))
    finally:
        trace._TRACER_PROVIDER = provider  # pyright: ignore[reportPrivateUsage]


@when('a fresh process collects the ledger until "{key}" is answered')
def step_collect_until(context: Context, key: str) -> None:
    from lowtide.calls.parking import collect
    from lowtide.ledger.records import RequestState
    from lowtide.ledger.store import open_ledger

    context.runner.run(context.telemetry_actor.aclose())
    context.api_clock.advance(61)  # the batch has ended at the API, as the next process finds it
    assert context.telemetry_ledger is not None
    ledger = open_ledger(context.telemetry_ledger)

    async def until_answered() -> None:
        for _ in range(200):  # the batch has ended: collect until the answer is read
            await collect(ledger, client=context.telemetry_emu.client())
            record = ledger.request(key)
            if record is not None and record.state is RequestState.SUCCEEDED:
                return
            await asyncio.sleep(0.05)

    runner = asyncio.Runner()  # the other process's event loop, closed (tasks and all) as that process ends
    try:
        runner.run(until_answered())
    finally:
        runner.close()
    context.traced_error = None
    record = ledger.request(key)
    context.traced_error = None if record is not None and record.state is RequestState.SUCCEEDED else RuntimeError(key)


@then('the ledger holds the key "{key}" as succeeded, and no "{name}" span was made')
def step_untraced_answer(context: Context, key: str, name: str) -> None:
    assert context.traced_error is None, f"{key} was not answered"
    spans = [span.name for span in context.spans.get_finished_spans()]
    assert name not in spans, spans


@when("the traced call is made with nothing to ask and fails")
def step_nothing_to_ask(context: Context) -> None:
    _attempt(context, None, messages=[])


@given('a telemetry actor in "live" mode on a virtual clock')
def step_virtual_actor(context: Context) -> None:
    from lowtide.core.clock import VirtualClock
    from lowtide.ledger.memory.ledger import MemoryLedger

    emulator = context.telemetry_emu = Emulator()
    actor = context.telemetry_actor = Actor(
        {"name": "traced", "model": "claude-haiku-4-5", "max_tokens": 64},
        client=emulator.client(),
        ledger=MemoryLedger(),
        clock=VirtualClock(),
    )
    context.cleanups.append(lambda: actor.aclose())


@given('the telemetry API will answer the next "{route}" call with status {status:d} and no retry-after')
def step_fault_no_wait(context: Context, route: str, status: int) -> None:
    context.telemetry_emu.faults.fail_next(route, status)


@then('the chat span\'s "{name}" event names no retry-after')
def step_event_no_wait(context: Context, name: str) -> None:
    [event] = [event for event in _last_chat(context).events if event.name == name]
    attributes = dict(event.attributes or {})
    assert "lowtide.retry_after_s" not in attributes, attributes
    assert attributes.get("lowtide.attempt") == 1, attributes


@then('the "lowtide.batch" spans ended "{states}"')
def step_batch_states(context: Context, states: str) -> None:
    spans = [span for span in context.spans.get_finished_spans() if span.name == "lowtide.batch"]
    ended = [(span.attributes or {}).get("lowtide.batch.state") for span in spans]
    assert ended == [state.strip() for state in states.split(",")], ended
