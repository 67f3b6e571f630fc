"""lowtide's instrumentation scope: its tracer and meter, named `lowtide` with lowtide's version."""

from __future__ import annotations

from opentelemetry import metrics, trace

from lowtide._version import __version__

__all__ = ["SCOPE", "meter", "tracer"]

SCOPE = "lowtide"


def tracer() -> trace.Tracer:
    """lowtide's tracer from the global provider (the API caches it per provider)."""
    return trace.get_tracer(SCOPE, __version__)


def meter() -> metrics.Meter:
    return metrics.get_meter(SCOPE, __version__)
