"""A cancellation a library lost, raised where lowtide next looks.

On Python 3.11, `asyncio.wait_for` returns its inner result when the outer task is cancelled in the same moment that
result arrives: the `CancelledError` is never raised, and the task goes on as if nobody had asked it to stop
(`Task.cancelling()` still counts the request). psycopg_pool waits for a connection that way, so a task cancelled
just as the pool hands it a connection runs on; a poller would then poll until its batch ended, and whatever
awaited its end (an actor's `aclose`, a program's shutdown) would wait as long.

`cancel_requests()` before such a wait and `stop_if_cancelled(since)` after it turn a lost cancellation back into
the `CancelledError` the task was asked for.
"""

from __future__ import annotations

import asyncio

__all__ = ["cancel_requests", "stop_if_cancelled"]


def cancel_requests() -> int:
    """How many times the running task has been asked to stop and has not taken it back (0 outside a task)."""
    task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


def stop_if_cancelled(since: int) -> None:
    """Raise `CancelledError` when the running task was asked to stop after `since` (`cancel_requests()` then) and
    goes on all the same: the request was lost on the way, not refused."""
    if cancel_requests() > since:
        raise asyncio.CancelledError
