"""Bulk runs as every store keeps them: a run (`RunRecord`), its items in input order (`NewItem` written, `ItemRow`
read back with its latest request's state, `ItemOutcome` with its stored answer or error, for writing the run's
results), and a live item's stored answer (`LiveAnswer`); a store's rows -> these records, and an item's job as every
store keeps it (`job_text`).

A run is written once, with all its items, in one transaction: a process that dies afterwards leaves a run that
`lowtide run` (the same inputs), `lowtide retry` and `lowtide status` can pick up. An item points at the request key
of its latest attempt; its outcome is that request's, except where the run decided without asking the API (not run
for the cost limit, failed at the time limit), which the item records itself. `interface.RunLedger` is what a store
offers for them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from lowtide.ledger.answer_form import stored_answer
from lowtide.ledger.records import RequestState, Row, request_state, stored_json

__all__ = [
    "ItemOutcome",
    "ItemRow",
    "ItemsApart",
    "LiveAnswer",
    "NewItem",
    "RunRecord",
    "item_outcome",
    "item_row",
    "items_apart",
    "job_text",
    "run_record",
]


@dataclass(frozen=True)
class NewItem:
    index: int
    item_id: str | None
    job: dict[str, Any] | str
    """The job, or its JSON as `stored_json` gives it."""
    key: str


@dataclass(frozen=True)
class RunRecord:
    id: str
    actor: str
    configuration: dict[str, Any]
    options: dict[str, Any]
    fingerprint: str
    item_count: int
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class ItemRow:
    """An item as the ledger has it: its latest request's state beside what the run itself decided."""

    index: int
    item_id: str | None
    job: dict[str, Any]
    key: str
    attempt: int
    status: str | None
    reason: str | None
    request_state: RequestState | None
    batch_id: str | None
    cost_usd: Decimal | None
    worst_case_usd: Decimal | None = None
    """The budget check's estimate of the latest request, while it is not final."""


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """An item as writing the run's results needs it: what the run decided, and its latest request's state with the
    answer or error stored for it (never its parameters, nor the rest of its record)."""

    index: int
    key: str
    status: str | None
    reason: str | None
    state: RequestState | None
    response: dict[str, Any] | None
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ItemsApart:
    """A chunk of a run's items as sorting it out needs them (`RunLedger.items_apart`): the items answered on their
    first attempt with nothing decided by the run (a plain success: most of a resumed run's) as their indexes and the
    sum of their costs alone, a row for every other item."""

    answered: list[int]
    """Ascending."""
    answered_cost: Decimal
    rows: list[ItemRow]
    """Without their jobs."""


@dataclass(frozen=True)
class LiveAnswer:
    """A live item's outcome as the ledger keeps it: the request row of its key (final: `succeeded` or `failed`),
    and what the run decided for the item beside it (None: the request's state says it)."""

    index: int
    key: str
    actor: str
    model: str
    params: dict[str, Any]
    state: RequestState
    response: dict[str, Any] | None
    error: dict[str, Any] | None
    cost_usd: Decimal | None
    status: str | None = None
    reason: str | None = None


def run_record(row: Row) -> RunRecord:
    """A run as a store's row of `runs` gives it."""
    return RunRecord(
        id=row["id"],
        actor=row["actor"],
        configuration=json.loads(row["configuration"]),
        options=json.loads(row["options"]),
        fingerprint=row["fingerprint"],
        item_count=int(row["item_count"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
    )


def item_row(row: Row) -> ItemRow:
    """An item as a store's row of a run's items (with its latest request's state) gives it. (Each column read once,
    the record made positionally: a resumed run sorts out 300,000 of them.)"""
    job = row["job"]
    return _item(
        row["idx"],
        row["item_id"],
        json.loads(job) if job is not None else {},
        row["key"],
        row["attempt"],
        row["status"],
        row["reason"],
        row["request_state"],
        row["batch_id"],
        row["cost_usd"],
        row["worst_case_usd"],
    )


def items_apart(rows: Iterable[Sequence[Any]]) -> ItemsApart:
    """A chunk of a run's items apart (`ItemsApart`) from a store's rows of (`idx`, `item_id`, `key`, `attempt`,
    `status`, `reason`, the request's state, batch, cost and worst case), in input order. A plain success is kept as
    its index and its cost alone: no row made for it, its columns read by place (a resumed run of 300,000 items had
    a record made for each, its columns looked up by name)."""
    answered: list[int] = []
    costs: list[Any] = []
    kept: list[ItemRow] = []
    succeeded = RequestState.SUCCEEDED.value
    for index, item_id, key, attempt, status, reason, state, batch_id, cost, worst_case in rows:
        if state == succeeded and status is None and attempt == 1:
            answered.append(int(index))
            if cost is not None:
                costs.append(cost)
            continue
        kept.append(_item(index, item_id, {}, key, attempt, status, reason, state, batch_id, cost, worst_case))
    return ItemsApart(answered, sum(map(Decimal, costs), Decimal(0)), kept)


def _item(
    index: Any,
    item_id: Any,
    job: dict[str, Any],
    key: Any,
    attempt: Any,
    status: Any,
    reason: Any,
    state: Any,
    batch_id: Any,
    cost: Any,
    worst_case: Any,
) -> ItemRow:
    """An `ItemRow` from a store's columns as they come (the state's name, the costs as text or numbers)."""
    return ItemRow(
        int(index),
        item_id,
        job,
        key,
        int(attempt),
        status,
        reason,
        request_state(state) if state is not None else None,
        batch_id,
        Decimal(cost) if cost is not None else None,
        Decimal(str(worst_case)) if worst_case is not None else None,
    )


def item_outcome(row: Row) -> ItemOutcome:
    """An item as a store's row of a run's outcomes gives it (`idx`, `key`, `status`, `reason`, and its request's
    `state`, `response` and `error`, NULL when it has none)."""
    state, response, error = row["state"], row["response"], row["error"]
    return ItemOutcome(
        index=int(row["idx"]),
        key=row["key"],
        status=row["status"],
        reason=row["reason"],
        state=request_state(state) if state is not None else None,
        response=stored_answer(response) if response else None,
        error=json.loads(error) if error else None,
    )


def job_text(item: NewItem) -> str:
    """The JSON of an item's job, as every store keeps it."""
    return item.job if isinstance(item.job, str) else stored_json(item.job)
