"""`PostgresViews`: the PostgreSQL ledger's answers to a viewer (`views.LedgerViews`), each one query of its own: a
run's items counted by outcome in the server, a page of batches with their results summed through
`results_batch_key`, the sums over every result (over time, by actor, model or provider) from `result_totals` (kept by
a trigger as results are stored), failures grouped in the server, a request's history through its indexes. Operations
(`steps.Op`), run on the sync face; nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from lowtide.ledger.postgres.steps import BATCH, Op, Sql, run
from lowtide.ledger.records import BatchRecord, batch_record
from lowtide.ledger.runs import run_record
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
    spend_lines,
    whole_minutes,
)

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore
    from lowtide.ledger.postgres.pool import SyncPool

__all__ = ["PostgresViews"]

T = TypeVar("T")

_OUTSTANDING: LiteralString = "('intent', 'unknown', 'waiting-on-batch', 'ended')"
_FAILED: LiteralString = "('failed', 'expired', 'canceled')"
assert f"({', '.join(repr(s) for s in FAILED_STATES)})" == _FAILED


class PostgresViews:
    """The views of one PostgreSQL ledger."""

    def __init__(self, ledger: LedgerStore, pool: SyncPool) -> None:
        self.ledger = ledger
        self._pool = pool

    def _read(self, make: Callable[[], Op[T]]) -> T:
        return run(self._pool, "read the ledger", make, transaction=False)

    def run_progress(self, run_id: str) -> RunProgress | None:
        found = self._read(partial(_run_progress, run_id))
        if found is None:
            return None
        row, counted = found
        counts = dict.fromkeys(OUTCOMES, 0)
        spent = live = worst = Decimal(0)
        unpriced = 0
        for group in counted:
            outcome = item_outcome(group["status"], group["request_state"])
            counts[outcome] += int(group["n"])
            spent += group["cost"]
            live += group["live"]
            if outcome in UNFINISHED:
                worst += group["worst"]
                unpriced += int(group["unpriced"])
        return RunProgress(run_record(row), counts, spent, live, worst, unpriced)

    def batch_page(self, *, limit: int, offset: int = 0) -> tuple[list[BatchLine], int]:
        return self._read(partial(_batch_page, limit, offset))

    def timeline(self, bucket_seconds: float, *, run_id: str | None = None) -> list[TimePoint]:
        return self._read(partial(_timeline, bucket_seconds, run_id))

    def spend_by(self, dimension: Dimension) -> list[SpendLine]:
        return self._read(partial(_spend_by, dimension))

    def failure_groups(self, *, limit: int = 50) -> list[FailureGroup]:
        return self._read(partial(_failure_groups, limit))

    def request_history(self, key_or_custom_id: str) -> RequestHistory | None:
        record = self.ledger.request(key_or_custom_id)
        if record is None:
            key = key_of(key_or_custom_id, self.ledger.identity())
            record = self.ledger.request(key) if key is not None else None
        if record is None:
            return None
        sent = self._read(partial(_sent, record.key))
        batches: list[tuple[BatchRecord, str, dict[str, str]]] = []
        for batch_id, custom_id in sent:
            batch = self.ledger.batch(batch_id)
            if batch is not None:
                batches.append((batch, custom_id, self.ledger.create_steps(batch_id)))
        results = self._read(partial(_results_of, record.key, ["", *(b.id for b, _, _ in batches)]))
        runs = self._read(partial(_runs_of, record.key))
        return RequestHistory(record, batches, results, runs)


# The operations.


def _run_progress(run_id: str) -> Op[tuple[Any, list[dict[str, Any]]] | None]:
    rows = (yield Sql("SELECT * FROM runs WHERE id = %s", (run_id,))).dicts()
    if not rows:
        return None
    counted = yield Sql(
        "SELECT ri.status, r.state AS request_state, count(*) AS n, COALESCE(sum(r.cost_usd::numeric), 0) AS cost,"
        " COALESCE(sum(r.live_cost_usd::numeric), 0) AS live, COALESCE(sum(r.worst_case_usd::numeric), 0) AS worst,"
        " count(*) FILTER (WHERE r.worst_case_usd IS NULL) AS unpriced"
        " FROM run_items ri LEFT JOIN request_view r ON r.key = ri.key WHERE ri.run_id = %s GROUP BY 1, 2",
        (run_id,),
    )
    return rows[0], counted.dicts()


def _batch_page(limit: int, offset: int) -> Op[tuple[list[BatchLine], int]]:
    page = yield Sql(
        f"{BATCH} ORDER BY b.state IN {_OUTSTANDING} DESC,"
        f" CASE WHEN b.state IN {_OUTSTANDING} THEN b.intent_at ELSE -b.intent_at END, b.id LIMIT %s OFFSET %s",
        (limit, offset),
    )
    batches = [batch_record(row) for row in page.dicts()]
    total = (yield Sql("SELECT count(*) FROM batches")).one()
    summed: dict[str, tuple[int, Decimal, Decimal]] = {}
    if batches:
        # Each request's latest result in the batch, where it is final.
        reply = yield Sql(
            "SELECT batch_id, count(*), COALESCE(sum(cost_usd::numeric), 0), COALESCE(sum(live_cost_usd::numeric), 0)"
            " FROM (SELECT DISTINCT ON (batch_id, key) batch_id, state, cost_usd, live_cost_usd FROM results"
            " WHERE batch_id = ANY(%s) ORDER BY batch_id, key, seq DESC) latest"
            " WHERE state <> 'pending' GROUP BY batch_id",
            ([b.id for b in batches],),
        )
        summed = {str(r[0]): (int(r[1]), Decimal(r[2]), Decimal(r[3])) for r in reply.rows}
    lines = [BatchLine(b, *summed.get(b.id, (0, Decimal(0), Decimal(0)))) for b in batches]
    return lines, int(total[0]) if total is not None else 0


def _timeline(bucket_seconds: float, run_id: str | None) -> Op[list[TimePoint]]:
    if run_id is None and whole_minutes(bucket_seconds):
        reply = yield Sql(
            "SELECT floor(minute / %s) * %s, sum(answers), sum(failures), sum(cost_usd), sum(live_cost_usd)"
            " FROM result_totals GROUP BY 1 ORDER BY 1",
            (bucket_seconds, bucket_seconds),
        )
    else:
        reply = yield Sql(
            "SELECT floor(o.at / %(b)s) * %(b)s, count(*),"
            f" count(*) FILTER (WHERE o.state IN {_FAILED}), COALESCE(sum(o.cost_usd::numeric), 0),"
            " COALESCE(sum(o.live_cost_usd::numeric), 0) FROM results o WHERE o.state <> 'pending'"
            " AND (%(run)s::text IS NULL OR o.key IN (SELECT key FROM run_items WHERE run_id = %(run)s))"
            " GROUP BY 1 ORDER BY 1",
            {"b": bucket_seconds, "run": run_id},
        )
    return [TimePoint(float(r[0]), int(r[1]), int(r[2]), Decimal(r[3]), Decimal(r[4])) for r in reply.rows]


def _spend_by(dimension: Dimension) -> Op[list[SpendLine]]:
    if dimension == "provider":
        reply = yield Sql(
            "SELECT COALESCE(b.provider, 'live'), sum(t.answers), sum(t.cost_usd), sum(t.live_cost_usd),"
            " sum(t.failures) FROM result_totals t LEFT JOIN batches b ON b.id = t.batch_id GROUP BY 1"
        )
    elif dimension == "actor":
        reply = yield Sql(f"SELECT actor, {_SUMS} FROM result_totals GROUP BY 1")
    else:
        reply = yield Sql(f"SELECT model, {_SUMS} FROM result_totals GROUP BY 1")
    return spend_lines((str(r[0]), int(r[1]), Decimal(r[2]), Decimal(r[3]), int(r[4] or 0)) for r in reply.rows)


_SUMS = "sum(answers), sum(cost_usd), sum(live_cost_usd), sum(failures)"


def _failure_groups(limit: int) -> Op[list[FailureGroup]]:
    reply = yield Sql(
        "SELECT COALESCE(error::json->>'class', state) AS class,"
        " COALESCE(error::json->>'error_type', error::json->>'kind', state) AS type, count(*) AS n,"
        f" max(seq) AS example FROM results WHERE state IN {_FAILED}"
        " GROUP BY 1, 2 ORDER BY n DESC, class, type LIMIT %s",
        (limit,),
    )
    groups: list[FailureGroup] = []
    for error_class, error_type, n, example in reply.rows:
        row = (yield Sql("SELECT key, error, state FROM results WHERE seq = %s", (example,))).one()
        assert row is not None, "the example was read from results a moment ago, and results are never deleted"
        key, error, state = str(row[0]), row[1], str(row[2])
        _, _, message = error_group(error, state)
        runs = yield Sql("SELECT DISTINCT run_id FROM run_items WHERE key = %s ORDER BY run_id", (key,))
        groups.append(
            FailureGroup(str(error_class), str(error_type), int(n), key, message, tuple(str(r[0]) for r in runs.rows))
        )
    return groups


def _sent(key: str) -> Op[list[tuple[str, str]]]:
    reply = yield Sql(
        "SELECT m.batch_id, m.custom_id FROM batch_members m JOIN batches b ON b.id = m.batch_id"
        " WHERE m.key = %s ORDER BY b.intent_at, b.id",
        (key,),
    )
    return [(str(r[0]), str(r[1])) for r in reply.rows]


def _results_of(key: str, batch_ids: list[str]) -> Op[list[ResultLine]]:
    # By (batch, key): the index `results_batch_key` has, where a search by key alone would read every result.
    reply = yield Sql(
        "SELECT batch_id, state, error, cost_usd, at FROM results WHERE batch_id = ANY(%s) AND key = %s ORDER BY seq",
        (batch_ids, key),
    )
    return [
        ResultLine(
            str(r[0]) or None,
            str(r[1]),
            json.loads(r[2]) if r[2] else None,
            Decimal(r[3]) if r[3] is not None else None,
            float(r[4]),
        )
        for r in reply.rows
    ]


def _runs_of(key: str) -> Op[list[tuple[str, int]]]:
    reply = yield Sql("SELECT run_id, idx FROM run_items WHERE key = %s ORDER BY run_id, idx", (key,))
    return [(str(r[0]), int(r[1])) for r in reply.rows]
