"""What a provider's rate-limit headers say, in lowtide's words: for requests, input tokens and output tokens per
minute (or tokens of both kinds, where the API counts them together), the limit, what remains, and when the
budget is full again. Each provider reads its own headers into this (`anthropic-ratelimit-*`, `x-ratelimit-*`);
the live limiter learns from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Budget", "LimitListener", "LimitWatchers", "QuotaReport", "header_int", "header_number"]


@dataclass(frozen=True)
class Budget:
    limit: int
    remaining: int
    reset_at: float | None = None
    """Seconds since the epoch when the budget is full again, if the API said."""


@dataclass(frozen=True)
class QuotaReport:
    requests: Budget | None = None
    input_tokens: Budget | None = None
    output_tokens: Budget | None = None
    tokens: Budget | None = None
    """Input and output together, where the API counts them as one (OpenAI)."""
    retry_after: float | None = None
    """Seconds the API asked to wait (with a 429)."""

    @property
    def empty(self) -> bool:
        return all(b is None for b in (self.requests, self.input_tokens, self.output_tokens, self.tokens))


LimitListener = Callable[[QuotaReport], None]


class LimitWatchers:
    """The listeners a provider tells what its rate-limit headers said (`Provider.watch_limits`)."""

    def __init__(self) -> None:
        self._listeners: list[LimitListener] = []

    def __bool__(self) -> bool:
        return bool(self._listeners)

    def add(self, listener: LimitListener) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def tell(self, report: QuotaReport) -> None:
        """Tell every listener, unless the headers said nothing of limits."""
        if report.empty and report.retry_after is None:
            return
        for listener in self._listeners:
            listener(report)


def header_int(value: str | None) -> int | None:
    """A header's whole number; None when absent or not one."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def header_number(value: str | None) -> float | None:
    """A header's number (`retry-after: 1.5`); None when absent or not one."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
