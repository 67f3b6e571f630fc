"""Time as an injectable dependency, so that polling and waiting can be tested without sleeping.

Production code takes a `Clock`; tests hand the provider and the emulator one shared `ManualClock`,
whose `sleep` moves virtual time forward at once, or a `VirtualClock`, on which concurrent waits overlap as real
ones do (what rate limits, pauses and deadlines need).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import selectors
import socket
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "SystemClock", "VirtualClock"]


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


class _VirtualTime:
    """A time of its own, moved forward by `advance`; `sleeps` records how long each wait was."""

    def __init__(self, start: float) -> None:
        self._now = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time cannot move backwards")
        self._now += seconds


class ManualClock(_VirtualTime):
    """Virtual time: `sleep` advances `now` instantly and records how long each wait was.

    `settle` is how many turns of the event loop a sleep first gives the other tasks, so that work that takes no
    time (a call to an in-process API, a ledger write) is done before time moves on: with 0, a task that only
    sleeps (a deadline's timer, say) races through virtual time while another waits for an answer.
    """

    def __init__(self, start: float = 1_800_000_000.0, *, settle: int = 0) -> None:
        super().__init__(start)
        self.settle = settle

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        for _ in range(self.settle):
            await asyncio.sleep(0)
        self.advance(max(0.0, seconds))
        # Yield once so that other tasks sharing this clock can observe the new time.
        await asyncio.sleep(0)


class VirtualClock(_VirtualTime):
    """Virtual time in which concurrent waits overlap: time moves only when every task of the event loop waits,
    and then straight to the earliest wake-up; everything due then wakes together.

    For work that waits only on the event loop (the emulator in process, the clock itself): a wait on a thread looks
    idle from here, and time would move on without it. So would a wait on a socket, unless `wait_for_io`: then time
    stands still while the loop waits on any file descriptor (a database across the network answering in real
    time), so that real I/O takes no virtual time. Only for loops with no socket that waits for good (a listening
    server).
    """

    _IDLE_TURNS = 3
    """Turns of the loop in a row with nothing ready before time moves (work that only yields, as the in-process
    transport does, shows as ready on every turn)."""

    def __init__(self, start: float = 1_800_000_000.0, *, wait_for_io: bool = False) -> None:
        super().__init__(start)
        self.wait_for_io = wait_for_io
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._driver: asyncio.Task[None] | None = None

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._sleepers, (self._now + max(0.0, seconds), next(self._order), woken))
        if self._driver is None or self._driver.done():
            self._driver = loop.create_task(self._drive(), name="lowtide-virtual-clock")
        await woken

    async def _drive(self) -> None:
        loop = asyncio.get_running_loop()
        while self._sleepers:
            idle = 0
            while idle < self._IDLE_TURNS:
                if self.wait_for_io and _waiting_on_io(loop):
                    idle = 0
                    await asyncio.sleep(0.0005)  # real time: the answer comes from outside the loop
                    continue
                await asyncio.sleep(0)
                idle = idle + 1 if _nothing_ready(loop) else 0
            due = self._sleepers[0][0]
            self._now = max(self._now, due)
            while self._sleepers and self._sleepers[0][0] <= self._now:
                _, _, woken = heapq.heappop(self._sleepers)
                if not woken.done():  # a canceled sleep leaves a canceled future
                    woken.set_result(None)


def _nothing_ready(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether no callback waits to run in `loop` but the caller's. asyncio keeps its ready queue private; the
    standard event loops all have it."""
    ready = getattr(loop, "_ready", None)
    return ready is None or len(ready) == 0


def _waiting_on_io(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` waits on a file descriptor other than its own wake-up pipe. The selector event loops keep
    their selector and that pipe private."""
    selector = getattr(loop, "_selector", None)
    if not isinstance(selector, selectors.BaseSelector):
        return False
    own = getattr(loop, "_ssock", None)
    own_fd = own.fileno() if isinstance(own, socket.socket) else -1
    return any(fd != own_fd for fd in selector.get_map())
