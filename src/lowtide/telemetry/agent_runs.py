"""A durable agent run as one trace, whichever processes advance it: its start a span (`lowtide.agent.run`) whose
context is stored with the run, and each advance a span (`lowtide.agent.advance`) continuing that context, its turns'
calls and batches within it. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from lowtide.telemetry.propagation import carrier_of_current, context_of
from lowtide.telemetry.scope import tracer

__all__ = ["advance_span", "run_span"]


@contextmanager
def run_span(run_id: str, reference: str) -> Generator[str]:
    """The run's first span (its start), current meanwhile: its context as the run stores it (`propagation`'s
    carrier, "" when there is none)."""
    span = tracer().start_span(
        "lowtide.agent.run",
        kind=SpanKind.INTERNAL,
        attributes={"lowtide.agent.run.id": run_id, "lowtide.agent.reference": reference},
    )
    with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
        yield carrier_of_current()


@contextmanager
def advance_span(run_id: str, stored: str | None) -> Generator[Span]:
    """An advance of the run, in the trace its stored context names (a new one when it has none), current meanwhile."""
    span = tracer().start_span(
        "lowtide.agent.advance",
        context=context_of(stored),
        kind=SpanKind.INTERNAL,
        attributes={"lowtide.agent.run.id": run_id},
    )
    with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
        yield span
