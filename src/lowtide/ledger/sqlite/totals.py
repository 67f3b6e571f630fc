"""The SQLite ledger's sums of final results (`result_totals`: answers, failures and cost per minute, batch, actor and
model): the SQL that adds the results a statement stored, in its transaction (`add_totals`), and that migrations 9
and 10 made them with (`TOTALS`, `TOTALS_ONCE`: never edited)."""

from __future__ import annotations

import sqlite3

__all__ = ["TOTALS", "TOTALS_ONCE", "add_totals", "last_result"]

TOTALS = (
    "INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)"
    " SELECT CAST(o.at / 60 AS INTEGER) * 60 AS minute, COALESCE(o.batch_id, '') AS batch, COALESCE(r.actor, '?') AS"
    " actor, COALESCE(r.model, '?') AS model, COUNT(*), SUM(o.state IN ('failed', 'expired', 'canceled')),"
    " TOTAL(o.cost_usd), TOTAL(o.live_cost_usd) FROM results o LEFT JOIN requests r ON r.key = o.key"
    " WHERE o.seq > {after} AND o.state <> 'pending' GROUP BY minute, batch, actor, model"
    " ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = answers + excluded.answers,"
    " failures = failures + excluded.failures, cost_usd = cost_usd + excluded.cost_usd,"
    " live_cost_usd = live_cost_usd + excluded.live_cost_usd"
)
"""The results stored after `seq` {after} (SQL) added to `result_totals`: by whatever stores results, in the same
transaction (`record_outcomes`, `record_live`, a copy's `load`), and by migration 9 for the results already stored.
Part of migration 9: never edited."""

_FIRST_FINAL = (
    " AND (o.batch_id IS NULL OR NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id"
    " AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending'))"
)
"""A batch's final result counted once: a result stored again for the same (batch, key) (a collection replayed
after a crash stores what it had stored) is the same answer, paid once. A live answer has no batch: each is its own."""

TOTALS_ONCE = (
    "INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)"
    " SELECT CAST(o.at / 60 AS INTEGER) * 60 AS minute, COALESCE(o.batch_id, '') AS batch, COALESCE(r.actor, '?') AS"
    " actor, COALESCE(r.model, '?') AS model, COUNT(*), SUM(o.state IN ('failed', 'expired', 'canceled')),"
    " TOTAL(o.cost_usd), TOTAL(o.live_cost_usd) FROM results o LEFT JOIN requests r ON r.key = o.key"
    " WHERE o.seq > {after} AND o.state <> 'pending'" + _FIRST_FINAL + " GROUP BY minute, batch, actor, model"
    " ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = answers + excluded.answers,"
    " failures = failures + excluded.failures, cost_usd = cost_usd + excluded.cost_usd,"
    " live_cost_usd = live_cost_usd + excluded.live_cost_usd"
)
"""`TOTALS` counting each batch's final result once (`_FIRST_FINAL`): what the writers use since schema 10, and
migration 10's rebuild of the sums. Part of migration 10: never edited."""


def last_result(db: sqlite3.Connection) -> int:
    """The `seq` of the latest result stored (0: none yet): what `add_totals` is given before results are appended."""
    (seq,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM results").fetchone()
    return int(seq)


def add_totals(
    db: sqlite3.Connection,
    after: int,
    *,
    batch_id: str | None = None,
    at: float | None = None,
    kind: tuple[str, str] | None = None,
) -> None:
    """Add the final results stored after `after` (`last_result` before they were) to `result_totals`, in the
    transaction that stored them. Given the one batch (None: live answers) and time `at` of them all, only their
    requests' actors and models are grouped (a writer's case: a third less work than grouping by all four); given
    also the one actor and model of every member of that batch (`kind`), no request is looked up (a batch's results
    are only ever its members'), which halves the work again."""
    if at is None:
        db.execute(TOTALS_ONCE.format(after="?"), (after,))
    elif kind is None:
        db.execute(_ADD_ONE_BATCH, (int(at // 60) * 60, batch_id or "", after))
    else:
        db.execute(_ADD_ONE_KIND, (int(at // 60) * 60, batch_id or "", kind[0], kind[1], after))


_ADD_ONE_BATCH = (
    "INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)"
    " SELECT ?, ?, COALESCE(r.actor, '?') AS actor, COALESCE(r.model, '?') AS model, COUNT(*),"
    " SUM(o.state IN ('failed', 'expired', 'canceled')), TOTAL(o.cost_usd), TOTAL(o.live_cost_usd)"
    " FROM results o LEFT JOIN requests r ON r.key = o.key WHERE o.seq > ? AND o.state <> 'pending'"
    + _FIRST_FINAL
    + " GROUP BY actor, model"
    " ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = answers + excluded.answers,"
    " failures = failures + excluded.failures, cost_usd = cost_usd + excluded.cost_usd,"
    " live_cost_usd = live_cost_usd + excluded.live_cost_usd"
)

_ADD_ONE_KIND = (
    "INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)"
    " SELECT ?, ?, ?, ?, COUNT(*), SUM(o.state IN ('failed', 'expired', 'canceled')), TOTAL(o.cost_usd),"
    " TOTAL(o.live_cost_usd) FROM results o WHERE o.seq > ? AND o.state <> 'pending'"
    + _FIRST_FINAL
    + " GROUP BY o.batch_id"
    " ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = answers + excluded.answers,"
    " failures = failures + excluded.failures, cost_usd = cost_usd + excluded.cost_usd,"
    " live_cost_usd = live_cost_usd + excluded.live_cost_usd"
)
"""`_ADD_ONE_BATCH` for a batch whose members are all of one actor and model, given: no request looked up."""
