"""When a run should end: a batch run at the pace its ended batches kept, counting the batches its items not yet sent
will still take (as many at once as the run allows); a live run at the rate its answers have come. Pure: the caller
gives the batches and the clock (a run's own progress from what its go has seen, the dashboard from the ledger).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_PARALLEL_BATCHES", "BatchTimes", "batch_run_eta", "live_run_eta"]

DEFAULT_PARALLEL_BATCHES = 4
"""How many batches a run keeps out at once when its options do not say (`lowtide run`'s default)."""


@dataclass(frozen=True)
class BatchTimes:
    """One batch that held items of the run, as far as its ETA needs it."""

    sent_at: float
    """When it was submitted (or, not yet submitted, when its intent was recorded)."""
    ended_at: float | None
    outstanding: bool
    """Still out at the API (not ended, or ended and not collected)."""
    items: int
    """The run's items in it."""


def batch_run_eta(
    now: float,
    batches: Sequence[BatchTimes],
    *,
    waiting: int,
    items_per_batch: int | None = None,
    parallel: int | None,
    unsent_batches: int | None = None,
) -> float | None:
    """Seconds until a batch run's last item should be answered; None while no batch of it has ended (no pace yet)
    or when nothing waits.

    The pace is the mean time from sent to ended of its ended batches. Each batch out ends at its sent time plus the
    pace (now, if that has passed or it has ended and waits to be collected); the items waiting in no batch go out in
    batches of `items_per_batch` (else the largest batch the run has sent), or in the `unsent_batches` the caller
    counted (a run splits by bytes too), each as soon as one of the `parallel` places frees, and take the pace each."""
    took = [b.ended_at - b.sent_at for b in batches if b.ended_at is not None]
    if waiting <= 0 or not took:
        return None
    pace = max(0.0, sum(took) / len(took))
    out = [b for b in batches if b.outstanding]
    unsent = max(0, waiting - sum(b.items for b in out))
    size = items_per_batch or max((b.items for b in batches), default=1)
    places = max(parallel or DEFAULT_PARALLEL_BATCHES, 1)
    ends = sorted(now if b.ended_at is not None else max(now, b.sent_at + pace) for b in out)
    last = max(ends, default=now)
    # A place frees when a batch ends with fewer than `places` out after it: with more out than that (a run resumed
    # with other settings), only the last `places` of them to end free one each.
    free = ends[-places:] if len(ends) >= places else ends + [now] * (places - len(ends))
    heapq.heapify(free)
    to_send = math.ceil(unsent / max(size, 1)) if unsent_batches is None else unsent_batches
    for _ in range(to_send):
        end = heapq.heappop(free) + pace
        last = max(last, end)
        heapq.heappush(free, end)
    return max(0.0, last - now)


def live_run_eta(now: float, *, answered_since: float | None, answered: int, waiting: int) -> float | None:
    """Seconds until a live run's last item should be answered, at the rate `answered` answers came since
    `answered_since` (the first of them); None until one has, or when nothing waits."""
    if waiting <= 0 or answered <= 0 or answered_since is None or now <= answered_since:
        return None
    return waiting * (now - answered_since) / answered
