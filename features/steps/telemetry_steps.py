"""Steps of telemetry.feature: lowtide's spans and metrics read from the OpenTelemetry SDK's in-memory exporter and
metric reader, configured as the global providers for the scenario and taken away after it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from _otel_globals import reset_otel_globals
from _support import plugins_importable
from opentelemetry import metrics, trace
from opentelemetry.context import Context as OtelContext
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor, ActorError, ActorRequest, ActorResponse, ProviderRegistry
from lowtide._version import __version__
from lowtide.calls.parking import collect
from lowtide.core.clock import ManualClock, SystemClock
from lowtide.emulator import Emulator
from lowtide.ledger.memory.ledger import MemoryLedger
from lowtide.ledger.store import open_ledger
from lowtide.live.caller import CallNext, Middleware
from lowtide.testing import FakeBatchAPI, FakeBatchProvider


class _Made(SpanProcessor):
    """When each span object was made (wall clock, ns), by span id: a span may say it began earlier."""

    def __init__(self) -> None:
        self.at: dict[int, int] = {}

    def on_start(self, span: Span, parent_context: OtelContext | None = None) -> None:
        self.at[span.get_span_context().span_id] = time.time_ns()


class Context(StepContext, Protocol):
    spans: InMemorySpanExporter
    made: _Made
    many_error: BaseException | None
    api_clock: ManualClock
    metric_reader: InMemoryMetricReader
    telemetry_emu: Emulator
    telemetry_actor: Actor
    telemetry_ledger: str | None
    telemetry_gate: asyncio.Event


@given("OpenTelemetry is configured with in-memory exporters")
def step_configured(context: Context) -> None:
    reset_otel_globals()
    context.spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(context.spans))
    context.made = _Made()
    provider.add_span_processor(context.made)
    trace.set_tracer_provider(provider)
    context.metric_reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[context.metric_reader]))
    saved = os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)

    def restore() -> None:
        reset_otel_globals()
        os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
        if saved is not None:
            os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = saved

    context.cleanups.append(restore)
    context.telemetry_ledger = None


def _actor(
    context: Context, mode: str, ledger: object, emulator: Emulator | None = None, middleware: Sequence[Middleware] = ()
) -> None:
    context.telemetry_emu = emulator or Emulator()
    context.telemetry_actor = Actor(
        {
            "name": "traced",
            "model": "claude-haiku-4-5",
            "batch_processing": mode,
            "max_tokens": 64,
            "batch": {"poll_interval": 0.01, "coalesce_window": 0.01},
        },
        client=context.telemetry_emu.client(),
        ledger=ledger,  # pyright: ignore[reportArgumentType]
        middleware=middleware,
    )
    actor = context.telemetry_actor
    context.cleanups.append(lambda: actor.aclose())


@given('a telemetry actor in "{mode}" mode')
def step_actor(context: Context, mode: str) -> None:
    _actor(context, mode, MemoryLedger())


@given('a telemetry actor in "{mode}" mode whose middleware holds each call until it is let go')
def step_actor_held(context: Context, mode: str) -> None:
    gate = context.telemetry_gate = asyncio.Event()

    async def hold(request: ActorRequest, call_next: CallNext) -> ActorResponse[object]:
        await gate.wait()
        return await call_next(request)

    _actor(context, mode, MemoryLedger(), middleware=[hold])


@given('a telemetry actor in "{mode}" mode with the scenario\'s ledger')
def step_actor_file(context: Context, mode: str) -> None:
    # A SQLite file, or (`@stores` under `-D store=postgres`) the scenario's PostgreSQL database.
    context.telemetry_ledger = os.environ["LOWTIDE_LEDGER"]
    # The API's batches take a minute of the emulator's own clock, which stands still until the actor's process has
    # stopped: that process never collects the answer itself, however slowly the scenario runs.
    context.api_clock = ManualClock()
    _actor(context, mode, context.telemetry_ledger, Emulator(clock=context.api_clock, processing_seconds=60))


@given('a telemetry actor of a third-party batch provider registered as "{name}"')
def step_third_party(context: Context, name: str) -> None:
    # lowtide.testing's fake provider, as a plugin ships one: it sets no `gen_ai_provider_name`.
    registry = ProviderRegistry()
    FakeBatchProvider.register(registry, FakeBatchAPI(SystemClock(), processing_seconds=0.01), name=name)
    context.telemetry_actor = Actor(
        {
            "name": "traced",
            "provider": name,
            "model": "fake-1",
            "batch_processing": "batch",
            "max_tokens": 64,
            "batch": {"poll_interval": 0.01, "coalesce_window": 0.01},
        },
        registry=registry,
        ledger=MemoryLedger(),
    )
    actor = context.telemetry_actor
    context.cleanups.append(lambda: actor.aclose())


@given('a telemetry actor of the third-party provider "{name}", which has no batch backend')
def step_no_backend(context: Context, name: str) -> None:
    plugins_importable()
    import lowtide_echo_plugin

    registry = ProviderRegistry()
    lowtide_echo_plugin.register_nightly(registry)
    context.telemetry_actor = Actor(
        {"name": "traced", "provider": name, "model": "echo-1", "batch_processing": "batch", "max_tokens": 64},
        registry=registry,
        ledger=MemoryLedger(),
    )
    actor = context.telemetry_actor
    context.cleanups.append(lambda: actor.aclose())


@when('the telemetry actor answers "{prompt}" with temperature {temperature:g}')
def step_answer(context: Context, prompt: str, temperature: float) -> None:
    context.runner.run(context.telemetry_actor.run(prompt, temperature=temperature))


@when('the telemetry actor maps "{prompts}" live')
def step_map(context: Context, prompts: str) -> None:
    inputs = [p.strip() for p in prompts.split(",")]
    context.runner.run(context.telemetry_actor.map(inputs, mode="live", progress="none"))


@when('the telemetry actor runs many "{prompts}" in batch mode')
def step_run_many(context: Context, prompts: str) -> None:
    inputs: list[ActorRequest | str] = [p.strip() for p in prompts.split(",")]
    outcomes = context.runner.run(context.telemetry_actor.run_many(inputs, mode="batch"))
    assert all(isinstance(outcome, ActorResponse) for outcome in outcomes), outcomes


@when('the telemetry actor runs many "{prompts}" in batch mode, which fails')
def step_run_many_fails(context: Context, prompts: str) -> None:
    inputs: list[ActorRequest | str] = [p.strip() for p in prompts.split(",")]
    try:
        context.runner.run(context.telemetry_actor.run_many(inputs, mode="batch"))
    except ActorError as exc:
        context.many_error = exc
    else:
        raise AssertionError("run_many did not fail")


@when('the telemetry actor maps "{prompts}" in batch mode')
def step_map_batch(context: Context, prompts: str) -> None:
    inputs = [p.strip() for p in prompts.split(",")]
    result = context.runner.run(context.telemetry_actor.map(inputs, progress="none"))
    assert result.counts().get("succeeded") == len(inputs), result.counts()


@given('the telemetry API will answer the next "{route}" call with status {status:d} and retry-after {seconds:g}')
def step_fault(context: Context, route: str, status: int, seconds: float) -> None:
    context.telemetry_emu.faults.fail_next(route, status, retry_after=seconds)


@when('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is "{value}"')
def step_content(context: Context, value: str) -> None:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = value


@when('the telemetry actor parks "{prompt}" under the key "{key}"')
def step_park(context: Context, prompt: str, key: str) -> None:
    context.runner.run(context.telemetry_actor.submit(prompt, key=key))


@when("the actor's process stops, and a fresh process collects the ledger")
def step_collect(context: Context) -> None:
    context.runner.run(context.telemetry_actor.aclose())
    context.api_clock.advance(61)  # the batch has ended at the API, as the next process finds it
    assert context.telemetry_ledger is not None
    ledger = open_ledger(context.telemetry_ledger)

    async def until_answered() -> None:
        for _ in range(200):  # the emulator ends a batch within moments: collect until it has
            await collect(ledger, client=context.telemetry_emu.client())
            if _named(context, "lowtide.answer"):
                return
            await asyncio.sleep(0.05)

    runner = asyncio.Runner()  # the other process's event loop, closed (tasks and all) as that process ends
    try:
        runner.run(until_answered())
    finally:
        runner.close()


# -- spans -------------------------------------------------------------------------------------------------------------


def _finished(context: Context) -> Sequence[ReadableSpan]:
    return context.spans.get_finished_spans()


def _named(context: Context, name: str) -> list[ReadableSpan]:
    return [span for span in _finished(context) if span.name == name]


def _chat(context: Context) -> ReadableSpan:
    chats = [span for span in _finished(context) if span.name.startswith("chat ")]
    assert chats, [span.name for span in _finished(context)]
    return chats[-1]


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _one(context: Context, name: str) -> ReadableSpan:
    found = _named(context, name)
    assert len(found) == 1, (name, [span.name for span in _finished(context)])
    return found[0]


@then('there is one "{name}" span of kind CLIENT with these attributes')
def step_span_attributes(context: Context, name: str) -> None:
    span = _one(context, name)
    assert span.kind is trace.SpanKind.CLIENT, span.kind
    attributes = dict(span.attributes or {})
    for row in context.table:
        assert str(attributes.get(row["attribute"])) == row["value"], (row["attribute"], attributes)


@then('the chat span has the attributes "{names}"')
def step_has_attributes(context: Context, names: str) -> None:
    attributes = dict(_chat(context).attributes or {})
    for name in (n.strip() for n in names.split(",")):
        assert name in attributes, (name, attributes)


@then('the chat span\'s "{name}" is above 0')
def step_above_zero(context: Context, name: str) -> None:
    value = (_chat(context).attributes or {}).get(name)
    assert isinstance(value, float), value
    assert value > 0, value


@then('the chat span\'s "{name}" holds "{text}"')
def step_holds(context: Context, name: str, text: str) -> None:
    value = (_chat(context).attributes or {}).get(name)
    assert isinstance(value, str), value
    assert text in value, value
    json.loads(value)


@then('the chat span has the event "{name}"')
def step_event(context: Context, name: str) -> None:
    assert name in [event.name for event in _chat(context).events], _chat(context).events


@then('the span "{name}" is a child of the {which} span')
def step_child(context: Context, name: str, which: str) -> None:
    parent = _chat(context) if which == "chat" else _one(context, f"lowtide.{which}")
    assert any(_parent_id(span) == _span_id(parent) for span in _named(context, name)), _named(context, name)


@then('the instrumentation scope of the chat span is "{name}" with lowtide\'s version')
def step_scope(context: Context, name: str) -> None:
    scope = _chat(context).instrumentation_scope
    assert scope is not None
    assert (scope.name, scope.version) == (name, __version__), scope


@then('there is one "{name}" span with the events "{events}"')
def step_batch_events(context: Context, name: str, events: str) -> None:
    seen = [event.name for event in _one(context, name).events]
    for event in (e.strip() for e in events.split(",")):
        assert event in seen, (event, seen)


@then('the "{name}" spans name the provider "{gen_ai}" as the conventions do, and "{ours}" as lowtide does')
def step_provider_names(context: Context, name: str, gen_ai: str, ours: str) -> None:
    spans = _named(context, name)
    assert spans, [span.name for span in _finished(context)]
    for span in spans:
        attributes = span.attributes or {}
        named = (attributes.get("gen_ai.provider.name"), attributes.get("lowtide.provider"))
        assert named == (gen_ai, ours), (span.name, attributes)


@then("the chat span and the batch span link to each other")
def step_linked(context: Context) -> None:
    chat, batch = _chat(context), _one(context, "lowtide.batch")
    assert any(link.context.span_id == _span_id(batch) for link in chat.links), chat.links
    assert any(link.context.span_id == _span_id(chat) for link in batch.links), batch.links
    assert (chat.attributes or {}).get("lowtide.batch.id") == (batch.attributes or {}).get("lowtide.batch.id")


@then('there is one "{name}" span')
def step_one_span(context: Context, name: str) -> None:
    _one(context, name)


@then('{count:d} "{name}" spans are children of the run span')
def step_run_children(context: Context, count: int, name: str) -> None:
    run = _one(context, "lowtide.run")
    children = [span for span in _named(context, name) if _parent_id(span) == _span_id(run)]
    assert len(children) == count, [(s.name, s.parent) for s in _finished(context)]


@then('{count:d} "{name}" spans and the one "lowtide.batch" span link to each other')
def step_many_linked(context: Context, count: int, name: str) -> None:
    calls, batch = _named(context, name), _one(context, "lowtide.batch")
    assert len(calls) == count, [span.name for span in _finished(context)]
    back = {link.context.span_id for link in batch.links}
    batch_id = (batch.attributes or {}).get("lowtide.batch.id")
    for call in calls:
        assert any(link.context.span_id == _span_id(batch) for link in call.links), call.links
        assert _span_id(call) in back, (call.name, back)
        assert (call.attributes or {}).get("lowtide.batch.id") == batch_id, call.attributes


@then('each "{name}" span has its own key, "lowtide.call" "{entry}", its tokens and its cost at batch prices')
def step_many_attributes(context: Context, name: str, entry: str) -> None:
    calls = _named(context, name)
    keys = {str((call.attributes or {}).get("lowtide.key")) for call in calls}
    assert len(keys) == len(calls), keys
    assert "None" not in keys, keys
    for call in calls:
        attributes = call.attributes or {}
        assert call.kind is trace.SpanKind.CLIENT, call.kind
        assert attributes.get("lowtide.call") == entry, attributes
        assert attributes.get("gen_ai.provider.name") == "anthropic", attributes
        assert attributes.get("gen_ai.request.max_tokens") == 64, attributes
        assert attributes.get("lowtide.mode") == "batch", attributes
        assert attributes.get("lowtide.cost.pricing") == "batch", attributes
        assert isinstance(attributes.get("gen_ai.usage.output_tokens"), int), attributes
        assert str(attributes.get("gen_ai.response.model")).startswith("claude-haiku-4-5"), attributes


@then('each "{name}" span began when its call was claimed, before its batch, and was made once its answer arrived')
def step_many_made_late(context: Context, name: str) -> None:
    batch = _one(context, "lowtide.batch")
    polls = [event.timestamp for event in batch.events if event.name == "poll"]
    assert polls, batch.events
    assert batch.start_time is not None
    for call in _named(context, name):
        assert call.start_time is not None
        assert call.start_time <= batch.start_time, (call.start_time, batch.start_time)
        assert context.made.at[_span_id(call)] >= max(polls), "the span was made before its batch ended"


@then(
    '{count:d} "{name}" spans say "lowtide.call" "{entry}" and "gen_ai.provider.name" "{provider}",'
    " each with its tokens"
)
def step_many_plain(context: Context, count: int, name: str, entry: str, provider: str) -> None:
    calls = _named(context, name)
    assert len(calls) == count, [span.name for span in _finished(context)]
    for call in calls:
        attributes = call.attributes or {}
        assert (attributes.get("lowtide.call"), attributes.get("gen_ai.provider.name")) == (entry, provider), attributes
        assert isinstance(attributes.get("gen_ai.usage.output_tokens"), int), attributes
        assert call.kind is trace.SpanKind.CLIENT, call.kind


@then('{count:d} "{name}" spans end with the error type "{kind}"')
def step_many_errors(context: Context, count: int, name: str, kind: str) -> None:
    calls = _named(context, name)
    assert len(calls) == count, [span.name for span in _finished(context)]
    for call in calls:
        assert (call.attributes or {}).get("error.type") == kind, call.attributes
        assert call.status.status_code is trace.StatusCode.ERROR, call.status


@then('the "{name}" span is a child of the run span')
def step_span_child_of_run(context: Context, name: str) -> None:
    assert _parent_id(_one(context, name)) == _span_id(_one(context, "lowtide.run"))


@then('there is one "lowtide.answer" span for the key "{key}"')
def step_answer_span(context: Context, key: str) -> None:
    answers = [s for s in _named(context, "lowtide.answer") if (s.attributes or {}).get("lowtide.key") == key]
    assert len(answers) == 1, [(s.name, s.attributes) for s in _finished(context)]


@then("the \"lowtide.answer\" span's parent is the parked call's span, in the same trace")
def step_answer_parent(context: Context) -> None:
    answer = _one(context, "lowtide.answer")
    parked = [s for s in _finished(context) if (s.attributes or {}).get("lowtide.call") == "submit"]
    assert len(parked) == 1, [s.name for s in _finished(context)]
    assert _parent_id(answer) == _span_id(parked[0])
    assert answer.context is not None
    assert parked[0].context is not None
    assert answer.context.trace_id == parked[0].context.trace_id


@then('the ledger holds a trace context for the key "{key}"')
def step_ledger_trace(context: Context, key: str) -> None:
    assert context.telemetry_ledger is not None
    stored = open_ledger(context.telemetry_ledger).traces_of([key])
    assert json.loads(stored[key])["traceparent"].startswith("00-"), stored


def _attribute_texts(context: Context) -> list[str]:
    texts: list[str] = []
    for span in _finished(context):
        for value in (span.attributes or {}).values():
            texts.append(str(value))
        for event in span.events:
            texts.extend(str(value) for value in (event.attributes or {}).values())
    return texts


@then("no attribute of any span holds the API key")
def step_no_key(context: Context) -> None:
    key = str(context.telemetry_emu.client().api_key)
    assert len(key) > 8
    assert not any(key in text for text in _attribute_texts(context))


@then('no attribute of any span holds "{text}"')
def step_no_text(context: Context, text: str) -> None:
    assert not any(text in value for value in _attribute_texts(context))


# -- metrics -----------------------------------------------------------------------------------------------------------


def _points(context: Context, name: str) -> tuple[str, Sequence[Mapping[str, object]]]:
    data: MetricsData | None = context.metric_reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name and scope.scope.name == "lowtide":
                    points = [dict(point.attributes or {}) for point in metric.data.data_points]
                    return metric.unit or "", points
    raise AssertionError(f"no metric {name!r}")


@then('the metric "{name}" has points for the token types "{types}" in unit "{unit}"')
def step_token_metric(context: Context, name: str, types: str, unit: str) -> None:
    found, points = _points(context, name)
    assert found == unit, found
    seen = {point.get("gen_ai.token.type") for point in points}
    assert seen == {t.strip() for t in types.split(",")}, points
    assert all(point.get("gen_ai.provider.name") == "anthropic" for point in points), points


@then('the metric "{name}" names the provider "{gen_ai}", and "{ours}" as lowtide does')
def step_metric_provider(context: Context, name: str, gen_ai: str, ours: str) -> None:
    _, points = _points(context, name)
    assert points, name
    for point in points:
        assert (point.get("gen_ai.provider.name"), point.get("lowtide.provider")) == (gen_ai, ours), point


@then('the metric "{name}" has a point in unit "{unit}"')
def step_metric(context: Context, name: str, unit: str) -> None:
    found, points = _points(context, name)
    assert found == unit, found
    assert points, name


# -- off ---------------------------------------------------------------------------------------------------------------

# One process for every kind of call (a live call, a batch call, run_many and a batch bulk run): two processes, each
# importing lowtide, the SDK and the emulator under coverage, proved nothing one does not.
_OFF = """
import asyncio, sys
{block}
from lowtide import Actor
from lowtide.emulator import Emulator
from lowtide.ledger.memory.ledger import MemoryLedger

async def main():
    emu = Emulator()
    for mode in ("live", "batch"):
        actor = Actor({{"name": "a", "model": "claude-haiku-4-5", "batch_processing": mode, "max_tokens": 64,
                       "batch": {{"poll_interval": 0.01, "coalesce_window": 0.01}}}},
                      client=emu.client(), ledger=MemoryLedger())
        print((await actor.run("hello")).text[:7])
        await actor.aclose()
    actor = Actor({{"name": "a", "model": "claude-haiku-4-5", "batch_processing": "batch", "max_tokens": 64,
                   "batch": {{"poll_interval": 0.01, "coalesce_window": 0.01}}}},
                  client=emu.client(), ledger=MemoryLedger())
    print(len(await actor.run_many(["one", "two"])))
    print((await actor.map(["three", "four"], progress="none")).counts()["succeeded"])
    await actor.aclose()

asyncio.run(main())
{check}
"""

_COUNTED = """
from opentelemetry import trace
asked = []
_real = trace.ProxyTracerProvider.get_tracer
def counted(self, *args, **kwargs):
    asked.append(args)
    return _real(self, *args, **kwargs)
trace.ProxyTracerProvider.get_tracer = counted
"""


def _python(context: Context, script: str) -> str:
    # A hang bound, not a speed check: `_OFF` does the work of the two processes it was, each bounded at 120 s, and
    # took over 120 s of wall at a load of 28 (6 s of CPU).
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=context.state_dir,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@then("live and batch calls, run_many and a batch bulk run in a process with no tracer provider make no lowtide span")
def step_off(context: Context) -> None:
    check = (
        "lowtide_asked = [a for a in asked if a and a[0] == 'lowtide']\n"
        "assert not lowtide_asked, lowtide_asked\n"
        "assert 'lowtide.telemetry.calls' not in sys.modules\n"
        "assert 'lowtide.telemetry.batches' not in sys.modules\n"
        "assert 'lowtide.telemetry.later_calls' not in sys.modules\n"
        "print('none')"
    )
    printed = _python(context, _OFF.format(block=_COUNTED, check=check)).split()
    assert printed == ["Emulate", "Emulate", "2", "2", "none"], printed


_NO_API = """
import sys
sys.modules["opentelemetry"] = None  # as if `lowtide[otel]` were not installed (nor an SDK that brings the API)
import asyncio
from lowtide import Actor, ProviderRegistry
from lowtide.core.clock import SystemClock
from lowtide.ledger.memory.ledger import MemoryLedger
from lowtide.telemetry.switch import metering, tracing
from lowtide.testing import FakeBatchAPI, FakeBatchProvider

assert not tracing() and not metering()
registry = ProviderRegistry()
FakeBatchProvider.register(registry, FakeBatchAPI(SystemClock(), processing_seconds=0.01), name="fake")

async def main():
    actor = Actor({"name": "a", "provider": "fake", "model": "m", "batch_processing": "batch", "max_tokens": 64,
                   "batch": {"poll_interval": 0.01, "coalesce_window": 0.01}}, registry=registry, ledger=MemoryLedger())
    print((await actor.run("hello")).text)
    await actor.aclose()

asyncio.run(main())
assert "lowtide.telemetry.calls" not in sys.modules
"""


@then("a batch call in a process without the OpenTelemetry API is answered")
def step_no_api(context: Context) -> None:
    assert "hello" in _python(context, _NO_API)
