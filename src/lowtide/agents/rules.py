"""How an agent run's state may change, as pure functions of the run as stored (`AgentJournal.change_run` applies
them in one transaction): who may take the lease, and what parking, ending, stopping and retrying write."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from lowtide.batching.keys import owner_alive
from lowtide.ledger.journal import RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState

__all__ = [
    "LEASE_SECONDS",
    "advanceable",
    "decided",
    "ended",
    "lease",
    "parked",
    "released",
    "renewed",
    "stopped",
    "unblocked",
    "waiting",
]

LEASE_SECONDS = 900.0
"""How long a process holds a run it advances before another host may take it over (on the same host a dead pid
frees it at once: `owner_alive`)."""


def advanceable(run: AgentRun, now: float) -> bool:
    """Whether a resume may advance the run now: running with no live holder, or parked (its answer looked at)."""
    if run.state is AgentState.PARKED:
        return True
    return run.state is AgentState.RUNNING and not owner_alive(run.holder, run.held_until, now)


def lease(owner: str, now: float) -> RunChange:
    """Take the run to advance it: unless it has ended, waits for a person, or another live process holds it."""

    def change(run: AgentRun) -> AgentRun | None:
        if run.state not in (AgentState.RUNNING, AgentState.PARKED):
            return None
        if run.holder not in (None, owner) and owner_alive(run.holder, run.held_until, now):
            return None
        return dataclasses.replace(
            run, state=AgentState.RUNNING, holder=owner, held_until=now + LEASE_SECONDS, updated_at=now
        )

    return change


def renewed(owner: str, now: float) -> RunChange:
    """The holder, still working on the run, keeps it another `LEASE_SECONDS` (as long as it holds it)."""

    def change(run: AgentRun) -> AgentRun | None:
        if not _held(run, owner):
            return None
        return dataclasses.replace(run, held_until=now + LEASE_SECONDS)

    return change


def _held(run: AgentRun, owner: str) -> bool:
    return run.holder == owner and run.state is AgentState.RUNNING


def parked(owner: str, key: str, cost: Decimal, now: float) -> RunChange:
    def change(run: AgentRun) -> AgentRun | None:
        if not _held(run, owner):
            return None
        return dataclasses.replace(
            run, state=AgentState.PARKED, awaiting=key, cost_usd=cost, holder=None, held_until=None, updated_at=now
        )

    return change


def waiting(owner: str, key: str, cost: Decimal, now: float) -> RunChange:
    """The run asks a person (the question under `key`): no process holds it until the decision is given."""

    def change(run: AgentRun) -> AgentRun | None:
        if not _held(run, owner):
            return None
        return dataclasses.replace(
            run, state=AgentState.WAITING_ON_PERSON, awaiting=key, cost_usd=cost, holder=None, held_until=None,
            updated_at=now,
        )  # fmt: skip

    return change


def decided(key: str, now: float) -> RunChange:
    """`lowtide agents approve`: the run waiting on the question `key` is parked awaiting nothing, so that the next
    resume advances it (and its replay reads the decision from the journal)."""

    def change(run: AgentRun) -> AgentRun | None:
        if run.state is not AgentState.WAITING_ON_PERSON or run.awaiting != key:
            return None
        return dataclasses.replace(run, state=AgentState.PARKED, awaiting=None, updated_at=now)

    return change


def ended(
    owner: str, state: AgentState, cost: Decimal, now: float, *, result: str | None = None, error: str | None = None
) -> RunChange:
    """The run finished, failed or stands in doubt: written only by the process holding it (never over a stop)."""

    def change(run: AgentRun) -> AgentRun | None:
        if not _held(run, owner):
            return None
        return dataclasses.replace(
            run, state=state, result=result, error=error, cost_usd=cost, awaiting=None, holder=None, held_until=None,
            updated_at=now,
        )  # fmt: skip

    return change


def released(owner: str, now: float) -> RunChange:
    """Let the run go as it stands (stopped meanwhile, or its process ends without a verdict)."""

    def change(run: AgentRun) -> AgentRun | None:
        if run.holder != owner:
            return None
        return dataclasses.replace(run, holder=None, held_until=None, updated_at=now)

    return change


def stopped(now: float) -> RunChange:
    """`lowtide agents stop`: any run not ended stops, whoever holds it (its holder sees it after its current step)."""

    def change(run: AgentRun) -> AgentRun | None:
        if run.state.ended:
            return None
        return dataclasses.replace(run, state=AgentState.STOPPED, holder=None, held_until=None, updated_at=now)

    return change


def unblocked(now: float) -> RunChange:
    """`lowtide agents retry`: an in-doubt run may be advanced again (its step marked to run again)."""

    def change(run: AgentRun) -> AgentRun | None:
        if run.state is not AgentState.IN_DOUBT:
            return None
        return dataclasses.replace(
            run, state=AgentState.RUNNING, error=None, holder=None, held_until=None, updated_at=now
        )

    return change
