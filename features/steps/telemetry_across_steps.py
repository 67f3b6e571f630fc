"""Steps of telemetry_across.feature: a batch's spans in two processes (each with a tracer provider and an in-memory
exporter of its own, one after the other, over one ledger), read as one trace."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from typing import Protocol

from _otel_globals import reset_otel_globals
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from step_context import Context as StepContext
from step_context import then, when

from lowtide import Actor
from lowtide.calls.parking import collect
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator
from lowtide.ledger.records import BatchRecord
from lowtide.ledger.store import open_ledger


class Context(StepContext, Protocol):
    spans: InMemorySpanExporter
    fresh_spans: InMemorySpanExporter
    api_clock: ManualClock
    telemetry_emu: Emulator
    telemetry_actor: Actor
    telemetry_ledger: str | None
    run_inputs: list[str]


def _the_batch(context: Context) -> BatchRecord:
    assert context.telemetry_ledger is not None
    batches = open_ledger(context.telemetry_ledger).batches()
    assert len(batches) == 1, batches
    return batches[0]


@when('the batch\'s trace context in the ledger is damaged to "{stored}"')
def step_damage(context: Context, stored: str) -> None:
    assert context.telemetry_ledger is not None
    batch = _the_batch(context)
    assert batch.trace, batch
    with sqlite3.connect(context.telemetry_ledger) as db:  # a copied or hand-edited ledger: the store writes no such
        db.execute("UPDATE batches SET trace = ? WHERE id = ?", (stored, batch.id))


def _fresh_process(context: Context) -> None:
    """The fresh process's telemetry: a tracer provider and exporter of its own (the first one's spans stay in
    `context.spans`); the API's batch has ended meanwhile, as the next process finds it."""
    reset_otel_globals()
    context.fresh_spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(context.fresh_spans))
    trace.set_tracer_provider(provider)
    context.api_clock.advance(61)


@when('the telemetry actor\'s bulk run of "{prompts}" has sent its batch, and its process stops')
def step_run_stopped(context: Context, prompts: str) -> None:
    inputs = [p.strip() for p in prompts.split(",")]
    context.run_inputs = inputs

    async def until_sent() -> None:
        run = asyncio.ensure_future(context.telemetry_actor.map(inputs, progress="none"))
        assert context.telemetry_ledger is not None
        ledger = open_ledger(context.telemetry_ledger)
        try:
            for _ in range(400):  # the API holds the batch for a minute of its own clock, which stands still
                if any(b.provider_batch_id for b in ledger.batches()):
                    return
                assert not run.done(), run
                await asyncio.sleep(0.025)
            raise AssertionError("the bulk run sent no batch")
        finally:
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)
            await context.telemetry_actor.aclose()

    context.runner.run(until_sent())


@when("a fresh process with a tracer provider of its own runs the same bulk run to its end")
def step_run_resumed(context: Context) -> None:
    _fresh_process(context)
    actor = Actor(
        {
            "name": "traced",
            "model": "claude-haiku-4-5",
            "batch_processing": "batch",
            "max_tokens": 64,
            "batch": {"poll_interval": 0.01, "coalesce_window": 0.01},
        },
        client=context.telemetry_emu.client(),
        ledger=context.telemetry_ledger,
    )

    async def resumed() -> None:
        async with actor:
            result = await actor.map(context.run_inputs, progress="none")
            assert result.counts().get("succeeded") == len(context.run_inputs), result.counts()

    runner = asyncio.Runner()  # the other process's event loop
    try:
        runner.run(resumed())
    finally:
        runner.close()


@when("the actor's process stops, and a fresh process with a tracer provider of its own collects the ledger")
def step_collect_apart(context: Context) -> None:
    context.runner.run(context.telemetry_actor.aclose())
    _fresh_process(context)
    assert context.telemetry_ledger is not None
    ledger = open_ledger(context.telemetry_ledger)

    async def until_collected() -> None:
        for _ in range(200):  # the emulator ends a batch within moments: collect until it has
            await collect(ledger, client=context.telemetry_emu.client())
            if _named(context.fresh_spans.get_finished_spans(), "lowtide.batch"):
                return
            await asyncio.sleep(0.05)

    runner = asyncio.Runner()  # the other process's event loop, closed (tasks and all) as that process ends
    try:
        runner.run(until_collected())
    finally:
        runner.close()


def _named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def _one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    found = _named(spans, name)
    assert len(found) == 1, (name, [(s.name, s.attributes) for s in spans])
    return found[0]


def _first_batch(context: Context) -> ReadableSpan:
    return _one(context.spans.get_finished_spans(), "lowtide.batch")


def _fresh_batch(context: Context) -> ReadableSpan:
    return _one(context.fresh_spans.get_finished_spans(), "lowtide.batch")


def _ids(span: ReadableSpan) -> tuple[int, int]:
    assert span.context is not None
    return span.context.trace_id, span.context.span_id


def _linked(span: ReadableSpan) -> set[tuple[int, int]]:
    return {(link.context.trace_id, link.context.span_id) for link in span.links}


@then('the first process\'s "lowtide.batch" span ended "{state}", linked both ways with the parked call\'s span')
def step_first_batch(context: Context, state: str) -> None:
    batch = _first_batch(context)
    assert (batch.attributes or {}).get("lowtide.batch.state") == state, batch.attributes
    assert (batch.attributes or {}).get("lowtide.batch.requests") == 1, batch.attributes
    [call] = [s for s in context.spans.get_finished_spans() if (s.attributes or {}).get("lowtide.call") == "submit"]
    assert _ids(call) in _linked(batch), (batch.links, call.context)
    assert _ids(batch) in _linked(call), (call.links, batch.context)


@then("the ledger keeps that span's trace context with the batch")
def step_ledger_keeps(context: Context) -> None:
    stored = _the_batch(context).trace
    assert stored is not None
    trace_id, span_id = _ids(_first_batch(context))
    assert json.loads(stored)["traceparent"].startswith(f"00-{trace_id:032x}-{span_id:016x}-"), stored


@then('the fresh process\'s "lowtide.batch" span is that span\'s child, in the same trace, and ended "{state}"')
@then('the fresh process\'s "lowtide.batch" span is the first process\'s child, in the same trace, and ended "{state}"')
def step_fresh_child(context: Context, state: str) -> None:
    first, fresh = _first_batch(context), _fresh_batch(context)
    assert fresh.parent is not None, "the fresh process's batch span has no parent"
    assert (fresh.parent.trace_id, fresh.parent.span_id) == _ids(first), (fresh.parent, first.context)
    assert _ids(fresh)[0] == _ids(first)[0]
    attributes = fresh.attributes or {}
    assert attributes.get("lowtide.batch.state") == state, attributes
    assert attributes.get("lowtide.batch.resumed") is True, attributes
    assert attributes.get("lowtide.batch.id") == (first.attributes or {}).get("lowtide.batch.id"), attributes


@then("the fresh process's \"lowtide.answer\" span is the parked call's child, linked both ways with its batch's span")
def step_fresh_answer(context: Context) -> None:
    answer, fresh = _one(context.fresh_spans.get_finished_spans(), "lowtide.answer"), _fresh_batch(context)
    [call] = [s for s in context.spans.get_finished_spans() if (s.attributes or {}).get("lowtide.call") == "submit"]
    assert answer.parent is not None
    assert (answer.parent.trace_id, answer.parent.span_id) == _ids(call), (answer.parent, call.context)
    assert _ids(fresh) in _linked(answer), answer.links
    assert _ids(answer) in _linked(fresh), fresh.links


@then('the fresh process\'s "lowtide.batch" span begins a trace of its own, and ended "{state}"')
def step_fresh_root(context: Context, state: str) -> None:
    fresh = _fresh_batch(context)
    assert fresh.parent is None, fresh.parent
    assert (fresh.attributes or {}).get("lowtide.batch.state") == state, fresh.attributes


@then('the fresh process\'s "lowtide.batch" span links to its own "lowtide.run" span')
def step_fresh_run_link(context: Context) -> None:
    run = _one(context.fresh_spans.get_finished_spans(), "lowtide.run")
    assert _ids(run) in _linked(_fresh_batch(context)), (_fresh_batch(context).links, run.context)


@then("the ledger keeps no trace context with the batch")
def step_no_trace(context: Context) -> None:
    assert _the_batch(context).trace is None, _the_batch(context)
