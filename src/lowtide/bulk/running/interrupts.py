"""Ctrl-C and SIGTERM during a live run: stop without losing what was paid for.

A live API has no idempotency key: an answer that reaches a process after it stopped listening is paid for and
lost. So the first SIGINT or SIGTERM does not cancel anything: the run stops starting calls, lets the calls in flight
finish and stores their answers, records the items it never started (`retry`, or the same command again, sends
them), and returns its result with `interrupted` naming the signal (`lowtide run` then exits 130, or 143 for
SIGTERM). A second signal cancels the calls still in flight (their answers, if any arrive, are lost: the price of not
waiting).

The handlers are installed only while a run goes, only in the main thread of an event loop that supports them, and
the ones there before are put back after.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Generator
from types import FrameType

__all__ = ["SIGNALS", "exit_status", "on_interrupt"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)

Handler = Callable[[int, FrameType | None], object] | int | None


def exit_status(name: str) -> int:
    """What a shell reports for a process ended by the signal `name`: 128 + its number (130 for SIGINT)."""
    return 128 + signal.Signals[name].value


@contextlib.contextmanager
def on_interrupt(first: Callable[[int], None], again: Callable[[int], None]) -> Generator[Callable[[], str | None]]:
    """While inside: the first SIGINT/SIGTERM calls `first(signum)`, any later one `again(signum)`. Yields a function
    that tells the name of the signal that came first (None: none). Does nothing outside the main thread."""
    received: list[int] = []

    def handle(signum: int) -> None:
        received.append(signum)
        (first if len(received) == 1 else again)(signum)

    loop = asyncio.get_running_loop()
    installed: dict[int, Handler] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            previous = signal.getsignal(signum)
            try:
                loop.add_signal_handler(signum, handle, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # no signal handlers on this loop or platform
                continue
            installed[signum] = previous
    try:
        yield lambda: signal.Signals(received[0]).name if received else None
    finally:
        for signum, previous in installed.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
