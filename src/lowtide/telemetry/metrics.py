"""lowtide's instruments: the GenAI conventions' client metrics (`gen_ai.client.token.usage`,
`gen_ai.client.operation.duration`) and lowtide's own (cost and savings, requests waiting, batches in flight by phase,
a batch's time from intent to results, rate-limit pauses, retries by class, reconciles by outcome). Made once per
meter provider, only when one is configured (`switch.metering`)."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry import metrics
from opentelemetry.util.types import Attributes

from lowtide.telemetry.guard import guarded
from lowtide.telemetry.scope import SCOPE, meter

__all__ = ["Counter", "Histogram", "Instruments", "instruments"]


class Counter:
    """A counter (or up-down counter) of the application's meter; what its readers raise is logged once (`guarded`)."""

    __slots__ = ("_counter",)

    def __init__(self, counter: metrics.Counter | metrics.UpDownCounter) -> None:
        self._counter = counter

    def add(self, amount: float, attributes: Attributes = None) -> None:
        guarded("recording a metric", lambda: self._counter.add(amount, attributes), None)


class Histogram:
    """A histogram of the application's meter; what its readers raise is logged once (`guarded`)."""

    __slots__ = ("_histogram",)

    def __init__(self, histogram: metrics.Histogram) -> None:
        self._histogram = histogram

    def record(self, amount: float, attributes: Attributes = None) -> None:
        guarded("recording a metric", lambda: self._histogram.record(amount, attributes), None)


# The conventions' advisory bucket boundaries.
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]


@dataclass(frozen=True)
class Instruments:
    token_usage: Histogram
    operation_duration: Histogram
    cost: Counter
    savings: Counter
    requests_waiting: Counter
    batches_in_flight: Counter
    batch_turnaround: Histogram
    rate_limit_pauses: Counter
    retries: Counter
    reconciles: Counter


_made: tuple[object, Instruments] | None = None


def instruments() -> Instruments:
    """lowtide's instruments from the global meter provider (made again if the application replaced it)."""
    global _made
    provider = metrics.get_meter_provider()
    if _made is not None and _made[0] is provider:
        return _made[1]
    # A meter provider that cannot make them: measured by nothing (logged once), the calls unharmed.
    made = guarded("making lowtide's instruments", lambda: _made_by(meter()), None) or _made_by(
        metrics.NoOpMeter(SCOPE)
    )
    _made = (provider, made)
    return made


def _made_by(m: metrics.Meter) -> Instruments:
    return Instruments(
        token_usage=Histogram(
            m.create_histogram(
                "gen_ai.client.token.usage",
                unit="{token}",
                description="Number of input and output tokens used.",
                explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
            )
        ),
        operation_duration=Histogram(
            m.create_histogram(
                "gen_ai.client.operation.duration",
                unit="s",
                description="GenAI operation duration.",
                explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
            )
        ),
        cost=Counter(
            m.create_counter("lowtide.cost", unit="USD", description="What answered calls cost, at their prices.")
        ),
        savings=Counter(
            m.create_counter(
                "lowtide.savings", unit="USD", description="What answered calls saved against the same calls live."
            )
        ),
        requests_waiting=Counter(
            m.create_up_down_counter(
                "lowtide.requests.waiting", unit="{request}", description="Requests in a batch not yet answered."
            )
        ),
        batches_in_flight=Counter(
            m.create_up_down_counter(
                "lowtide.batches.in_flight", unit="{batch}", description="Batches of this process, by phase."
            )
        ),
        batch_turnaround=Histogram(
            m.create_histogram(
                "lowtide.batch.turnaround",
                unit="s",
                description="A batch's time from its intent to its results stored.",
            )
        ),
        rate_limit_pauses=Counter(
            m.create_counter("lowtide.rate_limit.pauses", unit="{pause}", description="Live calls paused by a 429.")
        ),
        retries=Counter(
            m.create_counter("lowtide.retries", unit="{retry}", description="Live calls tried again, by class.")
        ),
        reconciles=Counter(
            m.create_counter(
                "lowtide.reconciles",
                unit="{reconcile}",
                description="Creates of unknown outcome reconciled, by outcome.",
            )
        ),
    )
