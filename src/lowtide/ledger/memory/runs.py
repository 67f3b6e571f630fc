"""`MemoryRunStore`: the bulk runs of a `MemoryLedger`, with the semantics of the SQLite `RunStore` (`sqlite/runs.py`).

A run and its items are written at once (or not at all); an item points at the request key of its latest attempt,
and reads that request's state as the ledger derives it. Everything runs under the ledger's one lock.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from lowtide.errors import LedgerError
from lowtide.ledger.answer_form import stored_answer
from lowtide.ledger.memory.tables import MemoryTables, StoredRequest
from lowtide.ledger.records import BatchState, answer_json, stored_json
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.runs import ItemOutcome, ItemRow, ItemsApart, LiveAnswer, NewItem, RunRecord, items_apart, job_text

__all__ = ["MemoryRunStore"]

_OUTSTANDING = (BatchState.INTENT, BatchState.UNKNOWN, BatchState.WAITING, BatchState.ENDED)


@dataclass(slots=True)
class _Run:
    id: str
    actor: str
    configuration: str
    options: str
    fingerprint: str
    item_count: int
    created_at: float
    updated_at: float


@dataclass(slots=True)
class _Item:
    index: int
    item_id: str | None
    job: str
    key: str
    attempt: int = 1
    status: str | None = None
    reason: str | None = None


class MemoryRunStore:
    """The runs of one `MemoryLedger`."""

    def __init__(self, lock: threading.RLock, tables: MemoryTables) -> None:
        self._lock = lock
        self._tables = tables
        self._runs: dict[str, _Run] = {}
        self._items: dict[str, dict[int, _Item]] = {}

    # a copy's rows (`copy.py`)

    def stored_runs(self) -> list[_Run]:
        with self._lock:
            return list(self._runs.values())

    def stored_items(self) -> list[tuple[str, list[_Item]]]:
        with self._lock:
            return [(run_id, sorted(items.values(), key=lambda i: i.index)) for run_id, items in self._items.items()]

    def load_run(self, v: dict[str, Any]) -> None:
        with self._lock:
            self._runs[v["id"]] = _Run(
                v["id"], v["actor"], v["configuration"], v["options"], v["fingerprint"], int(v["item_count"]),
                float(v["created_at"]), float(v["updated_at"]),
            )  # fmt: skip
            self._items.setdefault(v["id"], {})

    def load_item(self, v: dict[str, Any]) -> None:
        with self._lock:
            self._items.setdefault(v["run_id"], {})[int(v["idx"])] = _Item(
                int(v["idx"]), v["item_id"], v["job"], v["key"], int(v["attempt"]), v["status"], v["reason"]
            )

    def run(self, run_id: str) -> RunRecord | None:
        with self._lock:
            found = self._runs.get(run_id)
            return _record(found) if found is not None else None

    def runs(self) -> list[RunRecord]:
        with self._lock:
            found = [_record(r) for r in self._runs.values()]
        return sorted(found, key=lambda r: (r.created_at, r.id))

    def create(
        self,
        run_id: str,
        *,
        actor: str,
        configuration: dict[str, object],
        options: dict[str, object],
        fingerprint: str,
        items: Sequence[NewItem],
        now: float,
    ) -> bool:
        rows: dict[int, _Item] = {}
        for i in items:
            if i.index in rows:
                raise LedgerError(f"The ledger memory could not be written: item {i.index} is twice in run {run_id}.")
            rows[i.index] = _Item(i.index, i.item_id, job_text(i), i.key)
        with self._lock:
            if run_id in self._runs:
                return False
            self._runs[run_id] = _Run(
                run_id, actor, _dumps(configuration), _dumps(options), fingerprint, len(items), now, now
            )
            self._items[run_id] = rows
        return True

    def update_options(self, run_id: str, options: dict[str, object], *, now: float) -> None:
        with self._lock:
            found = self._runs.get(run_id)
            if found is not None:
                found.options, found.updated_at = _dumps(options), now

    def items(self, run_id: str, *, with_jobs: bool = True, start: int = 0, stop: int | None = None) -> list[ItemRow]:
        t = self._tables
        rows: list[ItemRow] = []
        with self._lock:
            items = self._items.get(run_id, {})
            # The range walked by index, as `outcomes` does: sorting the whole run for each chunk of a sorted-out run
            # (`bulk.sorting`, 10,000 items a call) made a million-item run's sorting quadratic.
            end = stop if stop is not None else max(items, default=-1) + 1
            for index in range(start, end):
                i = items.get(index)
                if i is None:
                    continue
                r = t.requests.get(i.key)
                outcome = t.outcome(r) if r is not None else None
                rows.append(
                    ItemRow(
                        index=i.index,
                        item_id=i.item_id,
                        job=json.loads(i.job) if with_jobs else {},
                        key=i.key,
                        attempt=i.attempt,
                        status=i.status,
                        reason=i.reason,
                        request_state=t.view_state(r) if r is not None else None,
                        batch_id=r.batch_id if r is not None else None,
                        cost_usd=outcome.cost_usd if outcome is not None else None,
                        worst_case_usd=r.worst_case_usd if r is not None else None,
                    )
                )
        return rows

    def items_apart(self, run_id: str, *, start: int, stop: int) -> ItemsApart:
        # The rows `items` gives, told apart as every store's are (`runs.items_apart`).
        return items_apart(
            (
                row.index,
                row.item_id,
                row.key,
                row.attempt,
                row.status,
                row.reason,
                row.request_state.value if row.request_state is not None else None,
                row.batch_id,
                row.cost_usd,
                row.worst_case_usd,
            )
            for row in self.items(run_id, with_jobs=False, start=start, stop=stop)
        )

    def outcomes(self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None) -> list[ItemOutcome]:
        t = self._tables
        found: list[ItemOutcome] = []
        with self._lock:
            items = self._items.get(run_id, {})
            for index in range(start, stop) if only is None else [i for i in only if start <= i < stop]:
                i = items.get(index)
                if i is None:
                    continue
                r = t.requests.get(i.key)
                o = t.outcome(r) if r is not None else None
                found.append(
                    ItemOutcome(
                        index=i.index,
                        key=i.key,
                        status=i.status,
                        reason=i.reason,
                        state=t.view_state(r) if r is not None else None,
                        response=stored_answer(o.response) if o is not None and o.response else None,
                        error=json.loads(o.error) if o is not None and o.error else None,
                    )
                )
        return found

    def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        with self._lock:
            items = self._items.get(run_id, {})
            for index, status, reason in decisions:
                item = items.get(index)
                if item is not None:
                    item.status, item.reason = status, reason
            self._touch(run_id, now)

    def new_attempts(self, run_id: str, keys: Iterable[tuple[int, str]], *, now: float) -> None:
        with self._lock:
            items = self._items.get(run_id, {})
            for index, key in keys:
                item = items.get(index)
                if item is not None:
                    item.key, item.attempt, item.status, item.reason = key, item.attempt + 1, None, None
            self._touch(run_id, now)

    def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        """Live answers replace their keys' request rows (no batch: the answer is their latest result with none)."""
        rows = [
            (a, stored_json(a.params), answer_json(a.response) if a.response is not None else None) for a in answers
        ]
        t = self._tables
        with self._lock:
            for a, params, response in rows:
                t.requests[a.key] = StoredRequest(
                    key=a.key,
                    custom_id=a.key,
                    actor=a.actor,
                    model=a.model,
                    params=params,
                    state=a.state,
                    batch_id=None,
                    attempts=1,
                    max_attempts=1,
                    worst_case_usd=None,
                    created_at=now,
                    updated_at=now,
                    owner=None,
                    owner_until=None,
                )
                t.append(
                    None,
                    a.key,
                    a.state,
                    response=response,
                    error=stored_json(a.error) if a.error is not None else None,
                    cost_usd=a.cost_usd,
                    live_cost_usd=a.cost_usd,  # at live prices: its own live equivalent
                    at=now,
                )
            items = self._items.get(run_id, {})
            for a in answers:
                item = items.get(a.index)
                if item is not None:
                    item.status, item.reason = a.status, a.reason
            self._touch(run_id, now)

    def outstanding_batches(self, run_id: str) -> list[str]:
        t = self._tables
        with self._lock:
            found = {
                batch_id
                for item in self._items.get(run_id, {}).values()
                for batch_id in t.batches_of_key.get(item.key, ())
                if t.batches[batch_id].state in _OUTSTANDING
            }
        return sorted(found)

    def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        t = self._tables
        counts: dict[str, int] = {}
        with self._lock:
            for item in self._items.get(run_id, {}).values():
                for batch_id in t.batches_of_key.get(item.key, ()):
                    counts[batch_id] = counts.get(batch_id, 0) + 1
            held = sorted((t.batches[b] for b in counts), key=lambda b: (b.intent_at, b.id))
            return [(b.id, b.provider_batch_id, b.state.value, counts[b.id]) for b in held]

    def live_cost(self, run_id: str) -> Decimal:
        t = self._tables
        total = Decimal(0)
        with self._lock:
            for item in self._items.get(run_id, {}).values():
                r = t.requests.get(item.key)
                outcome = t.outcome(r) if r is not None else None
                if outcome is not None and outcome.live_cost_usd is not None:
                    total += outcome.live_cost_usd
        return total

    def _touch(self, run_id: str, now: float) -> None:
        found = self._runs.get(run_id)
        if found is not None:
            found.updated_at = now


def _record(r: _Run) -> RunRecord:
    return RunRecord(
        id=r.id,
        actor=r.actor,
        configuration=json.loads(r.configuration),
        options=json.loads(r.options),
        fingerprint=r.fingerprint,
        item_count=r.item_count,
        created_at=r.created_at,
        updated_at=r.updated_at,
    )


def _dumps(value: object) -> str:
    """JSON as `runs.py` stores a run's settings and inputs (what does not round-trip reads back as the SQLite
    store's does)."""
    return json.dumps(value, separators=(",", ":"), default=str)


_IMPLEMENTS: type[RunLedger] = MemoryRunStore
"""The type checker's proof that `MemoryRunStore` is a `RunLedger`."""
