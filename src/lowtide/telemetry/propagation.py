"""A trace context in and out: the current one as the ledger stores it with a request (the W3C `traceparent` and
`tracestate`, JSON, through the global propagator), and a stored one or a client's headers read back."""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping
from contextlib import contextmanager

from opentelemetry import propagate, trace
from opentelemetry.context import Context, attach, detach

from lowtide.core.json_types import json_object
from lowtide.telemetry.guard import guarded

__all__ = ["carrier_of", "carrier_of_current", "context_of", "continuing"]


def carrier_of_current() -> str:
    """The current trace context as stored text (`{"traceparent": ...}`), or "" when there is none."""
    return _carrier(None)


def carrier_of(span: trace.Span) -> str:
    """`span`'s trace context as stored text, as `carrier_of_current` gives the current one."""
    return _carrier(trace.set_span_in_context(span))


def _carrier(context: Context | None) -> str:
    carrier: dict[str, str] = {}
    guarded("writing the trace context", lambda: propagate.inject(carrier, context=context), None)
    return json.dumps(carrier, sort_keys=True, separators=(",", ":")) if carrier else ""


def context_of(stored: str | None) -> Context | None:
    """The context a stored carrier names, or None when there is none (or it cannot be read)."""
    if not stored:
        return None
    try:
        carrier = json.loads(stored)
    except ValueError:
        return None
    fields = {name: str(value) for name, value in json_object(carrier).items()}
    return guarded("reading a stored trace context", lambda: propagate.extract(fields), None) if fields else None


@contextmanager
def continuing(headers: Mapping[str, str]) -> Generator[None]:
    """A client's trace context (its request's `traceparent` and `tracestate`, through the global propagator)
    current meanwhile: a task started here continues the client's trace."""
    carrier = {name.lower(): value for name, value in headers.items()}
    token = attach(guarded("reading a client's trace context", lambda: propagate.extract(carrier), Context()))
    try:
        yield
    finally:
        detach(token)
