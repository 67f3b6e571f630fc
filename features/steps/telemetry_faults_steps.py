"""Steps of telemetry_faults.feature: OpenTelemetry configured with parts that fail (a span processor raising when a
span starts or ends, instruments raising, a propagator raising) or block (a processor exporting each span as it ends,
slowly), and an actor's calls answered all the same."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from typing import Any, Protocol

from _otel_globals import reset_otel_globals
from opentelemetry import metrics, propagate, trace
from opentelemetry.context import Context as OtelContext
from opentelemetry.propagators.textmap import CarrierT, Getter, Setter, TextMapPropagator
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util.types import Attributes
from step_context import given, then, when
from telemetry_steps import Context as TelemetryContext

from lowtide import ActorResponse
from lowtide.telemetry import guard
from lowtide.telemetry.scope import SCOPE, tracer


class Context(TelemetryContext, Protocol):
    telemetry_log: _Logged
    slow_exporter: _SlowExporter
    telemetry_answers: list[Any]
    telemetry_took: float


_TAKES = 1.0
"""Seconds the slow exporter takes for each of lowtide's spans."""


class _Raising(SpanProcessor):
    """A span processor with a bug: it raises when a span starts, or when one ends."""

    def __init__(self, moment: str) -> None:
        self.moment = moment

    def on_start(self, span: Span, parent_context: OtelContext | None = None) -> None:
        if self.moment == "starts":
            raise RuntimeError("the processor broke as a span started")

    def on_end(self, span: ReadableSpan) -> None:
        if self.moment == "ends":
            raise RuntimeError("the processor broke as a span ended")


class _SlowExporter(SpanExporter):
    """An exporter to an endpoint that takes `_TAKES` seconds for each of lowtide's spans (the SDK's own spans, which
    lowtide does not end, go at once); keeps what it received."""

    def __init__(self) -> None:
        self.received: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            scope = span.instrumentation_scope
            if scope is not None and scope.name == SCOPE:
                time.sleep(_TAKES)
            self.received.append(span)
        return SpanExportResult.SUCCESS


class _RaisingCounter(metrics.NoOpCounter):
    def add(self, amount: float, attributes: Attributes = None, context: OtelContext | None = None) -> None:
        raise RuntimeError("the metric reader broke")


class _RaisingUpDownCounter(metrics.NoOpUpDownCounter):
    def add(self, amount: float, attributes: Attributes = None, context: OtelContext | None = None) -> None:
        raise RuntimeError("the metric reader broke")


class _RaisingHistogram(metrics.NoOpHistogram):
    def record(self, amount: float, attributes: Attributes = None, context: OtelContext | None = None) -> None:
        raise RuntimeError("the metric reader broke")


class _RaisingMeter(metrics.NoOpMeter):
    """A meter whose instruments raise whenever they are used."""

    def create_counter(self, name: str, unit: str = "", description: str = "") -> metrics.Counter:
        return _RaisingCounter(name)

    def create_up_down_counter(self, name: str, unit: str = "", description: str = "") -> metrics.UpDownCounter:
        return _RaisingUpDownCounter(name)

    def create_histogram(self, name: str, unit: str = "", description: str = "", **_: Any) -> metrics.Histogram:
        return _RaisingHistogram(name)


class RaisingMeterProvider(metrics.NoOpMeterProvider):
    """A meter provider (a real one to lowtide: not the API's no-op) whose instruments raise."""

    def get_meter(self, name: str, *_: Any, **__: Any) -> metrics.Meter:
        return _RaisingMeter(name)


class _RaisingPropagator(TextMapPropagator):
    def inject(
        self, carrier: CarrierT, context: OtelContext | None = None, setter: Setter[CarrierT] | None = None
    ) -> None:
        raise RuntimeError("the propagator broke")

    def extract(
        self, carrier: CarrierT, context: OtelContext | None = None, getter: Getter[CarrierT] | None = None
    ) -> OtelContext:
        raise RuntimeError("the propagator broke")

    @property
    def fields(self) -> set[str]:
        return {"traceparent"}


class _Logged(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _configure(context: Context, *processors: SpanProcessor, meters: metrics.MeterProvider | None = None) -> None:
    """The scenario's tracer provider with `processors`, and `meters`; lowtide's warnings of telemetry failures
    recorded, and forgotten first (each is logged once a process)."""
    reset_otel_globals()
    provider = TracerProvider()
    for processor in processors:
        provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    if meters is not None:
        metrics.set_meter_provider(meters)
    saved = os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    guard._told.clear()  # pyright: ignore[reportPrivateUsage]
    logged = context.telemetry_log = _Logged()
    logging.getLogger("lowtide.telemetry").addHandler(logged)

    def restore() -> None:
        logging.getLogger("lowtide.telemetry").removeHandler(logged)
        reset_otel_globals()
        if saved is not None:
            os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = saved

    context.cleanups.append(restore)
    context.telemetry_ledger = None


@given("OpenTelemetry is configured with a span processor that raises when a span {moment}")
def step_raising_processor(context: Context, moment: str) -> None:
    context.spans = InMemorySpanExporter()
    _configure(context, _Raising(moment), SimpleSpanProcessor(context.spans))


@given("OpenTelemetry is configured with in-memory exporters and a meter whose instruments raise")
def step_raising_meter(context: Context) -> None:
    context.spans = InMemorySpanExporter()
    _configure(context, SimpleSpanProcessor(context.spans), meters=RaisingMeterProvider())


@given("OpenTelemetry is configured with in-memory exporters and a propagator that raises")
def step_raising_propagator(context: Context) -> None:
    context.spans = InMemorySpanExporter()
    _configure(context, SimpleSpanProcessor(context.spans))
    before = propagate.get_global_textmap()
    propagate.set_global_textmap(_RaisingPropagator())
    context.cleanups.append(lambda: propagate.set_global_textmap(before))


@given(
    "OpenTelemetry is configured with a span processor that exports each of lowtide's spans as it ends, taking 1 second"
)
def step_slow_processor(context: Context) -> None:
    context.slow_exporter = _SlowExporter()
    _configure(context, SimpleSpanProcessor(context.slow_exporter))


@when("the telemetry actor is asked {count:d} prompts at once")
def step_asked_at_once(context: Context, count: int) -> None:
    actor = context.telemetry_actor

    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(actor.run(f"Prompt {index}") for index in range(count)), return_exceptions=True)

    started = time.monotonic()
    context.telemetry_answers = context.runner.run(all_at_once())
    context.telemetry_took = time.monotonic() - started


@then("each of the {count:d} prompts was answered with the emulated reply")
def step_answered(context: Context, count: int) -> None:
    answers = context.telemetry_answers
    assert len(answers) == count, answers
    for index, answer in enumerate(answers):
        assert isinstance(answer, ActorResponse), answer
        assert answer.text.startswith(f'Emulated reply to "Prompt {index}": '), answer.text


@then("lowtide logged once that OpenTelemetry failed while {doing}, and that calls go on")
def step_logged_once(context: Context, doing: str) -> None:
    messages = context.telemetry_log.messages
    said = [message for message in messages if f"OpenTelemetry failed while {doing}" in message]
    assert len(said) == 1, messages
    assert "lowtide's calls go on without it" in said[0], said


@then('there are {count:d} "{name}" spans')
def step_spans(context: Context, count: int, name: str) -> None:
    names = [span.name for span in context.spans.get_finished_spans()]
    assert names.count(name) == count, names


@then("the calls took less than {seconds:g} seconds, where {count:d} spans ended one after another take {total:g}")
def step_took(context: Context, seconds: float, count: int, total: float) -> None:
    assert count * _TAKES == total, (count, total)
    assert context.telemetry_took < seconds, f"the calls took {context.telemetry_took:.1f} s"


@then("lowtide warned once that ending a span took 1 second or more, naming BatchSpanProcessor")
def step_warned_slow(context: Context) -> None:
    said = [message for message in context.telemetry_log.messages if message.startswith("Ending a span took")]
    assert len(said) == 1, context.telemetry_log.messages
    assert "BatchSpanProcessor" in said[0], said


@then('once lowtide\'s spans are ended, the exporter received {count:d} "{name}" spans')
def step_received(context: Context, count: int, name: str) -> None:
    assert tracer().spans_ended(timeout=count * _TAKES + 10.0), "spans still waiting to be ended"
    names = [span.name for span in context.slow_exporter.received]
    assert names.count(name) == count, names
