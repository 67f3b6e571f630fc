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

_frozen_here = False


def freeze_survivors(count: int) -> None:
    """After `count` long-lived objects were made at once: keep the collector from visiting what is alive now."""
    global _frozen_here
    if count < MANY or not gc.isenabled() or (not _frozen_here and gc.get_freeze_count()):
        return
    gc.freeze()
    _frozen_here = True


def thaw() -> None:
    """Give what lowtide froze back to the collector (its oldest generation)."""
    global _frozen_here
    if _frozen_here:
        _frozen_here = False
        gc.unfreeze()
