"""A person's decision on a run waiting on one (`lowtide agents approve`, `Agent.approve`): recorded in the journal
at the question's position, the run then parked so that the next resume replays to the question and reads it."""

from __future__ import annotations

import dataclasses
from typing import Any

from lowtide.agents import rules
from lowtide.agents.values import decoded, encoded, unstorable
from lowtide.core.clock import Clock, SystemClock
from lowtide.errors import ConfigurationError
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState, EntryKind, JournalEntry

__all__ = ["approve_run", "question"]


def question(store: LedgerStore, run: AgentRun) -> JournalEntry | None:
    """The question a run waiting on a person asks (its journal entry), or None when it waits on none."""
    if run.state is not AgentState.WAITING_ON_PERSON or run.awaiting is None:
        return None
    asked = [e for e in store.agent_journal.entries(run.run_id) if e.key == run.awaiting]
    return asked[0] if asked else None


def _last_decision(store: LedgerStore, run_id: str) -> str:
    decided = [e for e in store.agent_journal.entries(run_id) if e.kind is EntryKind.PERSON and e.result is not None]
    if not decided:
        return ""
    said = "approved" if decoded(decided[-1].result or "{}").get("approved") else "denied"
    return f" (its question {decided[-1].name!r} was {said})"


def approve_run(
    store: LedgerStore, run_id: str, *, deny: bool = False, result: Any = None, clock: Clock | None = None
) -> AgentRun:
    """Record a person's decision for the run waiting on one: approved (or denied, `deny`), with `result` (a JSON
    value the run's code receives). The run is then parked, for the next `lowtide agents resume` to advance. A run
    that is not waiting on a person (an unknown one, one already decided) is refused, nothing changed."""
    now = (clock or SystemClock()).now()
    journal = store.agent_journal
    run = journal.agent_run(run_id)
    if run is None:
        raise ConfigurationError(f"No agent run {run_id!r} in the ledger {store.location}.", field="run_id")
    asked = question(store, run)
    if asked is None:
        raise ConfigurationError(
            f"Agent run {run_id!r} is {run.state.value}, not waiting on a person: nothing to approve"
            f"{_last_decision(store, run_id)}.",
            field="run_id",
        )
    refused = unstorable(result, "the decision's result")
    if refused is not None:
        raise refused
    decision = encoded({"approved": not deny, "result": result})

    def decide(entry: JournalEntry) -> JournalEntry | None:
        return None if entry.done else dataclasses.replace(entry, result=decision, ended_at=now)

    recorded = journal.change_entry(run_id, asked.position, decide)
    # The run leaves waiting-on-person even when another approval recorded its decision first (that approval's
    # process may have died before this change): the decision is in the journal either way.
    journal.change_run(run_id, rules.decided(asked.key, now))
    if recorded is None:
        raise ConfigurationError(
            f"Agent run {run_id!r} already has a decision for {asked.name!r}{_last_decision(store, run_id)}: this one"
            " was not recorded.",
            field="run_id",
        )
    after = journal.agent_run(run_id)
    assert after is not None, run_id
    return after
