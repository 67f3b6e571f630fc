"""Steps of agent_journal_store.feature: the `AgentJournal` role's calls for many runs at once, on every store."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Protocol

from _stores import open_store
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.journal import AgentJournal
from lowtide.ledger.journal_records import AgentRun, AgentState, EntryKind, JournalEntry


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    agent_journal: AgentJournal
    journaled: tuple[list[JournalEntry], list[JournalEntry | None]]
    """What the last `write_entries` answered: the intents stored, then each change's entry (None: no such entry)."""


def _journal(context: Context) -> AgentJournal:
    found = getattr(context, "agent_journal", None)
    assert found is not None, "no store: add 'Given a <store> store with the agent runs ...'"
    return found


def _intent(run_id: str, position: int, name: str = "step") -> JournalEntry:
    return JournalEntry(
        run_id=run_id, position=position, kind=EntryKind.STEP, name=name, fingerprint="f", key=f"{run_id}/{position}",
        result=None, error=None, cost_usd=None, idempotent=False, retry=False, attempts=1, started_at=1000.0,
        ended_at=None,
    )  # fmt: skip


@given('a {kind:w} store with the agent runs "{first}" and "{second}"')
def step_store_with_runs(context: Context, kind: str, first: str, second: str) -> None:
    journal = open_store(context, kind).agent_journal
    for run_id in (first, second):
        run = AgentRun(
            run_id=run_id, reference="agents:triage", input="{}", state=AgentState.RUNNING, result=None, error=None,
            cost_usd=Decimal(0), awaiting=None, holder=None, held_until=None, created_at=1000.0, updated_at=1000.0,
        )  # fmt: skip
        journal.open_run(run)
    context.agent_journal = journal


@when("the intents at a/1, a/0 and b/0 are journaled together")
def step_intents_together(context: Context) -> None:
    put, changed = _journal(context).write_entries([_intent("a", 1), _intent("a", 0), _intent("b", 0)], [])
    context.journaled = (put, changed)


@then("the store answers the intents at positions 1, 0 and 0, as journaled")
def step_intents_answered(context: Context) -> None:
    put, changed = context.journaled
    assert [(e.run_id, e.position) for e in put] == [("a", 1), ("a", 0), ("b", 0)], put
    assert put == [_intent("a", 1), _intent("a", 0), _intent("b", 0)], put
    assert changed == [], changed


@when('the intent at a/0 named "other" is journaled together with the results "ok" at a/1 and at c/0')
def step_intent_and_results(context: Context) -> None:
    def ok(entry: JournalEntry) -> JournalEntry:
        return replace(entry, result='"ok"', ended_at=1010.0)

    context.journaled = _journal(context).write_entries([_intent("a", 0, "other")], [("a", 1, ok), ("c", 0, ok)])


@then('the store answers the intent at a/0 named "step", the one it holds')
def step_taken_intent(context: Context) -> None:
    put, _ = context.journaled
    assert put == [_intent("a", 0)], put


@then('the result at a/1 is "ok", and nothing was changed at c/0')
def step_results_answered(context: Context) -> None:
    _, changed = context.journaled
    assert changed == [replace(_intent("a", 1), result='"ok"', ended_at=1010.0), None], changed
    assert _journal(context).entries("a")[1].result == '"ok"'


@then("the journals of a, b and c read together hold positions 0 and 1, position 0, and nothing")
def step_journals_together(context: Context) -> None:
    found = _journal(context).entries_of(["a", "b", "c"])
    assert {run_id: [e.position for e in entries] for run_id, entries in found.items()} == {
        "a": [0, 1],
        "b": [0],
        "c": [],
    }, found
    assert found["a"] == _journal(context).entries("a"), found


@then("the runs of a, c and a read together are a alone")
def step_runs_together(context: Context) -> None:
    found = _journal(context).runs_of(["a", "c", "a"])
    assert list(found) == ["a"], found
    assert found["a"] == _journal(context).agent_run("a"), found
