"""Time limits on lowtide's clock (so that the virtual clock of the tests moves them as it moves everything else)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from lowtide.core.clock import Clock

__all__ = ["finishing", "within"]

T = TypeVar("T")


async def within(clock: Clock, seconds: float | None, work: Awaitable[T], timed_out: Callable[[], Exception]) -> T:
    """`work`'s result, or `timed_out()` raised once `seconds` have passed on `clock` (`work` is then canceled)."""
    if seconds is None:
        return await work
    task: asyncio.Future[T] = asyncio.ensure_future(work)
    timer = asyncio.ensure_future(clock.sleep(max(0.0, seconds)))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            timer_won = timer.done()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        else:
            timer_won = False
        timer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await timer
    if timer_won:
        raise timed_out()
    return task.result()


async def finishing(work: Awaitable[T]) -> T:
    """`work`'s result, `work` carried to its end even when the caller is canceled meanwhile (the cancellation is
    raised once `work` has ended): for a write that must not be cut short, such as storing an answer already paid for
    on a store across the network."""
    task: asyncio.Future[T] = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({task})
        raise
