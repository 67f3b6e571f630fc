"""Fewer full garbage collections while thousands of calls wait on batches.

Every full collection visits every object alive: with 100,000 calls waiting (a task, a coroutine and a future each)
and their answers arriving, Python's collector runs a dozen full passes over objects that are alive until their
answers arrive and hold no garbage. After a moment that made many long-lived objects (thousands of calls claimed, a
chunk of results stored), the engine moves what is alive out of the collector's sight (`gc.freeze`); once a batch's
results are all handed out it gives it back (`gc.unfreeze`), so that cycles made meanwhile are collected then.

Left alone: a process whose collector is off, or one that froze objects itself (`gc.freeze` before lowtide did),
from the first time lowtide sees it: counting the frozen objects (`gc.get_freeze_count`) walks every one of them, 0.13 s
with the SDKs imported and frozen, which at every actor made was most of the CPU a program making many paid.
"""

from __future__ import annotations

import gc

__all__ = ["MANY", "forget_foreign_freeze", "freeze_survivors", "thaw"]

MANY = 1000
"""Calls claimed (or results stored) at once from which freezing pays for itself."""

_frozen_here = False
_frozen_by_the_program = False
"""Seen once, kept for the process's life: the program freezes for itself, and lowtide never counts again."""


def freeze_survivors(count: int) -> None:
    """After `count` long-lived objects were made at once: keep the collector from visiting what is alive now."""
    global _frozen_here, _frozen_by_the_program
    if count < MANY or _frozen_by_the_program or not gc.isenabled():
        return
    if not _frozen_here and gc.get_freeze_count():
        _frozen_by_the_program = True
        return
    gc.freeze()
    _frozen_here = True


def forget_foreign_freeze() -> None:
    """Forget that the program was seen freezing objects itself, as a new process would (for tests that thaw them)."""
    global _frozen_by_the_program
    _frozen_by_the_program = False


def thaw() -> None:
    """Give what lowtide froze back to the collector (its oldest generation)."""
    global _frozen_here
    if _frozen_here:
        _frozen_here = False
        gc.unfreeze()
