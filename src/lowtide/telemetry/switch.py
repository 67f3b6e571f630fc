"""Whether telemetry is on: the OpenTelemetry API installed and a tracer (or meter) provider configured by the
application. Asked once per call, cheaply: off, lowtide makes no span, no attribute and no instrument at all."""

from __future__ import annotations

import os
from importlib import import_module
from types import ModuleType

__all__ = ["CONTENT_VARIABLE", "capture_content", "metering", "tracing"]

CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI conventions' opt-in for prompts and answers on spans (off unless set to a value saying so)."""
_CONTENT_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})


def _api(name: str) -> ModuleType | None:
    try:
        return import_module(name)
    except ImportError:  # the API is not installed (`lowtide[otel]`): telemetry stays off
        return None


_trace = _api("opentelemetry.trace")
_metrics = _api("opentelemetry.metrics")
_metrics_globals = _api("opentelemetry.metrics._internal")
# The providers the API gives while the application has configured none: a proxy, or the no-op one set on purpose.
_OFF_TRACING = frozenset({"ProxyTracerProvider", "NoOpTracerProvider"})
_OFF_METERING = frozenset({"_ProxyMeterProvider", "NoOpMeterProvider"})


# The API keeps the configured provider in a module global, None until one is set (by code, or on first use from
# $OTEL_PYTHON_TRACER_PROVIDER): reading it is the cheap test asked on every call (`get_tracer_provider()` reads the
# environment each time: two microseconds, a quarter of a second over 100,000 calls). Should a release of the API
# name it otherwise, the public function answers instead.
_FAST = _trace is not None and hasattr(_trace, "_TRACER_PROVIDER") and "OTEL_PYTHON_TRACER_PROVIDER" not in os.environ
_FAST_METERS = (
    _metrics_globals is not None
    and hasattr(_metrics_globals, "_METER_PROVIDER")
    and "OTEL_PYTHON_METER_PROVIDER" not in os.environ
)


def tracing() -> bool:
    """True when spans would go somewhere: the API is installed and the global tracer provider is a real one."""
    if _trace is None:
        return False
    if _FAST and _trace.__dict__["_TRACER_PROVIDER"] is None:
        return False
    return type(_trace.get_tracer_provider()).__name__ not in _OFF_TRACING


def metering() -> bool:
    """True when measurements would go somewhere: the API is installed and the global meter provider is a real one."""
    if _metrics is None:
        return False
    if _FAST_METERS and _metrics_globals is not None and _metrics_globals.__dict__["_METER_PROVIDER"] is None:
        return False
    return type(_metrics.get_meter_provider()).__name__ not in _OFF_METERING


def capture_content() -> bool:
    """Whether prompts and answers go on spans: only when the conventions' variable asks for it."""
    return os.environ.get(CONTENT_VARIABLE, "").strip().lower() in _CONTENT_ON
