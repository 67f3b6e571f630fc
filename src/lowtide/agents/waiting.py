"""Whether a run can be advanced now (its awaited answer in the ledger, or its process dead), and a look at the
batch it waits on: what `resume` and `Agent.result` both ask before advancing a run."""

from __future__ import annotations

from lowtide.agents import rules
from lowtide.calls import parking
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState

__all__ = ["advanceable_now", "answered", "collect_for"]


def answered(store: LedgerStore, run: AgentRun, now: float) -> bool:
    """Whether the run can be advanced now: parked with its awaited answer in the ledger (or awaiting nothing), or
    running with no live process holding it."""
    return bool(advanceable_now(store, [run], now))


def advanceable_now(store: LedgerStore, runs: list[AgentRun], now: float) -> list[AgentRun]:
    """Those of `runs` that can be advanced now (`answered`), their awaited requests read in one query, not one a
    run (a `resume` pass looks at every parked run of the ledger)."""
    runs = [run for run in runs if rules.advanceable(run, now)]
    awaited = [run.awaiting for run in runs if run.state is AgentState.PARKED and run.awaiting is not None]
    final = {state.key for state in store.states_of(awaited) if state.state.final} if awaited else set[str]()
    return [run for run in runs if run.state is AgentState.RUNNING or run.awaiting is None or run.awaiting in final]


async def collect_for(store: LedgerStore, run: AgentRun, *, client: object | None = None) -> None:
    """Look once at the batch the run waits on, storing its results if it has ended."""
    record = store.request(run.awaiting) if run.awaiting else None
    if record is not None and record.batch_id and not record.state.final:
        await parking.collect_ended(store, batch_ids=[record.batch_id], client=client)
