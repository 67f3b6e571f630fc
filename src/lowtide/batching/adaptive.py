"""Adaptive polling (`batch.poll_schedule: adaptive`, where no webhook wakes the poll): how long this ledger's batches
of a provider, endpoint and size usually took (`ledger.batch_times`), and the status checks spaced by it: rare while
the batch's usual end is far, often around it, each sleep between a quarter of `poll_interval` and four times it."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence

from lowtide.config.settings import BatchSettings
from lowtide.ledger.batch_times import MIN_BATCHES, RECENT_BATCHES, BatchKind, batch_durations
from lowtide.ledger.records import BatchRecord
from lowtide.ledger.roles import Batches

__all__ = ["History", "Schedule", "adaptive_schedule", "poll_schedule", "usual_duration"]
_SLOWEST, _FASTEST = 4.0, 0.25
"""The longest and shortest sleep, as multiples of `poll_interval`."""
_REFRESH_SECONDS = 600.0
"""How long a history read from the ledger is used before it is read again (one read per provider, not per batch)."""

Schedule = Callable[[float], float]
"""Seconds to sleep before the next status check, given the time now (the batch's clock)."""


def usual_duration(durations: Sequence[float]) -> float | None:
    """The median of `durations` (seconds from submission to end), or None with fewer than `MIN_BATCHES`."""
    return statistics.median(durations) if len(durations) >= MIN_BATCHES else None


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


async def poll_schedule(history: History, record: BatchRecord, settings: BatchSettings) -> Schedule | None:
    """The schedule of the status checks of the batch `record`, with `poll_schedule: adaptive` and no webhooks
    expected (`webhook_poll_interval` unset); None: every `poll_interval`."""
    if settings.poll_schedule != "adaptive" or settings.webhook_poll_interval is not None:
        return None
    if record.submitted_at is None:
        return None
    return adaptive_schedule(await history.usual(record), settings.poll_interval, record.submitted_at)


class History:
    """What this ledger's batches alike took (`ledger.batch_times`: of a provider, endpoint and size), each kind read
    once per `_REFRESH_SECONDS` (of the monotonic clock: the reads' cost is real whatever the batch's clock says), and
    the batches its engine collects meanwhile (`learn`). Read in a thread, one query per kind and engine every ten
    minutes: a remote store's blocking read on the event loop stood the loop still, with the poller's own transactions
    on it unable to commit, while the store's other connections waited on their rows (a PostgreSQL ledger hung so)."""

    def __init__(self, ledger: Batches) -> None:
        self._ledger = ledger
        self._read_at: dict[BatchKind, float] = {}
        self._durations: dict[BatchKind, list[float]] = {}

    async def usual(self, record: BatchRecord) -> float | None:
        """How long batches like `record` usually took from submission to end, if enough of them ended here."""
        kind = BatchKind.alike(record)
        now = time.monotonic()
        read_at = self._read_at.get(kind)
        if read_at is None or now - read_at > _REFRESH_SECONDS:
            durations = await asyncio.to_thread(batch_durations, self._ledger, kind)
            self._durations[kind] = durations[::-1]  # oldest first, as `learn` appends
            self._read_at[kind] = now
        return usual_duration(self._durations[kind])

    def learn(self, record: BatchRecord, ended_at: float | None) -> None:
        """Count the batch `record`, which ended at `ended_at` (the API's moment), before its kind's next read."""
        seen = self._durations.get(BatchKind.alike(record))
        if seen is not None and record.submitted_at is not None and ended_at is not None:
            seen.append(max(0.0, ended_at - record.submitted_at))
            del seen[:-RECENT_BATCHES]
