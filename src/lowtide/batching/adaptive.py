"""Adaptive polling (`batch.poll_schedule: adaptive`, where no webhook wakes the poll): how long this ledger's batches
of a provider, endpoint and size usually took, and the status checks spaced by it: rare while the batch's usual end
is far, often around it, each sleep between a quarter of `poll_interval` and four times it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lowtide.config.settings import BatchSettings
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import BatchRecord, BatchState

__all__ = ["HISTORY", "MIN_SAMPLES", "History", "Schedule", "adaptive_schedule", "poll_schedule", "usual_duration"]

MIN_SAMPLES = 3
"""Batches alike that must have ended in this ledger before their durations are believed."""
HISTORY = 50
"""The latest batches alike whose durations count: a provider's speed changes over days."""
_SLOWEST, _FASTEST = 4.0, 0.25
"""The longest and shortest sleep, as multiples of `poll_interval`."""
_REFRESH_SECONDS = 600.0
"""How long a history read from the ledger is used before it is read again (one read per provider, not per batch)."""

Schedule = Callable[[float], float]
"""Seconds to sleep before the next status check, given the time now (the batch's clock)."""


def usual_duration(durations: Sequence[float]) -> float | None:
    """The median of `durations` (seconds from submission to end), or None with fewer than `MIN_SAMPLES`."""
    return statistics.median(durations) if len(durations) >= MIN_SAMPLES else None


def adaptive_schedule(usual: float | None, poll_interval: float, submitted_at: float) -> Schedule:
    """The sleeps of a batch submitted at `submitted_at` whose likes usually end `usual` seconds after submission:
    before a window of one `poll_interval` either side of that end, sleeps of up to four `poll_interval` that stop at
    the window; inside it, a quarter of `poll_interval`; after it (a batch slower than usual), `poll_interval`.
    Without a usual end, every `poll_interval`, as fixed polling."""
    if usual is None:
        return lambda _now: poll_interval
    opens, closes = usual - poll_interval, usual + poll_interval

    def sleep_for(now: float) -> float:
        elapsed = now - submitted_at
        if elapsed < opens:
            return max(_FASTEST * poll_interval, min(_SLOWEST * poll_interval, opens - elapsed))
        if elapsed < closes:
            return _FASTEST * poll_interval
        return poll_interval

    return sleep_for


@dataclass(frozen=True)
class _Kind:
    provider: str
    endpoint: str
    size: int
    """The batch's request count rounded down to a power of two: batches within twice each other's size are alike."""


def _kind(record: BatchRecord) -> _Kind:
    return _Kind(record.provider, record.endpoint, max(1, record.request_count).bit_length())


async def poll_schedule(history: History, record: BatchRecord, settings: BatchSettings) -> Schedule | None:
    """The schedule of the status checks of the batch `record`, with `poll_schedule: adaptive` and no webhooks
    expected (`webhook_poll_interval` unset); None: every `poll_interval`."""
    if settings.poll_schedule != "adaptive" or settings.webhook_poll_interval is not None:
        return None
    if record.submitted_at is None:
        return None
    return adaptive_schedule(await history.usual(record), settings.poll_interval, record.submitted_at)


class History:
    """What this ledger's collected batches took, by provider, endpoint and size, read once per `_REFRESH_SECONDS`
    (of the monotonic clock: the reads' cost is real whatever the batch's clock says), and the batches its engine
    collects meanwhile (`learn`). Read inline: one query per engine every ten minutes, not a thread per read."""

    def __init__(self, ledger: LedgerStore) -> None:
        self._ledger = ledger
        self._read_at: float | None = None
        self._durations: dict[_Kind, list[float]] = {}

    async def usual(self, record: BatchRecord) -> float | None:
        """How long batches like `record` usually took from submission to end, if enough of them ended here."""
        now = time.monotonic()
        if self._read_at is None or now - self._read_at > _REFRESH_SECONDS:
            self._durations = await self._read()
            self._read_at = now
        return usual_duration(self._durations.get(_kind(record), []))

    def learn(self, record: BatchRecord, ended_at: float | None) -> None:
        """Count the batch `record`, which ended at `ended_at` (the API's moment), before the next read."""
        if self._read_at is not None and record.submitted_at is not None and ended_at is not None:
            seen = self._durations.setdefault(_kind(record), [])
            seen.append(ended_at - record.submitted_at)
            del seen[:-HISTORY]

    async def _read(self) -> dict[_Kind, list[float]]:
        ended = self._ledger.batches(states=[BatchState.COLLECTED])
        ended.sort(key=lambda batch: batch.submitted_at or 0.0)
        durations: dict[_Kind, list[float]] = {}
        for batch in ended:
            if batch.submitted_at is not None and batch.ended_at is not None and batch.ended_at >= batch.submitted_at:
                durations.setdefault(_kind(batch), []).append(batch.ended_at - batch.submitted_at)
        return {kind: seen[-HISTORY:] for kind, seen in durations.items()}
