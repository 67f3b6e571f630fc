"""The typed events a live call reports to its observers, in the order they happen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

__all__ = [
    "AttemptStarted",
    "CallFailed",
    "CallSucceeded",
    "LiveEvent",
    "Observer",
    "PauseEnded",
    "PauseStarted",
    "QuotaAdmitted",
    "QuotaSettled",
    "RateLimited",
    "Retried",
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
)
Observer = Callable[[LiveEvent], None]
