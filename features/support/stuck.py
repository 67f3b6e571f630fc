"""A scenario that runs too long is stuck: say where, then end the process.

`faulthandler` prints every thread's stack and ends the process even when an event loop is blocked, but a loop that
only waits (in `select`, nothing left to wake it) shows nothing but `select` that way. So a moment before, a timer
thread prints the stack of every task of every running event loop: which `await` waits on what nothing will settle.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import os
import sys
import threading
from typing import TextIO

__all__ = ["Stuck"]

_TASKS_FIRST = 5.0
"""Seconds before the process ends at which the tasks are printed."""


def _out() -> TextIO:
    return sys.__stderr__ or sys.stderr


def _running_loops() -> list[asyncio.AbstractEventLoop]:
    """Every event loop of the process that is running now (in any thread)."""
    return [obj for obj in gc.get_objects() if isinstance(obj, asyncio.AbstractEventLoop) and obj.is_running()]


def print_tasks(out: TextIO) -> None:
    """Each running loop's tasks with their stacks. Read from another thread: good enough to say where they wait."""
    for loop in _running_loops():
        print(f"--- event loop {loop!r}: its tasks", file=out)
        for _ in range(3):  # the set may change while it is read
            try:
                tasks = list(asyncio.all_tasks(loop))
                break
            except RuntimeError:
                continue
        else:
            tasks = []
        for task in tasks:
            print(f"--- {task!r}", file=out)
            try:
                task.print_stack(limit=40, file=out)
            except Exception as exc:  # a task ending while its stack is read
                print(f"    (its stack could not be read: {exc!r})", file=out)
    out.flush()


class Stuck:
    """Arm before a scenario, disarm after: past `seconds`, the tasks' stacks, then every thread's, then exit."""

    def __init__(self, default_seconds: float = 600.0) -> None:
        self.seconds = float(os.environ.get("LOWTIDE_STUCK_SECONDS", default_seconds))
        self._timer: threading.Timer | None = None

    def arm(self) -> None:
        self.disarm()
        faulthandler.dump_traceback_later(self.seconds, exit=True, file=_out())
        timer = threading.Timer(max(self.seconds - _TASKS_FIRST, 0.0), self._tasks)
        timer.daemon = True
        timer.start()
        self._timer = timer

    def disarm(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tasks(self) -> None:
        out = _out()
        print(f"Stuck for {self.seconds - _TASKS_FIRST:.0f} s: the tasks of every running event loop", file=out)
        print_tasks(out)
