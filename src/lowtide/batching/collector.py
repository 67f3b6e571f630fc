"""Fewer full garbage collections while thousands of calls wait on batches.

Every full collection visits every object alive: with 100,000 calls waiting (a task, a coroutine and a future each)
and their answers arriving, Python's collector runs a dozen full passes over objects that are alive until their
answers arrive and hold no garbage. After a moment that made many long-lived objects (thousands of calls claimed, a
chunk of results stored), the engine moves what is alive out of the collector's sight (`gc.freeze`); once a batch's
results are all handed out it gives it back (`gc.unfreeze`), so that cycles made meanwhile are collected then.

Left alone: a process whose collector is off, or one that froze objects itself (`gc.freeze` before lowtide did).
"""

from __future__ import annotations

import gc

__all__ = ["MANY", "freeze_survivors", "thaw"]

MANY = 1000
"""Calls claimed (or results stored) at once from which freezing pays for itself."""

YOUNG = 50_000
"""The youngest generation's threshold while lowtide holds objects frozen (Python's default is 700)."""

_frozen_here = False
_thresholds: tuple[int, int, int] | None = None
"""The collector's thresholds as they were before lowtide first froze, given back by `thaw`."""


def freeze_survivors(count: int) -> None:
    """After `count` long-lived objects were made at once: keep the collector from visiting what is alive now.

    Until `thaw`, the youngest generation is collected every `YOUNG` objects rather than every 700: what the engine
    makes by the thousand (claims, results, responses) is frozen before a young collection visits it, rather than
    visited twice (young, then middle generation) and frozen after. A cycle of garbage made meanwhile waits a little
    longer for its collection."""
    global _frozen_here, _thresholds
    if count < MANY or not gc.isenabled() or (not _frozen_here and gc.get_freeze_count()):
        return
    gc.freeze()
    _frozen_here = True
    if _thresholds is None:
        _thresholds = gc.get_threshold()
        if 0 < _thresholds[0] < YOUNG:
            gc.set_threshold(YOUNG, *_thresholds[1:])


def thaw() -> None:
    """Give what lowtide froze back to the collector (its oldest generation), and its thresholds as they were."""
    global _frozen_here, _thresholds
    if _frozen_here:
        _frozen_here = False
        gc.unfreeze()
    if _thresholds is not None:
        if gc.get_threshold()[0] == YOUNG:  # (unless someone set them meanwhile)
            gc.set_threshold(*_thresholds)
        _thresholds = None
