"""How long this ledger's batches took, from submission to end: the one reader that a deadline's route
(`routing.history`: a provider's batches) and adaptive polling (`batching.adaptive`: batches alike, of a provider,
endpoint and size) both take a batch's time from."""

from __future__ import annotations

from dataclasses import dataclass

from lowtide.ledger.records import BatchRecord
from lowtide.ledger.roles import Batches

__all__ = ["MIN_BATCHES", "RECENT_BATCHES", "BatchKind", "batch_durations"]

RECENT_BATCHES = 50
"""How many of the latest batches alike count: a provider's speed changes over days."""
MIN_BATCHES = 3
"""Fewer batches alike than this ended in the ledger: no history, each reader's default applies."""


@dataclass(frozen=True)
class BatchKind:
    """Which batches are alike: all of a provider's, or (`alike`) those sent to one endpoint whose request counts
    round down to the same power of two (`size`: batches within twice each other's size)."""

    provider: str
    endpoint: str | None = None
    size: int | None = None
    """The request count's bit length (a count of 0 counts as 1); None: any size."""

    @classmethod
    def alike(cls, record: BatchRecord) -> BatchKind:
        """The batches like `record`: its provider's, at its endpoint, of its size."""
        return cls(record.provider, record.endpoint, max(1, record.request_count).bit_length())

    def requests(self) -> tuple[int, int] | None:
        """The fewest and most requests a batch of this size holds (None: any)."""
        if self.size is None:
            return None
        return (0 if self.size == 1 else 1 << (self.size - 1)), (1 << self.size) - 1


def batch_durations(ledger: Batches, kind: BatchKind) -> list[float]:
    """Seconds from submission to end of the last `RECENT_BATCHES` batches of `kind` that ended on their own, newest
    first."""
    return ledger.batch_durations(kind.provider, last=RECENT_BATCHES, endpoint=kind.endpoint, requests=kind.requests())
