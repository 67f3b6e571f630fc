"""How a call waits for its request's final outcome: on this process's own batch, on a batch it polls for the process
that sent it (one poller per batch across processes, by the batch's lease), or by watching the ledger while another
live process works; and how it takes over what a dead process left (a pending request, a create whose outcome is
unknown)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable

from lowtide.batching.backend import Settled
from lowtide.batching.core import EngineCore, shared_done
from lowtide.batching.keys import owner_alive
from lowtide.batching.policy import stored_outcome
from lowtide.errors import ActorError
from lowtide.ledger.store import BatchRecord, RequestRecord, RequestState

__all__ = ["Waiting"]


class Waiting(EngineCore):
    def _forward(self, source: Awaitable[Settled], future: asyncio.Future[Settled]) -> None:
        """Resolve `future` with what `source` comes to (a caller attached to work already under way)."""

        async def forward() -> None:
            try:
                outcome = await source
            except asyncio.CancelledError:  # pragma: no cover - the engine closed under a waiting caller
                future.cancel()
                raise
            except Exception as exc:
                if not future.done():
                    future.set_exception(exc)
                return
            if not future.done():
                future.set_result(outcome)

        def failed(error: ActorError) -> None:
            if not future.done():
                future.set_exception(error)

        self._spawn(forward(), waiters=failed)

    async def _final(self, record: RequestRecord) -> Settled:
        while not record.state.final:
            if record.state is RequestState.PENDING:
                if self._mine(record):
                    return await self._future(record.key)
                if record.owner == self.owner:  # this engine's, on its way nowhere (left out of an intent): queued
                    self._enqueue(record)
                    return await self._future(record.key)
                record = await self._rescue_pending(record)
                if record.owner == self.owner:
                    continue
            elif record.state is RequestState.SUBMITTING:
                batch = await self._batch(record.batch_id or "")
                if batch is not None and await self._rescue_batch(batch):
                    return await self._future(record.key)
            elif await self._poll_here(record.batch_id or ""):  # waiting on a batch the API has
                key = record.key
                if record.batch_id in self._pollers:  # its collection answers the call, however late it comes
                    del record  # not held while it waits: a resumed bulk run waits on tens of thousands (2 KB each)
                    return await self._future(key)
                record = await self._reread(key)  # collected here since it was decided: what it stored
                continue
            # Another live process is on it: watch the ledger.
            record = await self._watch(record)
        return stored_outcome(record)

    async def _poll_here(self, batch_id: str) -> bool:
        """Poll a batch the API has here, unless another live process (on any host) polls it: one poller per batch
        across processes, by the batch's lease. True when this engine polls it. The calls waiting on one batch decide
        it once, together: thousands of them finding its poller dead ask the ledger once, not each in turn."""
        if batch_id in self._pollers:
            return True
        deciding = self._poll_decisions.get(batch_id)
        if deciding is None:
            deciding = asyncio.ensure_future(self._decide_poll(batch_id))
            self._poll_decisions[batch_id] = deciding
            deciding.add_done_callback(functools.partial(shared_done, self._poll_decisions, batch_id))
        return await asyncio.shield(deciding)

    async def _decide_poll(self, batch_id: str) -> bool:
        if batch_id in self._pollers:
            return True
        batch = await self._batch(batch_id)
        now = self._clock.now()
        if batch is None or not batch.state.outstanding:
            return False  # collected since the caller read its record (by another process): read it again instead
        if batch.owner not in (None, self.owner) and owner_alive(batch.owner, batch.owner_until, now):
            return False
        dead = batch.owner if batch.owner != self.owner else None
        until = now + self.settings.lease_seconds
        if not await self.ledger.claim_batch(batch_id, owner=self.owner, until=until, now=now, dead_owner=dead):
            return False  # another process took it first: it polls, this one watches
        self._ensure_poller(batch_id)
        return True

    async def _watch(self, record: RequestRecord) -> RequestRecord:
        """Wait for another process's work on `record`, and read it again. Where the store announces changes
        (`notices`), until its batch's next announcement, or at most a quarter of the lease (its owner may have
        died); else for `watch_interval`."""
        notices = self.ledger.notices
        if notices is None or record.batch_id is None:
            await self._clock.sleep(self.settings.watch_interval)
            return await self._reread(record.key)
        event = notices.watch(record.batch_id)
        try:
            again = await self._reread(record.key)  # watched first, read then: an announcement between is not missed
            if again != record:
                return again
            woken = asyncio.ensure_future(event.wait())
            timer = asyncio.ensure_future(
                self._clock.sleep(max(self.settings.watch_interval, self.settings.lease_seconds / 4))
            )
            try:
                await asyncio.wait((woken, timer), return_when=asyncio.FIRST_COMPLETED)
            finally:
                woken.cancel()
                timer.cancel()
            return await self._reread(record.key)
        finally:
            notices.unwatch(record.batch_id, event)

    async def _rescue_pending(self, record: RequestRecord) -> RequestRecord:
        """Take over a pending request whose owner died or whose lease ran out, and queue it here."""
        taken = await self._take_abandoned(record)
        if taken is not None and taken.state is RequestState.PENDING:
            self._enqueue(taken)
            return taken
        return await self._reread(record.key)

    async def _take_abandoned(self, record: RequestRecord) -> RequestRecord | None:
        """Own a pending request whose owner died or whose lease ran out; its record now, or None if not taken."""
        now = self._clock.now()
        if owner_alive(record.owner, record.owner_until, now) and record.owner != self.owner:
            return None
        # Seen dead (or out of its lease): take it, unless another process took it first.
        dead = record.owner if record.owner != self.owner else None
        until = now + self.settings.lease_seconds
        if await self.ledger.take_over(record.key, owner=self.owner, until=until, now=now, dead_owner=dead):
            return await self._reread(record.key)
        return None

    async def _rescue_batch(self, batch: BatchRecord) -> bool:
        """Reconcile a batch whose create's outcome is unknown, unless a live process is still creating it."""
        if batch.id in self._reconciling or batch.id in self._creating:
            return True  # this process is on it: the caller waits for the outcome
        now = self._clock.now()
        if batch.owner != self.owner and owner_alive(batch.owner, batch.owner_until, now):
            return False
        if not await self.ledger.claim_batch(
            batch.id, owner=self.owner, until=now + self.settings.lease_seconds, now=now, force=True
        ):
            return False  # pragma: no cover - lost a race to another process; the caller watches the ledger
        if batch.id in self._reconciling or batch.id in self._creating:
            return True  # another call of this process took it while the lease was being taken
        self._reconciling[batch.id] = self._spawn(self._reconcile(batch.id), waiters=self._members_of(batch.id))
        return True
