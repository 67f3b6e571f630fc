"""The dashboard's Agents page as JSON: the ledger's durable agent runs counted by state and listed (the latest
changed first), and one run's timeline: each turn and step, its batch, its cost, how long it waited
(`lowtide.agents.timeline`, which `lowtide agents show` prints)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from lowtide.agents.timeline import budget_of, run_json, timeline
from lowtide.dashboard.data import Json, money
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState

__all__ = ["RUNS_SHOWN", "agent_run_page", "agents_page"]

RUNS_SHOWN = 100
"""Runs listed, the latest changed first (every run is counted)."""


def agents_page(store: LedgerStore, now: float) -> Json:
    runs = store.agent_journal.agent_runs()
    counts = {state.value: 0 for state in AgentState}
    for run in runs:
        counts[run.state.value] += 1
    latest = sorted(runs, key=lambda r: (r.updated_at, r.run_id), reverse=True)[:RUNS_SHOWN]
    return {
        "location": store.location,
        "now": now,
        "total": len(runs),
        "counts": counts,
        "runs": [_shown(store, run, now) for run in latest],
    }


def agent_run_page(store: LedgerStore, run_id: str, now: float) -> Json | None:
    """One run and its timeline, or None when the ledger has no such run."""
    run = store.agent_journal.agent_run(run_id)
    if run is None:
        return None
    steps = timeline(store, store.agent_journal.entries(run_id), now)
    for step in steps:
        step["cost"] = None if step["cost_usd"] is None else money(Decimal(step["cost_usd"]))
    return {"location": store.location, "now": now, "run": _shown(store, run, now), "timeline": steps}


def _shown(store: LedgerStore, run: AgentRun, now: float) -> dict[str, Any]:
    """The run as `lowtide agents list --json` gives it, with its cost as a person reads it and, for a run not ended,
    how long it has stood in its state."""
    return {
        **run_json(store, run),
        "cost": money(run.cost_usd),
        "budget": None if (budget := budget_of(run)) is None else money(Decimal(budget)),
        "for_seconds": None if run.state.ended else max(0.0, now - run.updated_at),
    }
