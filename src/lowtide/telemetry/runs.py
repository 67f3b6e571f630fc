"""A bulk run (`actor.map`, `BulkRun.run`, `lowtide run`) as one span (`lowtide.run`): its live items' call spans
and its batches' spans are its children. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from lowtide.core.run_reports import RunReport
from lowtide.telemetry.attributes import provider_attributes
from lowtide.telemetry.current import RUN
from lowtide.telemetry.scope import tracer

__all__ = ["traced_run"]


class _Ended(Protocol):
    """How a go at a run ended, as the span reads it (bulk/'s `RunEnd`, named so without importing bulk/)."""

    @property
    def report(self) -> RunReport: ...


EndT = TypeVar("EndT", bound=_Ended)


async def traced_run(
    run_id: str,
    *,
    actor: str,
    provider: str,
    gen_ai_provider: str | None,
    mode: str,
    items: int,
    go: Callable[[], Awaitable[EndT]],
) -> EndT:
    span = tracer().start_span(
        "lowtide.run",
        kind=SpanKind.INTERNAL,
        attributes={
            "lowtide.run.id": run_id,
            "lowtide.actor": actor,
            **provider_attributes(provider, gen_ai_provider),
            "lowtide.mode": mode,
            "lowtide.run.to_send": items,
        },
    )
    token = RUN.set(span)
    try:
        with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            end = await go()
    except BaseException as exc:
        span.set_attribute("error.type", type(exc).__name__)
        span.set_status(Status(StatusCode.ERROR, str(exc)[:500]))
        span.end()
        raise
    finally:
        RUN.reset(token)
    report = end.report
    for status, count in report.counts().items():
        span.set_attribute(f"lowtide.run.items.{status}", count)
    if report.batches is not None:
        span.set_attribute("lowtide.run.batches", report.batches)
    span.end()
    return end
