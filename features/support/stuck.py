"""A scenario that runs too long is stuck: say where, then end the process.

Too long is counted in the machine's time, not the wall's: on a machine with more runnable work than cores (the load
average over the core count), each real second counts for that fraction of one. A scenario starved of CPU by
everything else a loaded machine runs (the 100,000-request scenario under coverage at a load of 18 took over 600 real
seconds) is not stuck; one that waits on what nothing will settle is, on a quiet machine and a busy one alike.

A watcher thread prints the stack of every task of every running event loop (a loop that only waits, in `select`,
shows nothing else: which `await` waits on what), then every thread's, and ends the process. `faulthandler` does the
same, without the tasks, at `_HARD` times the seconds of wall time: it needs no Python thread to run, so a hang that
holds the interpreter's lock is ended too.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import os
import sys
import threading
import time
from typing import TextIO

__all__ = ["Stuck"]

_HARD = 6.0
"""`faulthandler`'s deadline, in wall seconds, as a multiple of the scenario's seconds."""

_TICK = 1.0
"""How often, in wall seconds, the watcher counts the scenario's time."""


def _busyness() -> float:
    """How many times over the machine's cores are asked for: the last minute's load average a core, at least 1."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # no load average on this system: the wall's time
        return 1.0


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
    """Arm before a scenario, disarm after: past `seconds` of the machine's time (see the module), every running event
    loop's tasks and every thread's stack are printed, and the process exits."""

    def __init__(self, default_seconds: float = 600.0) -> None:
        self.seconds = float(os.environ.get("LOWTIDE_STUCK_SECONDS", default_seconds))
        self._stop: threading.Event | None = None

    def arm(self) -> None:
        self.disarm()
        faulthandler.dump_traceback_later(self.seconds * _HARD, exit=True, file=_out())
        stop = self._stop = threading.Event()
        threading.Thread(target=self._watch, args=(stop,), name="lowtide-stuck", daemon=True).start()

    def disarm(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    def _watch(self, stop: threading.Event) -> None:
        began = last = time.monotonic()
        counted = 0.0
        while not stop.wait(_TICK):
            now = time.monotonic()
            counted += (now - last) / _busyness()
            last = now
            if counted >= self.seconds:
                break
        else:
            return
        out = _out()
        print(
            f"Stuck: {self.seconds:.0f} s of the machine's time ({time.monotonic() - began:.0f} s of the wall's) in one"
            " scenario: the tasks of every running event loop, then every thread",
            file=out,
        )
        print_tasks(out)
        faulthandler.dump_traceback(file=out, all_threads=True)
        out.flush()
        os._exit(70)
