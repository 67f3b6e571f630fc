"""What a provider's rate-limit headers say, in lowtide's words: for requests, input tokens and output tokens per
minute (or tokens of both kinds, where the API counts them together), the limit, what remains, and when the
budget is full again. Each provider reads its own headers into this (`anthropic-ratelimit-*`, `x-ratelimit-*`);
the live limiter learns from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Budget", "LimitListener", "QuotaReport"]


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
