"""Coalescing: concurrent calls gathered for `coalesce_window` seconds and flushed as one batch, earlier when the
next request would cross the batch limits."""

from __future__ import annotations

import asyncio

from lowtide.batching.backend import Settled
from lowtide.batching.engine.shared_state import EngineCore, Queued
from lowtide.errors import (
    ActorError,
)
from lowtide.ledger.store import (
    RequestRecord,
)

__all__ = ["Coalescing"]


class Coalescing(EngineCore):
    def _enqueue(self, record: RequestRecord) -> None:
        self._queue_entry(Queued(record.key, record.custom_id, record.params, record.params_bytes + 64, record.model))

    def _queue_entry(self, entry: Queued) -> asyncio.Future[Settled]:
        """Queue a request for the next batch (once); the future of its outcome."""
        if entry.key in self._queued_keys:
            return self._future(entry.key)
        if self._queue and (
            len(self._queue) + 1 > self.max_requests or self._queue_bytes + entry.size > self.max_bytes
        ):
            self._flush()
        self._queue.append(entry)
        self._queue_bytes += entry.size
        self._queued_keys.add(entry.key)
        if self._window is None:
            self._window = self._spawn(self._flush_after_window(self._clock.now()), waiters=self._window_failed)
        return self._future(entry.key)

    async def _flush_after_window(self, opened: float) -> None:
        await asyncio.sleep(0)  # the claims of this moment are written first
        closes = opened + self.settings.coalesce_window
        try:
            await self._clock.sleep(max(0.0, closes - self._clock.now()))
        except Exception:
            await self._under_way(closes)  # those fail with the window (`_window_failed`), as those queued do
            raise
        await self._under_way(closes)
        self._window = None
        self._flush()

    async def _under_way(self, closes: float) -> None:
        """Wait for the calls that arrived in the window closing at `closes` and are still on their way to the
        ledger (reading it first, or their claim being written): they travel in it, as the claims they lead to. A
        gathering one of them belongs to (`batching.gathering`) holds the window open until its other members have
        come too, and the window then closes as the last came."""
        while True:
            if waiting := [group for group in self._gatherings if not group.settled]:
                await asyncio.gather(*(group.wait() for group in waiting))
                closes = max(closes, self._clock.now())
            self._gatherings.clear()
            under_way = [
                *(writer for writer, came in self._claim_writes.items() if came <= closes and not writer.done()),
                *(arrival for arrival, came in self._arrivals.items() if came <= closes),
            ]
            if not under_way:
                return
            await asyncio.wait(under_way)

    def _flush(self) -> None:
        if self._window is not None and self._window is not asyncio.current_task():
            self._window.cancel()
        self._window = None
        entries, self._queue, self._queue_bytes = self._queue, [], 0
        # The calls other processes left for this scope join them (a round trip to a remote store): on the way.
        task = self._spawn(self._send_gathered(entries), waiters=[entry.key for entry in entries])
        self._track_dispatch(task, creates=False)

    async def _send_gathered(self, entries: list[Queued]) -> None:
        # A call taken back from another process's gathering may be queued here already (in `entries`, or in a
        # batch on its way): it travels there, once. Those taken are queued from here until their intent is
        # written, so that a call attaching to them meanwhile (`_enqueue`) does not queue them a second time.
        gathered = [entry for entry in await self._gathered(entries) if entry.key not in self._queued_keys]
        self._queued_keys.update(entry.key for entry in gathered)
        self._send_groups(entries + gathered)

    async def _gathered(self, entries: list[Queued]) -> list[Queued]:
        """What other processes claimed for this scope and have not sent yet, taken to travel in this batch (where
        the store gathers calls across processes): one batch where each process would have sent its own."""
        room = self.max_requests - len(entries)
        if room <= 0 or self.closed:
            return []
        now = self._clock.now()
        taken = await self.ledger.take_pending(
            self.scope,
            owner=self.owner,
            until=now + self.settings.lease_seconds,
            now=now,
            limit=room,
            max_bytes=self.max_bytes - sum(entry.size for entry in entries),
        )
        return [Queued(t.key, t.custom_id, t.params, t.params_bytes + 64, t.model) for t in taken]

    def _window_failed(self, error: ActorError) -> None:
        """The coalescing window failed: fail what it held and let the next call open a new one."""
        self._window = None
        entries, self._queue, self._queue_bytes = self._queue, [], 0
        self._queued_keys.difference_update(entry.key for entry in entries)
        self._fail([entry.key for entry in entries], error)
        self._placed()
