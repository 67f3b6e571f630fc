"""A deadline's lane: the batch settings a call routed to a batch by its deadline travels under, so that its batch holds
only calls moved at the same moment (engines are per batch settings) and is canceled at that moment (`max_wait`,
`on_timeout: cancel`). Set for the call's claim by `calls.deadline`; read by the actor when it picks its engine."""

from __future__ import annotations

import math
from contextvars import ContextVar

from lowtide.config.settings import BatchSettings, TimeoutPolicy

__all__ = ["LANE", "lane_settings"]

LANE: ContextVar[BatchSettings | None] = ContextVar("lowtide_deadline_lane", default=None)
"""The batch settings of the call being claimed in this context, when its deadline gave it a lane."""

_GRAIN = 60.0
"""A lane's wait is whole minutes, rounded down: calls made together with one deadline share it (and its batches)."""


def lane_settings(settings: BatchSettings, *, now: float, move_at: float) -> BatchSettings:
    """`settings` (the actor's) for a call whose unanswered request must move at `move_at`: its batch canceled then.
    A batch is created a coalescing window after its first call, and its wait counted from then."""
    left = move_at - now - settings.coalesce_window
    wait = math.floor(left / _GRAIN) * _GRAIN if left >= _GRAIN else max(left, 1.0)
    return settings.model_copy(update={"max_wait": wait, "on_timeout": TimeoutPolicy.CANCEL})
