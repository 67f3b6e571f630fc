"""A go's cancels of its run's batches out (at the time limit, or a deadline's move): each batch canceled once, those
created since the last look too (a create in flight when the cancel began comes back after it)."""

from __future__ import annotations

import logging

from lowtide.batching.backend import BatchBackend
from lowtide.errors import ActorError
from lowtide.ledger.aio_roles import AsyncBatches
from lowtide.ledger.run_ledger import AsyncRunLedger

__all__ = ["Cancels"]

log = logging.getLogger(__name__)


class Cancels:
    """Cancels the batches of run `run_id` that are out, once each."""

    def __init__(self, run_id: str, runs: AsyncRunLedger, batches: AsyncBatches, backend: BatchBackend) -> None:
        self.run_id = run_id
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
