"""A go's cancels of its run's batches out (at the time limit, or a deadline's move): each batch canceled once, those
created since the last look too (a create in flight when the cancel began comes back after it). Each cancel lets go of
the batch's reservations against its owners' caps, audited as `lowtide cancel`'s (`SpendLedger.cancel_all`)."""

from __future__ import annotations

import logging
from typing import Protocol

from lowtide.batching.backend import BatchBackend
from lowtide.core.clock import Clock
from lowtide.core.hosts import host_id
from lowtide.errors import ActorError
from lowtide.ledger.aio_roles import AsyncBatches, AsyncSpends
from lowtide.ledger.run_ledger import AsyncRunLedger

__all__ = ["Cancels"]

log = logging.getLogger(__name__)


class _Ledger(AsyncBatches, AsyncSpends, Protocol):
    """What the cancels read and write of the ledger: the batches and their members, and spend by owner."""


class Cancels:
    """Cancels the batches of run `run_id` that are out, once each; their audits dated by `clock`, the actor's."""

    def __init__(
        self, run_id: str, runs: AsyncRunLedger, batches: _Ledger, backend: BatchBackend, clock: Clock
    ) -> None:
        self.run_id = run_id
        self.clock = clock
        self.runs = runs
        self.batches = batches
        self.backend = backend
        self.canceled: set[str] = set()
        """The provider ids of the batches this go canceled."""

    async def outstanding(self) -> None:
        """Cancel the run's batches that are out and not canceled yet; one the API refuses to cancel is logged."""
        for batch_id in await self.runs.outstanding_batches(self.run_id):
            batch = await self.batches.batch(batch_id)
            if batch is None or batch.provider_batch_id is None or batch.provider_batch_id in self.canceled:
                continue
            self.canceled.add(batch.provider_batch_id)
            try:
                await self.backend.cancel(batch.provider_batch_id)
            except ActorError as exc:
                log.warning("Run %s: could not cancel batch %s: %s", self.run_id, batch.provider_batch_id, exc)
                continue
            keys = list((await self.batches.members(batch_id)).values())
            at = self.clock.now()  # the run's clock, as every other time the run writes (virtual in tests)
            await self.batches.spending.cancel_all(batch.provider_batch_id, keys, at=at, host=host_id())
