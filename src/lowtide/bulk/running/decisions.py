"""`Decisions`: what a run decides about its items (failed at the time limit, not run for the cost limit, an
answer that cleared an earlier decision), written to the ledger from the event loop in the order it was decided.

A decision is often made where nothing can be awaited (the callback of an answer's future), and a ledger write from
there would block the event loop. With PostgreSQL that is a deadlock, not a delay: a write of the loop's own, in a
transaction on another connection, may hold the very rows the blocking write waits for, and it can only commit when
the loop runs again. So decisions are queued as they are made and written by one task at a time, through the
ledger's awaited face: in order (a failure and the answer that clears it land as they happened), one transaction
per turn of the writer for all the decisions queued meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from lowtide.core.clock import Clock
from lowtide.ledger.run_ledger import AsyncRunLedger

__all__ = ["Decision", "Decisions"]

Decision = tuple[int, str | None, str | None]
"""An item's index, its status (None: decided by its request again) and the reason."""


class Decisions:
    """The run's item decisions, queued as they are made and written in order by one writer task."""

    def __init__(self, store: AsyncRunLedger, run_id: str, clock: Clock) -> None:
        self._store = store
        self._run_id = run_id
        self._clock = clock
        self._queued: list[Decision] = []
        self._writer: asyncio.Task[None] | None = None

    def add(self, decisions: Iterable[Decision]) -> None:
        """Queue decisions; they are written soon, after every decision queued before them."""
        self._queued.extend(decisions)
        if self._queued and (self._writer is None or self._writer.done()):
            if self._writer is not None and not self._writer.cancelled() and self._writer.exception() is not None:
                return  # a write failed: `flush` says so; nothing is written past it, out of order
            self._writer = asyncio.get_running_loop().create_task(
                self._write(), name=f"lowtide-decisions-{self._run_id}"
            )

    async def decide(self, decisions: Iterable[Decision]) -> None:
        """Queue decisions and wait until they (and every decision before them) are in the ledger."""
        self.add(decisions)
        await self.flush()

    async def flush(self) -> None:
        """Wait until every decision queued so far is in the ledger; a failed write is raised here."""
        while self._writer is not None:
            writer = self._writer
            await asyncio.shield(writer)  # one caller canceled leaves the writing to finish for the others
            if writer is self._writer and not self._queued:
                return

    async def _write(self) -> None:
        while self._queued:
            taken, self._queued = self._queued, []
            try:
                await self._store.decide(self._run_id, taken, now=self._clock.now())
            except BaseException:
                self._queued[:0] = taken  # not written: kept, in its place, for a flush to report
                raise
