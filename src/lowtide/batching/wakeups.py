"""Wake-ups of the pollers in this process: a batch's poller sleeps until its next status check or until something
says the batch has ended (a provider's verified webhook), whichever comes first."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from functools import partial

from lowtide.config.settings import BatchSettings
from lowtide.core.clock import Clock
from lowtide.ledger.interface import AsyncLedgerStore
from lowtide.ledger.records import BatchRecord
from lowtide.ledger.webhook_records import webhook_notice

__all__ = ["WAKEUPS", "Wakeups", "sleep_or_woken", "webhook_wakes"]


class Wakeups:
    """The events the pollers of this process wait on, by ledger batch id, each with its event loop: a receiver in
    another thread or loop (`lowtide serve` runs one loop, a test may run two) wakes them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, dict[asyncio.Event, asyncio.AbstractEventLoop]] = {}

    def watch(self, batch_id: str) -> asyncio.Event:
        """An event set when `wake(batch_id)` is called (in the running event loop); `unwatch` it after."""
        event = asyncio.Event()
        with self._lock:
            self._events.setdefault(batch_id, {})[event] = asyncio.get_running_loop()
        return event

    def unwatch(self, batch_id: str, event: asyncio.Event) -> None:
        with self._lock:
            events = self._events.get(batch_id)
            if events is not None:
                events.pop(event, None)
                if not events:
                    del self._events[batch_id]

    def wake(self, batch_id: str) -> int:
        """Wake every poller of `batch_id` in this process; how many there were."""
        with self._lock:
            events = list(self._events.get(batch_id, {}).items())
        for event, loop in events:
            with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits there any more
                loop.call_soon_threadsafe(event.set)
        return len(events)


WAKEUPS = Wakeups()
"""This process's pollers, which a webhook receiver in any of its event loops wakes."""


async def sleep_or_woken(sleep: asyncio.Future[None], wakes: Sequence[asyncio.Event]) -> None:
    """Wait for `sleep` (a clock's sleep, as a future) or any of `wakes`, whichever comes first; the events are
    cleared after, so that one wake-up brings one early look."""
    if not wakes:
        await sleep
        return
    waits = [asyncio.ensure_future(event.wait()) for event in wakes]
    try:
        await asyncio.wait([sleep, *waits], return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleep.cancel()
        for wait in waits:
            wait.cancel()
        for event in wakes:
            event.clear()


@contextlib.asynccontextmanager
async def webhook_wakes(
    ledger: AsyncLedgerStore, record: BatchRecord, settings: BatchSettings, clock: Clock
) -> AsyncGenerator[list[asyncio.Event]]:
    """What wakes the poller of the batch `record` early: a webhook received in this process (`WAKEUPS`), or by any
    process of the ledger: announced in its notices (PostgreSQL, any host), else, where webhooks are expected
    (`webhook_poll_interval`), seen in the ledger at the next `watch_interval` (SQLite: a `lowtide webhooks` process
    beside this one). One recorded before the poller began (it came while the create's answer was being recorded)
    wakes it at once."""
    local = WAKEUPS.watch(record.id)
    notices = ledger.notices
    noticed = notices.watch(webhook_notice(record.id)) if notices is not None else None
    looking: asyncio.Task[None] | None = None
    try:
        if settings.webhook_poll_interval is not None and record.provider_batch_id is not None:
            seen = partial(ledger.webhook_seen, record.provider, record.provider_batch_id)
            if await seen():
                local.set()
            elif noticed is None:
                looking = asyncio.ensure_future(_look_for_webhook(seen, local, clock, settings.watch_interval))
        yield [local] if noticed is None else [local, noticed]
    finally:
        if looking is not None:
            looking.cancel()
        WAKEUPS.unwatch(record.id, local)
        if notices is not None and noticed is not None:
            notices.unwatch(webhook_notice(record.id), noticed)


async def _look_for_webhook(
    seen: Callable[[], Awaitable[bool]], event: asyncio.Event, clock: Clock, every: float
) -> None:
    """Set `event` once the ledger holds a webhook about the batch, looking every `every` seconds."""
    while not await seen():
        await clock.sleep(every)
    event.set()
