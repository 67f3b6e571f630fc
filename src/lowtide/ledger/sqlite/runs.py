"""`RunStore`: the SQLite ledger's bulk runs (`interface.RunLedger`), in its `runs` and `run_items` tables.

A run is written with all its items in one transaction; an item's outcome is its latest request's, read through the
requests' outcomes (`schema.REQUEST_OUTCOME`), beside what the run decided itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from lowtide.ledger.records import answer_json, stored_json
from lowtide.ledger.runs import (
    ItemOutcome,
    ItemRow,
    ItemsApart,
    LiveAnswer,
    NewItem,
    RunRecord,
    item_outcome,
    item_row,
    items_apart,
    job_text,
    run_record,
)
from lowtide.ledger.sqlite.connection import SqliteFile
from lowtide.ledger.sqlite.schema import REQUEST_OUTCOME, REQUEST_STATE, latest_membership
from lowtide.ledger.sqlite.totals import add_totals, last_result

__all__ = ["RunStore"]

_CHUNK = 1000


class RunStore:
    """The runs of one ledger file."""

    def __init__(self, ledger: SqliteFile) -> None:
        self.ledger = ledger

    def run(self, run_id: str) -> RunRecord | None:
        rows = self.ledger.select("SELECT * FROM runs WHERE id = ?", (run_id,))
        return run_record(rows[0]) if rows else None

    def runs(self) -> list[RunRecord]:
        return [run_record(row) for row in self.ledger.select("SELECT * FROM runs ORDER BY created_at, id")]

    def create(
        self,
        run_id: str,
        *,
        actor: str,
        configuration: dict[str, Any],
        options: dict[str, Any],
        fingerprint: str,
        items: Sequence[NewItem],
        now: float,
    ) -> bool:
        """Record a new run and all its items at once; False when the run id is already taken (nothing written)."""
        with self.ledger.transaction() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO runs (id, actor, configuration, options, fingerprint, item_count,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, actor, _dumps(configuration), _dumps(options), fingerprint, len(items), now, now),
            )
            if cursor.rowcount == 0:
                return False
            for start in range(0, len(items), _CHUNK):
                db.executemany(
                    "INSERT INTO run_items (run_id, idx, item_id, job, key) VALUES (?, ?, ?, ?, ?)",
                    [(run_id, i.index, i.item_id, job_text(i), i.key) for i in items[start : start + _CHUNK]],
                )
        return True

    def update_options(self, run_id: str, options: dict[str, Any], *, now: float) -> None:
        with self.ledger.transaction() as db:
            db.execute("UPDATE runs SET options = ?, updated_at = ? WHERE id = ?", (_dumps(options), now, run_id))

    def items(self, run_id: str, *, with_jobs: bool = True, start: int = 0, stop: int | None = None) -> list[ItemRow]:
        """Every item of the run in input order (from index `start` up to `stop`), each with its latest request's
        state, batch and cost."""
        job = "ri.job" if with_jobs else "NULL AS job"
        # `request_view` spelt out: SQLite cannot flatten a view on the right of a LEFT JOIN, and would build the
        # whole view (every request of the ledger) to join a run's items to it.
        rows = self.ledger.select(
            f"SELECT ri.idx, ri.item_id, {job}, ri.key, ri.attempt, ri.status, ri.reason,"
            f" {REQUEST_STATE} AS request_state, b.id AS batch_id, o.cost_usd, r.worst_case_usd"
            f" FROM run_items ri LEFT JOIN requests r ON r.key = ri.key {REQUEST_OUTCOME} WHERE ri.run_id = ?"
            " AND ri.idx >= ? AND ri.idx < ? ORDER BY ri.idx",
            (run_id, start, stop if stop is not None else 2**62),
        )
        return [item_row(row) for row in rows]

    def items_apart(self, run_id: str, *, start: int, stop: int) -> ItemsApart:
        """The run's items from index `start` up to `stop`, the plain successes apart (`runs.ItemsApart`)."""
        rows = self.ledger.select(
            f"SELECT ri.idx, ri.item_id, ri.key, ri.attempt, ri.status, ri.reason, {REQUEST_STATE}, b.id, o.cost_usd,"
            f" r.worst_case_usd FROM run_items ri LEFT JOIN requests r ON r.key = ri.key {REQUEST_OUTCOME}"
            " WHERE ri.run_id = ? AND ri.idx >= ? AND ri.idx < ? ORDER BY ri.idx",
            (run_id, start, stop),
        )
        return items_apart(rows)

    def outcomes(self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None) -> list[ItemOutcome]:
        """The run's items from index `start` up to `stop` (of those, `only` these), in input order, with their latest
        request's state, answer and error (the joins of `items`, without the request's parameters)."""
        chosen = f" AND ri.idx IN ({', '.join('?' * len(only))})" if only is not None else ""
        rows = self.ledger.select(
            f"SELECT ri.idx, ri.key, ri.status, ri.reason, {REQUEST_STATE} AS state, o.response, o.error"
            f" FROM run_items ri LEFT JOIN requests r ON r.key = ri.key {REQUEST_OUTCOME}"
            f" WHERE ri.run_id = ? AND ri.idx >= ? AND ri.idx < ?{chosen} ORDER BY ri.idx",
            (run_id, start, stop, *(only or ())),
        )
        return [item_outcome(row) for row in rows]

    def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        """Record what the run decided for items without the API: (index, status, reason); None clears it."""
        rows = [(status, reason, run_id, index) for index, status, reason in decisions]
        with self.ledger.transaction() as db:
            for start in range(0, len(rows), _CHUNK):
                db.executemany(
                    "UPDATE run_items SET status = ?, reason = ? WHERE run_id = ? AND idx = ?",
                    rows[start : start + _CHUNK],
                )
            db.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (now, run_id))

    def new_attempts(self, run_id: str, keys: Iterable[tuple[int, str]], *, now: float) -> None:
        """Point items at the keys of a new attempt (a retry), clearing what the run decided for them."""
        rows = [(key, run_id, index) for index, key in keys]
        with self.ledger.transaction() as db:
            for start in range(0, len(rows), _CHUNK):
                db.executemany(
                    "UPDATE run_items SET key = ?, attempt = attempt + 1, status = NULL, reason = NULL"
                    " WHERE run_id = ? AND idx = ?",
                    rows[start : start + _CHUNK],
                )
            db.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (now, run_id))

    def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        """Store live answers (or final errors) under their items' keys, and the items' decisions, in one
        transaction: a run started again finds them and calls the API only for items without one. A live request
        has no batch; its cost is at live prices, so it is its own live equivalent."""
        requests: list[tuple[Any, ...]] = []
        results: list[tuple[Any, ...]] = []
        for a in answers:
            params = stored_json(a.params)
            cost = str(a.cost_usd) if a.cost_usd is not None else None
            response = answer_json(a.response) if a.response is not None else None
            error = stored_json(a.error) if a.error is not None else None
            requests.append((a.key, a.key, a.actor, a.model, params, len(params), a.state.value, now, now))
            results.append((a.key, a.state.value, response, error, cost, cost, now))
        items = [(a.status, a.reason, run_id, a.index) for a in answers]
        with self.ledger.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO requests (key, custom_id, actor, model, params, params_bytes, state, attempts,"
                " max_attempts, created_at, updated_at, left_seq) VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?,"
                f" {latest_membership('?1')})",
                requests,
            )
            # The answer is appended: the request's outcome is its latest result with no batch (`request_view`).
            before = last_result(db)
            db.executemany(
                "INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)"
                " VALUES (NULL, ?, ?, ?, ?, ?, ?, ?)",
                results,
            )
            add_totals(db, before, batch_id=None, at=now)
            self.ledger.forget_kinds()  # (a key given a live answer may have been a batch's, of another actor or model)
            db.executemany("UPDATE run_items SET status = ?, reason = ? WHERE run_id = ? AND idx = ?", items)
            db.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (now, run_id))

    def outstanding_batches(self, run_id: str) -> list[str]:
        """The ledger ids of batches still out (intent, unknown, processing, ended) holding items of the run."""
        rows = self.ledger.select(
            "SELECT DISTINCT b.id FROM run_items ri JOIN batch_members m ON m.key = ri.key"
            " JOIN batches b ON b.id = m.batch_id"
            " WHERE ri.run_id = ? AND b.state IN ('intent', 'unknown', 'waiting-on-batch', 'ended') ORDER BY b.id",
            (run_id,),
        )
        return [str(row["id"]) for row in rows]

    def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        """(ledger id, API id, state, items of this run in it) of every batch that held an item of the run."""
        # The run's items first, and each one's memberships by key (SQLite's own choice, for each batch a scan of the
        # run's items, took seconds for a run of 100,000 items).
        rows = self.ledger.select(
            "SELECT b.id, b.provider_batch_id, b.state, COUNT(*) AS n FROM run_items ri"
            " CROSS JOIN batch_members m ON m.key = ri.key CROSS JOIN batches b ON b.id = m.batch_id"
            " WHERE ri.run_id = ? GROUP BY b.id ORDER BY b.intent_at, b.id",
            (run_id,),
        )
        return [(str(r["id"]), r["provider_batch_id"], str(r["state"]), int(r["n"])) for r in rows]

    def live_cost(self, run_id: str) -> Decimal:
        rows = self.ledger.select(
            "SELECT r.live_cost_usd FROM run_items ri JOIN request_view r ON r.key = ri.key"
            " WHERE ri.run_id = ? AND r.live_cost_usd IS NOT NULL",
            (run_id,),
        )
        return sum((Decimal(row["live_cost_usd"]) for row in rows), Decimal(0))


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)
