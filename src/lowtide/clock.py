"""Time as an injectable dependency, so that polling and waiting can be tested without sleeping.

Production code takes a `Clock`; tests hand the provider and the emulator one shared `ManualClock`,
whose `sleep` moves virtual time forward at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Wall time in seconds since the epoch, and a way to wait."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock: `time.time()` and `asyncio.sleep`."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ManualClock:
    """Virtual time: `sleep` advances `now` instantly and records how long each wait was.

    `settle` is how many turns of the event loop a sleep first gives the other tasks, so that work that takes no
    time (a call to an in-process API, a ledger write) is done before time moves on: with 0, a task that only
    sleeps (a deadline's timer, say) races through virtual time while another waits for an answer.
    """

    def __init__(self, start: float = 1_800_000_000.0, *, settle: int = 0) -> None:
        self._now = start
        self.sleeps: list[float] = []
        self.settle = settle

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time cannot move backwards")
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        for _ in range(self.settle):
            await asyncio.sleep(0)
        self.advance(max(0.0, seconds))
        # Yield once so that other tasks sharing this clock can observe the new time.
        await asyncio.sleep(0)
