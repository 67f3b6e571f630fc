"""`SqliteViews`: the SQLite ledger's answers to a viewer (`views.LedgerViews`), each one query over its indexes:
a run's items counted by outcome in the store, a page of batches with their results summed through `results_batch_key`,
a request's history through `batch_members_key`, `run_items_key` and `results_batch_key` (a custom id is the key
and the ledger's identity: no index on it is needed). The summaries over every result (over time, by actor, model or
provider, failures) read `results` once in order; a viewer keeps them a few seconds (`dashboard.cache`). Nothing here
writes.
"""

from __future__ import annotations

import json
from decimal import Decimal

from lowtide.ledger.records import BatchRecord, Row, batch_record
from lowtide.ledger.runs import run_record
from lowtide.ledger.sqlite.requests import RequestRows
from lowtide.ledger.sqlite.schema import REQUEST_OUTCOME, REQUEST_STATE
from lowtide.ledger.views import (
    FAILED_STATES,
    OUTCOMES,
    UNFINISHED,
    BatchLine,
    Dimension,
    FailureGroup,
    RequestHistory,
    ResultLine,
    RunProgress,
    SpendLine,
    TimePoint,
    error_group,
    item_outcome,
    key_of,
    plus,
    spend_lines,
    whole_minutes,
)

__all__ = ["SqliteViews"]

_OUTSTANDING = "('intent', 'unknown', 'waiting-on-batch', 'ended')"
_FINAL = "state <> 'pending'"
_IN_FAILED = f"({', '.join(repr(s) for s in FAILED_STATES)})"


def _money(value: float | str | None) -> Decimal:
    """A sum SQLite made of costs kept as text (a float), to the micro-cent."""
    return Decimal(str(round(float(value or 0), 8))).normalize() if value else Decimal(0)


def _point(row: Row) -> TimePoint:
    return TimePoint(
        float(row["bucket"]), int(row["n"]), int(row["failures"] or 0), _money(row["cost"]), _money(row["live"])
    )


class SqliteViews:
    """The views of one ledger file."""

    def __init__(self, ledger: RequestRows) -> None:
        self.ledger = ledger

    def run_progress(self, run_id: str) -> RunProgress | None:
        rows = self.ledger.select("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            return None
        counted = self.ledger.select(
            "SELECT status, request_state, COUNT(*) AS n, TOTAL(cost_usd) AS cost, TOTAL(live_cost_usd) AS live,"
            " TOTAL(worst_case_usd) AS worst, SUM(worst_case_usd IS NULL) AS unpriced FROM ("
            f" SELECT ri.status, {REQUEST_STATE} AS request_state, o.cost_usd, o.live_cost_usd, r.worst_case_usd"
            f" FROM run_items ri LEFT JOIN requests r ON r.key = ri.key {REQUEST_OUTCOME} WHERE ri.run_id = ?"
            ") GROUP BY status, request_state",
            (run_id,),
        )
        counts = dict.fromkeys(OUTCOMES, 0)
        spent = live = worst = Decimal(0)
        unpriced = 0
        for row in counted:
            outcome = item_outcome(row["status"], row["request_state"])
            counts[outcome] += int(row["n"])
            spent += _money(row["cost"])
            live += _money(row["live"])
            if outcome in UNFINISHED:
                worst += _money(row["worst"])
                unpriced += int(row["unpriced"])
        return RunProgress(run_record(rows[0]), counts, spent, live, worst, unpriced)

    def batch_page(self, *, limit: int, offset: int = 0) -> tuple[list[BatchLine], int]:
        rows = self.ledger.select(
            f"SELECT * FROM batches ORDER BY state IN {_OUTSTANDING} DESC,"
            f" CASE WHEN state IN {_OUTSTANDING} THEN intent_at ELSE -intent_at END, id LIMIT ? OFFSET ?",
            (limit, offset),
        )
        ((total,),) = [tuple(r) for r in self.ledger.select("SELECT COUNT(*) FROM batches")]
        lines: list[BatchLine] = []
        for row in rows:
            batch = batch_record(row)
            (summed,) = self.ledger.select(
                "SELECT COUNT(*) AS n, TOTAL(cost_usd) AS cost, TOTAL(live_cost_usd) AS live FROM results"
                " WHERE seq IN (SELECT MAX(seq) FROM results WHERE batch_id = ? GROUP BY key) AND state <> 'pending'",
                (batch.id,),
            )
            lines.append(BatchLine(batch, int(summed["n"]), _money(summed["cost"]), _money(summed["live"])))
        return lines, int(total)

    def timeline(self, bucket_seconds: float, *, run_id: str | None = None) -> list[TimePoint]:
        if run_id is None and whole_minutes(bucket_seconds):
            rows = self.ledger.select(
                "SELECT CAST(minute / ? AS INTEGER) * ? AS bucket, SUM(answers) AS n, SUM(failures) AS failures,"
                " TOTAL(cost_usd) AS cost, TOTAL(live_cost_usd) AS live FROM result_totals"
                " GROUP BY bucket ORDER BY bucket",
                (bucket_seconds, bucket_seconds),
            )
            return [_point(r) for r in rows]
        where = f"o.{_FINAL}"
        params: tuple[object, ...] = (bucket_seconds, bucket_seconds)
        source = "results o"
        if run_id is not None:
            source = "run_items ri CROSS JOIN batch_members m ON m.key = ri.key CROSS JOIN results o"
            source += " ON o.batch_id = m.batch_id AND o.key = ri.key"
            where += " AND ri.run_id = ?"
            params += (run_id,)
        rows = self.ledger.select(
            f"SELECT CAST(o.at / ? AS INTEGER) * ? AS bucket, COUNT(*) AS n,"
            f" SUM(o.state IN {_IN_FAILED}) AS failures, TOTAL(o.cost_usd) AS cost, TOTAL(o.live_cost_usd) AS live"
            f" FROM {source} WHERE {where} GROUP BY bucket ORDER BY bucket",
            params,
        )
        points = {float(r["bucket"]): _point(r) for r in rows}
        if run_id is not None:  # live answers (no batch, no membership)
            live_rows = self.ledger.select(
                f"SELECT CAST(o.at / ? AS INTEGER) * ? AS bucket, COUNT(*) AS n,"
                f" SUM(o.state IN {_IN_FAILED}) AS failures, TOTAL(o.cost_usd) AS cost, TOTAL(o.live_cost_usd) AS live"
                f" FROM run_items ri CROSS JOIN results o ON o.batch_id IS NULL AND o.key = ri.key"
                f" WHERE ri.run_id = ? AND o.{_FINAL} GROUP BY bucket",
                params,
            )
            for r in live_rows:
                point = _point(r)
                points[point.at] = plus(points[point.at], point) if point.at in points else point
        return [points[at] for at in sorted(points)]

    def spend_by(self, dimension: Dimension) -> list[SpendLine]:
        if dimension == "provider":
            query = (
                "SELECT COALESCE(b.provider, 'live') AS name, SUM(t.answers) AS n, TOTAL(t.cost_usd) AS cost,"
                " TOTAL(t.live_cost_usd) AS live, SUM(t.failures) AS failed"
                " FROM result_totals t LEFT JOIN batches b ON b.id = t.batch_id"
                " GROUP BY name"
            )
        else:
            column = {"actor": "actor", "model": "model"}[dimension]
            query = (
                f"SELECT {column} AS name, SUM(answers) AS n, TOTAL(cost_usd) AS cost, TOTAL(live_cost_usd) AS live,"
                f" SUM(failures) AS failed FROM result_totals GROUP BY name"
            )
        rows = self.ledger.select(query)
        return spend_lines((r["name"], r["n"], _money(r["cost"]), _money(r["live"]), r["failed"] or 0) for r in rows)

    def failure_groups(self, *, limit: int = 50) -> list[FailureGroup]:
        rows = self.ledger.select(
            "SELECT json_extract(error, '$.class') AS class,"
            " COALESCE(json_extract(error, '$.error_type'), json_extract(error, '$.kind'), state) AS type,"
            " state, COUNT(*) AS n, MAX(seq) AS example FROM results"
            f" WHERE state IN {_IN_FAILED} GROUP BY class, type ORDER BY n DESC, class, type LIMIT ?",
            (limit,),
        )
        groups: list[FailureGroup] = []
        for row in rows:
            (example,) = self.ledger.select("SELECT key, error, state FROM results WHERE seq = ?", (row["example"],))
            error_class, error_type, message = error_group(example["error"], example["state"])
            runs = self.ledger.select("SELECT DISTINCT run_id FROM run_items WHERE key = ?", (example["key"],))
            groups.append(
                FailureGroup(
                    row["class"] or error_class,
                    row["type"] or error_type,
                    int(row["n"]),
                    str(example["key"]),
                    message,
                    tuple(str(r["run_id"]) for r in runs),
                )
            )
        return groups

    def request_history(self, key_or_custom_id: str) -> RequestHistory | None:
        record = self.ledger.request(key_or_custom_id)
        if record is None:
            key = key_of(key_or_custom_id, self.ledger.identity())
            record = self.ledger.request(key) if key is not None else None
        if record is None:
            return None
        sent = self.ledger.select(
            "SELECT b.*, m.custom_id AS sent_as FROM batch_members m JOIN batches b ON b.id = m.batch_id"
            " WHERE m.key = ? ORDER BY m.seq",
            (record.key,),
        )
        batches: list[tuple[BatchRecord, str, dict[str, str]]] = []
        for row in sent:
            steps: dict[str, str] = json.loads(row["create_steps"]) if row["create_steps"] else {}
            batches.append((batch_record(row), str(row["sent_as"]), steps))
        ids = [b.id for b, _, _ in batches]
        marks = ", ".join("?" * len(ids))
        found = self.ledger.select(
            "SELECT batch_id, state, error, cost_usd, at FROM results"
            f" WHERE key = ? AND (batch_id IS NULL OR batch_id IN ({marks})) ORDER BY seq",
            (record.key, *ids),
        )
        results = [
            ResultLine(
                r["batch_id"],
                str(r["state"]),
                json.loads(r["error"]) if r["error"] else None,
                Decimal(r["cost_usd"]) if r["cost_usd"] is not None else None,
                float(r["at"]),
            )
            for r in found
        ]
        runs = self.ledger.select("SELECT run_id, idx FROM run_items WHERE key = ? ORDER BY run_id", (record.key,))
        return RequestHistory(record, batches, results, [(str(r["run_id"]), int(r["idx"])) for r in runs])
