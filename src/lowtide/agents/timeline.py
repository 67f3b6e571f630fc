"""Agent runs as a person reads them, for `lowtide agents list`/`show` and the dashboard's Agents page: a run's
state, cost, budget and question, and its timeline (each turn and step: its outcome, its batch, its cost, how long it
waited), as JSON."""

from __future__ import annotations

import json
from typing import Any

from lowtide.agents.approvals import question
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, EntryKind, JournalEntry

__all__ = ["budget_of", "entry_json", "entry_state", "run_json", "timeline"]


def budget_of(run: AgentRun) -> str | None:
    """The run's budget over all its turns (`Agent.start(..., max_cost_usd=...)`, kept with its input), or None."""
    budget: str | None = json.loads(run.input).get("max_cost_usd")
    return budget


def run_json(store: LedgerStore, run: AgentRun) -> dict[str, Any]:
    asked = question(store, run)
    return {
        "run_id": run.run_id, "agent": run.reference, "state": run.state.value, "cost_usd": str(run.cost_usd),
        "max_cost_usd": budget_of(run), "awaiting": run.awaiting, "question": None if asked is None else asked.name,
        "error": run.error,
        "created_at": run.created_at, "updated_at": run.updated_at,
    }  # fmt: skip


def entry_state(entry: JournalEntry) -> str:
    if entry.kind is EntryKind.PERSON:  # a question: its decision, or still waiting for one
        return "waiting" if entry.result is None else "approved" if json.loads(entry.result)["approved"] else "denied"
    return "done" if entry.result is not None else "failed" if entry.error is not None else "begun"


def entry_json(entry: JournalEntry) -> dict[str, Any]:
    return {
        "position": entry.position, "kind": entry.kind.value, "name": entry.name, "key": entry.key,
        "state": entry_state(entry), "cost_usd": None if entry.cost_usd is None else str(entry.cost_usd),
        "attempts": entry.attempts, "error": entry.error, "started_at": entry.started_at, "ended_at": entry.ended_at,
    }  # fmt: skip


def timeline(store: LedgerStore, entries: list[JournalEntry], now: float) -> list[dict[str, Any]]:
    """Each entry's JSON, with the batch its turn went in (`batch_id`, None for a step, a question, or a turn not
    yet in one: its requests read in one query) and how long it waited (`waited_seconds`: to its end, or to `now`)."""
    turns = [e.key for e in entries if e.kind is EntryKind.TURN]
    batches = {state.key: state.batch_id for state in store.states_of(turns)} if turns else {}
    return [
        {
            **entry_json(e),
            "batch_id": batches.get(e.key) if e.kind is EntryKind.TURN else None,
            "waited_seconds": max(0.0, (e.ended_at if e.ended_at is not None else now) - e.started_at),
        }
        for e in entries
    ]
