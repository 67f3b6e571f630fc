"""The typed events a live call reports to its observers, in the order they happen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lowtide.core.run_reports import RunProgress

__all__ = [
    "AttemptStarted",
    "CallFailed",
    "CallSucceeded",
    "ItemFinished",
    "LiveEvent",
    "Observer",
    "PauseEnded",
    "PauseStarted",
    "QuotaAdmitted",
    "QuotaSettled",
    "RateLimited",
    "Retried",
    "RunProgressed",
]


@dataclass(frozen=True)
class AttemptStarted:
    key: str
    attempt: int


@dataclass(frozen=True)
class Retried:
    key: str
    attempt: int
    reason: str
    """The error class that is retried: `rate_limited`, `overloaded`, `server`, `connection` or `timeout`."""
    wait: float


@dataclass(frozen=True)
class RateLimited:
    key: str
    retry_after: float | None


@dataclass(frozen=True)
class PauseStarted:
    scope: str
    until: float


@dataclass(frozen=True)
class PauseEnded:
    scope: str


@dataclass(frozen=True)
class QuotaAdmitted:
    key: str
    input_tokens: int
    """Estimated before the call."""
    output_tokens: int
    """Reserved: the call's `max_tokens`."""
    waited: float


@dataclass(frozen=True)
class QuotaSettled:
    key: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class CallSucceeded:
    key: str
    attempts: int
    cost_usd: Decimal | None


@dataclass(frozen=True)
class CallFailed:
    key: str
    attempts: int
    error: Exception


@dataclass(frozen=True)
class ItemFinished:
    """A live bulk run's item reached its end in this go, its outcome stored (after its post-processor, if any)."""

    run_id: str
    index: int
    id: str | None
    status: str
    """`succeeded`, `failed` or `not-run` (an item's `ItemStatus` value)."""
    reason: str | None


@dataclass(frozen=True)
class RunProgressed:
    """A live bulk run's progress, as `on_progress` gets it (at most five times a second, and at the start)."""

    progress: RunProgress


LiveEvent = (
    AttemptStarted
    | Retried
    | RateLimited
    | PauseStarted
    | PauseEnded
    | QuotaAdmitted
    | QuotaSettled
    | CallSucceeded
    | CallFailed
    | ItemFinished
    | RunProgressed
)
Observer = Callable[[LiveEvent], None]
