"""One span per batch (`lowtide.batch`), from its intent to its end, with its create, polls, reconcile and results as
events; linked both ways with the spans of the calls it carries (each call's span links to its batch's, the batch's
to each call's); current while the backend is called for it, so that the SDK's HTTP spans are its children. A bulk
run's batches are children of the run's span; any other batch is a trace of its own. Imported only when telemetry
is on."""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode

from lowtide.telemetry.attributes import provider_attributes
from lowtide.telemetry.current import RUN, CallTrace
from lowtide.telemetry.metrics import instruments
from lowtide.telemetry.propagation import carrier_of, context_of
from lowtide.telemetry.scope import tracer
from lowtide.telemetry.switch import metering

__all__ = [
    "MOST_LINKS",
    "answered_elsewhere",
    "batch_current",
    "batch_event",
    "carry",
    "current_batch",
    "end_batch",
    "link_back",
    "reconciled",
    "start_batch",
    "traced_keys",
]

MOST_LINKS = 1000
"""Most calls a batch's span links to (the SDK keeps 128 by default): a 100,000-request batch's span stays small;
every call's span links to its batch all the same."""


@dataclass
class _Batch:
    span: Span
    started: float
    waiting: int
    phase: str
    provider: dict[str, str]
    """Its provider's attributes (`gen_ai.provider.name`, `lowtide.provider`), which its metrics carry."""
    keys: set[str]
    """The keys whose call spans in this process it links to (or will: `later`)."""
    links: int = 0
    """How many call spans it links to (at most `MOST_LINKS`)."""


_batches: dict[str, _Batch] = {}
"""This process's batches with a span open, by lowtide's batch id."""


def start_batch(
    batch_id: str,
    *,
    provider: str,
    gen_ai_provider: str | None = None,
    requests: int,
    resumed: bool = False,
    stored: str | None = None,
) -> str:
    """Open a batch's span; its trace context as the ledger stores it with the batch (`BatchIntent.trace`).

    At its intent, before the intent is written (`carry` then links the calls it holds): the bulk run's child, or a
    root. Where this process takes up a batch another process (or this one, earlier) began (`resumed`): the child of
    the span its intent opened (`stored`, the context the ledger kept with it), so that one trace shows the batch from
    intent to collection whichever processes waited on it, linked to the bulk run this process runs, if any."""
    batch = _batches.get(batch_id)
    if batch is not None:
        return ""
    run = RUN.get()
    continued = context_of(stored) if resumed else None
    if continued is not None:
        parent, links = continued, [Link(run.get_span_context())] if run is not None else []
    else:
        parent, links = (trace.set_span_in_context(run) if run is not None else Context()), []
    named = provider_attributes(provider, gen_ai_provider)
    span = tracer().start_span(
        "lowtide.batch",
        context=parent,
        kind=SpanKind.INTERNAL,
        links=links,
        attributes={
            "lowtide.batch.id": batch_id,
            **named,
            "lowtide.batch.requests": requests,
            "lowtide.batch.resumed": resumed,
        },
    )
    phase = "running" if resumed else "intent"
    _batches[batch_id] = _Batch(span, time.monotonic(), requests, phase, named, set())
    if metering():
        made = instruments()
        made.batches_in_flight.add(1, {"lowtide.batch.phase": phase, **named})
        made.requests_waiting.add(requests, named)
    return "" if resumed else carrier_of(span)


def carry(batch_id: str, calls: Sequence[tuple[str, CallTrace]], later: Sequence[str], requests: int) -> None:
    """The batch's intent is recorded with `requests` requests: its span links both ways with `calls`, the spans of
    this process's calls it carries; `later`: the keys of those whose spans are made when their answers are handed on
    (`later_calls`), linked then, while the batch's span is current."""
    batch = _batches.get(batch_id)
    if batch is None:
        return
    here = batch.span.get_span_context()
    for _, call in calls[:MOST_LINKS]:
        batch.span.add_link(call.span.get_span_context())
    batch.links = min(len(calls), MOST_LINKS)
    for key, call in calls:
        batch.keys.add(key)
        call.span.add_link(here)
        call.span.set_attribute("lowtide.batch.id", batch_id)
    batch.keys.update(later)
    if requests != batch.waiting:
        batch.span.set_attribute("lowtide.batch.requests", requests)
        if metering():
            instruments().requests_waiting.add(requests - batch.waiting, batch.provider)
        batch.waiting = requests


def batch_event(batch_id: str, name: str, attributes: Mapping[str, str | int | float | bool] | None = None) -> None:
    """An event on a batch's span (`create`, `poll`, `reconcile`, `results`); a phase it names moves the batch."""
    batch = _batches.get(batch_id)
    if batch is None:
        return
    batch.span.add_event(name, dict(attributes or {}))
    phase = (attributes or {}).get("lowtide.batch.phase")
    if isinstance(phase, str) and phase != batch.phase and metering():
        made = instruments()
        made.batches_in_flight.add(-1, {"lowtide.batch.phase": batch.phase, **batch.provider})
        made.batches_in_flight.add(1, {"lowtide.batch.phase": phase, **batch.provider})
    if isinstance(phase, str):
        batch.phase = phase


def reconciled(batch_id: str, outcome: str) -> None:
    """A create of unknown outcome settled: `adopted`, `resumed` or `resent` (an event, and `lowtide.reconciles`)."""
    batch_event(batch_id, "reconcile", {"lowtide.reconcile.outcome": outcome})
    if metering():
        instruments().reconciles.add(1, {"lowtide.reconcile.outcome": outcome})


_CURRENT: ContextVar[str | None] = ContextVar("lowtide_batch", default=None)
"""The batch whose span is current in this task (`batch_current`): the one whose answers are being handed on."""


@contextmanager
def batch_current(batch_id: str) -> Generator[None]:
    """The batch's span current (its API calls' HTTP spans its children), or nothing changed if it has none."""
    batch = _batches.get(batch_id)
    if batch is None:
        yield
        return
    token = _CURRENT.set(batch_id)
    try:
        with trace.use_span(batch.span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            yield
    finally:
        _CURRENT.reset(token)


def current_batch() -> tuple[str, Span] | None:
    """The batch (lowtide's id, span) whose span is current here, if any."""
    batch_id = _CURRENT.get()
    batch = _batches.get(batch_id) if batch_id is not None else None
    return (batch_id, batch.span) if batch_id is not None and batch is not None else None


def link_back(batch_id: str, call: Span) -> None:
    """The batch's span links to `call`'s (made after its intent), up to `MOST_LINKS` calls."""
    batch = _batches.get(batch_id)
    if batch is not None and batch.links < MOST_LINKS:
        batch.span.add_link(call.get_span_context())
        batch.links += 1


def end_batch(batch_id: str, state: str, error: BaseException | None = None) -> None:
    """Close a batch's span: collected, refused, not recorded, left for later (`error`, or none when this process
    stopped), or gathered into another process's batch ("gathered elsewhere")."""
    batch = _batches.pop(batch_id, None)
    if batch is None:
        return
    batch.span.set_attribute("lowtide.batch.state", state)
    if error is not None:
        batch.span.set_attribute("error.type", type(error).__name__)
        batch.span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
    batch.span.end()
    if metering():
        made = instruments()
        made.batches_in_flight.add(-1, {"lowtide.batch.phase": batch.phase, **batch.provider})
        made.requests_waiting.add(-batch.waiting, batch.provider)
        if state == "collected":
            made.batch_turnaround.record(time.monotonic() - batch.started, batch.provider)


def traced_keys(batch_id: str) -> set[str]:
    """The keys of a batch whose call spans are this process's (their trace ends with them)."""
    batch = _batches.get(batch_id)
    return batch.keys if batch is not None else set()


def answered_elsewhere(batch_id: str, answers: Mapping[str, tuple[str, str]], held: set[str]) -> None:
    """Close the trace of calls begun by another process (or before a restart), answered here: for each key not
    `held` by a call span of this process, a short `lowtide.answer` span parented on the context stored with the
    request (`answers`: key -> (stored carrier, state)), and a link to it from this batch's span."""
    batch = _batches.get(batch_id)
    for key, (stored, state) in answers.items():
        if key in held:
            continue
        parent = context_of(stored)
        if parent is None:
            continue
        span = tracer().start_span(
            "lowtide.answer",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes={"lowtide.key": key, "lowtide.batch.id": batch_id, "lowtide.request.state": state},
        )
        if batch is not None:
            span.add_link(batch.span.get_span_context())
            batch.span.add_link(span.get_span_context())
        span.end()
