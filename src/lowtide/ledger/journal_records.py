"""What the ledger holds of durable agent runs (`lowtide.agents`), whichever store keeps it: a run (`AgentRun`: its
agent's reference, input, state, cost, the key it waits on, the lease of the process advancing it) and its journal
(`JournalEntry`: each model turn and step, its intent before and its result or error after), as rows in a fixed
column order that every store writes and reads back alike."""

from __future__ import annotations

from dataclasses import dataclass, fields
from decimal import Decimal
from enum import StrEnum
from typing import Any

__all__ = [
    "ENTRY_COLUMNS",
    "RUN_COLUMNS",
    "AgentRun",
    "AgentState",
    "EntryKind",
    "JournalEntry",
    "entry_of",
    "entry_row",
    "run_of",
    "run_row",
]


class AgentState(StrEnum):
    RUNNING = "running"
    """Advanced by a process now (or by one that died: its lease tells)."""
    PARKED = "parked"
    """Waiting on a model turn's batch (`AgentRun.awaiting`); no process holds it."""
    WAITING_ON_PERSON = "waiting-on-person"
    IN_DOUBT = "in-doubt"
    """A step's intent is journaled without its result (its process died inside it) and it may not run twice."""
    FINISHED = "finished"
    FAILED = "failed"
    STOPPED = "stopped"

    @property
    def ended(self) -> bool:
        return self in (AgentState.FINISHED, AgentState.FAILED, AgentState.STOPPED)


class EntryKind(StrEnum):
    TURN = "turn"
    STEP = "step"


@dataclass(frozen=True, slots=True)
class AgentRun:
    """One durable agent run, as the ledger keeps it."""

    run_id: str
    reference: str
    """The agent as `module:qualname`, so that any process can import it again."""
    input: str
    """The agent's arguments, JSON (`{"args": [...], "kwargs": {...}}`)."""
    state: AgentState
    result: str | None
    """The agent's return value, JSON, once finished."""
    error: str | None
    """Why it failed, stands in doubt, or could not be resumed (an import error), as a person reads it."""
    cost_usd: Decimal
    awaiting: str | None
    """The ledger key of the model turn whose answer the run waits for (parked)."""
    holder: str | None
    """The process advancing it (`batching.keys.owner_id`), while it does."""
    held_until: float | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One turn or step of a run, at its position in the run (0, 1, ...)."""

    run_id: str
    position: int
    kind: EntryKind
    name: str
    """What was asked, as a person reads it: the actor and prompt of a turn, the function of a step."""
    fingerprint: str
    """A digest of what was asked: replay that asks something else at this position has diverged."""
    key: str
    """The ledger key of a turn's request; the idempotency key a step is given (`AgentContext.step_key`)."""
    result: str | None
    """JSON, once done."""
    error: str | None
    cost_usd: Decimal | None
    idempotent: bool
    retry: bool
    """A person said to run this in-doubt step again (`lowtide agents retry`)."""
    attempts: int
    started_at: float
    ended_at: float | None

    @property
    def done(self) -> bool:
        return self.result is not None or self.error is not None


RUN_COLUMNS = tuple(f.name for f in fields(AgentRun))
ENTRY_COLUMNS = tuple(f.name for f in fields(JournalEntry))


def _decimal(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def run_row(run: AgentRun) -> tuple[Any, ...]:
    """The run as a row of `RUN_COLUMNS` (its state as text, its cost as exact text)."""
    row = [getattr(run, name) for name in RUN_COLUMNS]  # not `astuple`: it deep-copies every field
    row[RUN_COLUMNS.index("state")] = run.state.value
    row[RUN_COLUMNS.index("cost_usd")] = str(run.cost_usd)
    return tuple(row)


def run_of(row: Any) -> AgentRun:
    """A run from a row of `RUN_COLUMNS`, whichever store read it."""
    values = dict(zip(RUN_COLUMNS, tuple(row), strict=True))
    values["state"] = AgentState(values["state"])
    values["cost_usd"] = _decimal(values["cost_usd"]) or Decimal(0)
    return AgentRun(**values)


def entry_row(entry: JournalEntry) -> tuple[Any, ...]:
    row = [getattr(entry, name) for name in ENTRY_COLUMNS]
    row[ENTRY_COLUMNS.index("kind")] = entry.kind.value
    row[ENTRY_COLUMNS.index("cost_usd")] = None if entry.cost_usd is None else str(entry.cost_usd)
    row[ENTRY_COLUMNS.index("idempotent")] = int(entry.idempotent)
    row[ENTRY_COLUMNS.index("retry")] = int(entry.retry)
    return tuple(row)


def entry_of(row: Any) -> JournalEntry:
    values = dict(zip(ENTRY_COLUMNS, tuple(row), strict=True))
    values["kind"] = EntryKind(values["kind"])
    values["cost_usd"] = _decimal(values["cost_usd"])
    values["idempotent"] = bool(values["idempotent"])
    values["retry"] = bool(values["retry"])
    return JournalEntry(**values)
