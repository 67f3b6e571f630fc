"""The OpenTelemetry API's global providers, taken away between scenarios: the API lets a provider be set once per
process, so a scenario that sets its own first resets them, and resets them again when it ends so that no other
scenario runs with telemetry on."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.metrics import _internal as metrics_internal
from opentelemetry.util._once import Once

__all__ = ["reset_otel_globals"]


def reset_otel_globals() -> None:
    trace._TRACER_PROVIDER = None  # pyright: ignore[reportPrivateUsage]
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # pyright: ignore[reportPrivateUsage]
    metrics_internal._METER_PROVIDER = None  # pyright: ignore[reportPrivateUsage]
    metrics_internal._METER_PROVIDER_SET_ONCE = Once()  # pyright: ignore[reportPrivateUsage]
