"""How long a provider's batches take, by this ledger's history (`ledger.batch_times`): the 90th percentile of
submitted -> ended of its last batches that ended on their own; with too few of them, a conservative default (the APIs'
own promise)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lowtide.ledger.batch_times import MIN_BATCHES, BatchKind, batch_durations
from lowtide.ledger.roles import Batches

__all__ = ["BATCH_DEFAULT_SECONDS", "BatchHistory", "batch_history", "expected"]

BATCH_DEFAULT_SECONDS = 24 * 3600.0
"""A batch's expected time with no history: the 24 hours within which the batch APIs promise to end."""
PERCENTILE = 0.9


@dataclass(frozen=True)
class BatchHistory:
    """A provider's expected batch time and what it was taken from."""

    seconds: float
    batches: int
    """How many ended batches it was taken from (0: the default)."""

    def source(self) -> str:
        """Where the figure comes from, for the dry run and messages."""
        if not self.batches:
            return "no history in this ledger: the 24 h the batch APIs promise"
        return f"90th percentile of this ledger's last {self.batches} batch(es)"


def batch_history(ledger: Batches, provider: str) -> BatchHistory:
    """`provider`'s expected batch time from `ledger`."""
    return expected(batch_durations(ledger, BatchKind(provider)))


def expected(durations: Sequence[float]) -> BatchHistory:
    """The 90th percentile (nearest rank) of `durations`, or the default with fewer than `MIN_BATCHES`."""
    if len(durations) < MIN_BATCHES:
        return BatchHistory(BATCH_DEFAULT_SECONDS, 0)
    ordered = sorted(durations)
    rank = max(1, math.ceil(PERCENTILE * len(ordered)))
    return BatchHistory(ordered[rank - 1], len(ordered))
