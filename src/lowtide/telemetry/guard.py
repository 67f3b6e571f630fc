"""Telemetry that cannot hurt a call: lowtide's spans and instruments wrap the application's, so that whatever its span
processors, exporters or metric readers raise is logged once and the call goes on; and a span processor that blocks
when a span ends (a synchronous exporter whose endpoint does not answer) holds the event loop once, not at every span:
after one end slower than `SLOW_END_SECONDS`, spans end in a thread of their own."""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TypeVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import INVALID_SPAN, Link, Span, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.util.types import Attributes, AttributeValue

__all__ = ["SLOW_END_SECONDS", "GuardedSpan", "GuardedTracer", "guarded"]

log = logging.getLogger("lowtide.telemetry")

T = TypeVar("T")

SLOW_END_SECONDS = 0.1
"""How long ending a span may take on the event loop (a processor exporting it as it ends) before the spans that come
after end in a thread instead."""
_DRAIN_AT_EXIT_SECONDS = 5.0
"""How long a program's exit waits for the spans still to be ended off the loop."""

_told: set[tuple[str, type[BaseException]]] = set()
_told_lock = threading.Lock()


def _failed(what: str, error: Exception) -> None:
    """Log a telemetry failure, once per place and kind of error: a broken processor would otherwise log every span."""
    with _told_lock:
        if (what, type(error)) in _told:
            return
        _told.add((what, type(error)))
    log.warning(
        "OpenTelemetry failed while %s (%s: %s); lowtide's calls go on without it. Further failures like this one are "
        "not logged.",
        what,
        type(error).__name__,
        error,
    )


def guarded(what: str, action: Callable[[], T], fallback: T) -> T:
    """`action()`, or `fallback` should it raise (logged once: `what` names what was being done)."""
    try:
        return action()
    except Exception as exc:
        _failed(what, exc)
        return fallback


class _Ender:
    """Ends spans: on the caller's thread while every end is quick; after one slower than `SLOW_END_SECONDS` (a
    processor exporting synchronously to an endpoint that does not answer), in a daemon thread of its own, each span
    with the time it was ended at."""

    def __init__(self) -> None:
        self.slow = False
        self._queue: queue.SimpleQueue[tuple[Span, int] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending = 0

    def end(self, span: Span, end_time: int | None) -> None:
        if self.slow:
            self._hand_over(span, end_time if end_time is not None else time.time_ns())
            return
        started = time.monotonic()
        guarded("ending a span", lambda: span.end(end_time), None)
        took = time.monotonic() - started
        if took > SLOW_END_SECONDS:
            self.slow = True
            log.warning(
                "Ending a span took %.1f s (a span processor exporting as spans end, such as SimpleSpanProcessor, to "
                "an endpoint that is slow or does not answer): lowtide's spans now end in a thread of their own, off "
                "the event loop. BatchSpanProcessor exports without holding up the program.",
                took,
            )

    def _hand_over(self, span: Span, end_time: int) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lowtide-span-ends", daemon=True)
                self._thread.start()
                atexit.register(self.drain, _DRAIN_AT_EXIT_SECONDS)
            self._pending += 1
        self._queue.put((span, end_time))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            span, end_time = item
            guarded("ending a span", partial(span.end, end_time), None)
            with self._lock:
                self._pending -= 1

    def drain(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the spans handed over to be ended; True when none is left."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._pending == 0:
                    return True
            time.sleep(0.01)
        with self._lock:
            left = self._pending
        if left:
            log.warning("%d span(s) were still being ended when the program exited; they are dropped.", left)
        return left == 0


class GuardedSpan(Span):
    """The application's span, every method of it guarded (`guarded`), its end possibly off the loop (`_Ender`)."""

    __slots__ = ("_ender", "_span")

    def __init__(self, span: Span, ender: _Ender) -> None:
        self._span = span
        self._ender = ender

    def end(self, end_time: int | None = None) -> None:
        self._ender.end(self._span, end_time)

    def get_span_context(self) -> SpanContext:
        return guarded("reading a span's context", self._span.get_span_context, INVALID_SPAN.get_span_context())

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        guarded("setting a span's attributes", lambda: self._span.set_attributes(attributes), None)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        guarded("setting a span's attribute", lambda: self._span.set_attribute(key, value), None)

    def add_event(self, name: str, attributes: Attributes = None, timestamp: int | None = None) -> None:
        guarded("adding a span event", lambda: self._span.add_event(name, attributes, timestamp), None)

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        guarded("linking spans", lambda: self._span.add_link(context, attributes), None)

    def update_name(self, name: str) -> None:
        guarded("naming a span", lambda: self._span.update_name(name), None)

    def is_recording(self) -> bool:
        return guarded("asking whether a span records", self._span.is_recording, False)

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        guarded("setting a span's status", lambda: self._span.set_status(status, description), None)

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        guarded(
            "recording an exception on a span",
            lambda: self._span.record_exception(exception, attributes, timestamp, escaped),
            None,
        )


class GuardedTracer:
    """The application's tracer for lowtide's scope, as lowtide uses it (`start_span`): a span it cannot start is a
    non-recording one (the call goes on, untraced), and every span it starts is a `GuardedSpan`."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer
        self.ender = _Ender()
        """Ends its spans: a slow processor of this tracer's provider (not another's) sends them to a thread."""

    def spans_ended(self, timeout: float = 5.0) -> bool:
        """Wait (up to `timeout` seconds) until every span this tracer ended off the event loop has been ended, as a
        reader of the provider's finished spans must once lowtide ends them in a thread. True when none is left."""
        return self.ender.drain(timeout)

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        started = guarded(
            "starting a span",
            lambda: self.tracer.start_span(
                name, context, kind, attributes, links, start_time, record_exception, set_status_on_exception
            ),
            None,
        )
        return INVALID_SPAN if started is None else GuardedSpan(started, self.ender)
