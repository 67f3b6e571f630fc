"""lowtide's instrumentation scope: its tracer and meter, named `lowtide` with lowtide's version."""

from __future__ import annotations

from opentelemetry import metrics, trace

from lowtide._version import __version__
from lowtide.telemetry.guard import GuardedTracer

__all__ = ["SCOPE", "meter", "tracer"]

SCOPE = "lowtide"


_guarded: tuple[trace.Tracer, GuardedTracer] | None = None


def tracer() -> GuardedTracer:
    """lowtide's tracer from the global provider (the API caches it per provider), guarded: what the application's
    processors and exporters raise never reaches a call (`guard.GuardedTracer`)."""
    global _guarded
    made = trace.get_tracer(SCOPE, __version__)
    if _guarded is None or _guarded[0] is not made:
        _guarded = (made, GuardedTracer(made))
    return _guarded[1]


def meter() -> metrics.Meter:
    return metrics.get_meter(SCOPE, __version__)
