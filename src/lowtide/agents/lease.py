"""The lease of a run kept while its holder works on it: a step (or a live turn) that runs longer than the lease
(`rules.LEASE_SECONDS`) must not look abandoned to a process on another host, which would take the run over and
run the step a second time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from lowtide.agents import rules
from lowtide.agents.asking import ask

if TYPE_CHECKING:
    from lowtide.core.clock import Clock
    from lowtide.ledger.interface import LedgerStore

__all__ = ["RENEW_EVERY", "lease_kept"]

RENEW_EVERY = rules.LEASE_SECONDS / 3
"""Seconds between renewals: two may be missed (a slow ledger) before another host may take the run."""


async def _renewing(store: LedgerStore, run_id: str, holder: str, clock: Clock) -> None:
    journal = store.agent_journal
    while True:
        await clock.sleep(RENEW_EVERY)
        if await ask(store, lambda: journal.change_run(run_id, rules.renewed(holder, clock.now()))) is None:
            return  # no longer this process's (stopped meanwhile): the advance sees it after the step


@contextlib.asynccontextmanager
async def lease_kept(store: LedgerStore, run_id: str, holder: str | None, clock: Clock) -> AsyncGenerator[None]:
    """Renew the run's lease every `RENEW_EVERY` seconds while the body runs (nothing to renew without a holder)."""
    if holder is None:
        yield
        return
    renewer = asyncio.ensure_future(_renewing(store, run_id, holder, clock))
    try:
        yield
    finally:
        renewer.cancel()
