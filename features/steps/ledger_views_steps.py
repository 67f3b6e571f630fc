"""Steps of `ledger_views.feature`: the dashboard's views (`LedgerStore.views`) of one ledger, in each store."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from decimal import Decimal
from typing import Any, Protocol, cast

from _pg_ledgers import ledger_at
from _stores import open_store, reopened
from dashboard_ledgers import PARKED_KEY, answer_waiting, build
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import COPIED, RequestState
from lowtide.ledger.runs import LiveAnswer, NewItem
from lowtide.ledger.scan_views import ScanViews
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.sqlite.totals import TOTALS
from lowtide.ledger.views import Dimension, LedgerViews

NOW = 1_700_000_000.0


class Context(StepContext, Protocol):
    views_store: LedgerStore
    views_copy: LedgerStore
    postgres_url: str


@given("a {kind:w} ledger store holding the dashboard's ledger")
def step_store(context: Context, kind: str) -> None:
    context.views_store = open_store(context, kind)
    build(context.views_store, now=NOW)


@when("the run in progress's last batch is answered")
def step_answer(context: Context) -> None:
    answer_waiting(context.views_store, now=NOW + 60)


@when("the run in progress's last batch is answered, its results stored again by a collection replayed after a crash")
def step_answer_replayed(context: Context) -> None:
    answer_waiting(context.views_store, now=NOW + 60, replayed=True)


@then(
    'the run "{run_id}" counts {succeeded:d} succeeded and {waiting:d} waiting, spent ${spent}, worst case out ${worst}'
)
def step_run(context: Context, run_id: str, succeeded: int, waiting: int, spent: str, worst: str) -> None:
    progress = context.views_store.views.run_progress(run_id)
    assert progress is not None, f"no run {run_id}"
    assert progress.counts["succeeded"] == succeeded, progress.counts
    assert progress.counts["waiting"] == waiting, progress.counts
    assert progress.spent_usd == Decimal(spent), progress.spent_usd
    assert progress.worst_case_out_usd == Decimal(worst), progress.worst_case_out_usd


@then('the run "{run_id}" counts {succeeded:d} succeeded, {failed:d} failed and {expired:d} expired')
def step_finished(context: Context, run_id: str, succeeded: int, failed: int, expired: int) -> None:
    progress = context.views_store.views.run_progress(run_id)
    assert progress is not None, f"no run {run_id}"
    wanted = {"succeeded": succeeded, "failed": failed, "expired": expired, "waiting": 0}
    assert {k: progress.counts[k] for k in wanted} == wanted, progress.counts


@then("the batches come waiting longest first: {ids}")
def step_batches(context: Context, ids: str) -> None:
    lines, total = context.views_store.views.batch_page(limit=50)
    assert [line.batch.id for line in lines] == ids.split(", "), [line.batch.id for line in lines]
    assert total == len(lines)
    second, _ = context.views_store.views.batch_page(limit=1, offset=1)
    assert [line.batch.id for line in second] == ids.split(", ")[1:2]


@then('the batch "{batch_id}" shows {results:d} results costing ${cost}, ${live} at live prices')
def step_batch(context: Context, batch_id: str, results: int, cost: str, live: str) -> None:
    lines, _ = context.views_store.views.batch_page(limit=50)
    (line,) = [line for line in lines if line.batch.id == batch_id]
    assert (line.results, line.cost_usd, line.live_cost_usd) == (results, Decimal(cost), Decimal(live)), line


@then("spend by provider is {name} {answers:d} answers ${cost}")
def step_spend(context: Context, name: str, answers: int, cost: str) -> None:
    lines = context.views_store.views.spend_by("provider")
    assert [(line.name, line.answers, line.cost_usd) for line in lines] == [(name, answers, Decimal(cost))], lines


@then("the failures group as {groups}")
def step_failures(context: Context, groups: str) -> None:
    found = context.views_store.views.failure_groups()
    shown = ", ".join(f"{g.error_class}/{g.error_type} {g.count}" for g in found)
    assert shown == groups, shown
    assert all(g.runs == ("reviews-finished",) for g in found), found


@then('the request found by the parked call\'s custom id is "{key}", {state} in {batch_id}')
def step_parked(context: Context, key: str, state: str, batch_id: str) -> None:
    store = context.views_store
    history = store.views.request_history(f"{PARKED_KEY}_{store.identity()}")
    assert history is not None
    assert (history.record.key, history.record.state.value) == (key, state), history.record
    assert [(b.id, steps) for b, _, steps in history.batches] == [(batch_id, {"input_file": f"file-{batch_id}"})]
    assert history.results == []
    assert history.runs == []


@then('the request "{key}" has one failed result from {batch_id}, in run {run_id} item {index:d}')
def step_failed(context: Context, key: str, batch_id: str, run_id: str, index: int) -> None:
    history = context.views_store.views.request_history(key)
    assert history is not None
    assert [(r.batch_id, r.state) for r in history.results] == [(batch_id, "failed")], history.results
    assert history.results[0].error is not None
    assert history.results[0].error["error_type"] == "invalid_request_error"
    assert history.runs == [(run_id, index)], history.runs


@then('no request is found for "{key}"')
def step_none(context: Context, key: str) -> None:
    assert context.views_store.views.request_history(key) is None


@then("the results over time come in {count:d} buckets of {first:d} and {second:d} answers")
def step_timeline(context: Context, count: int, first: int, second: int) -> None:
    points = context.views_store.views.timeline(60.0)
    assert [p.answers for p in points] == [first, second], points
    assert len(points) == count
    assert sum(p.failures for p in points) == 2
    run_points = context.views_store.views.timeline(60.0, run_id="reviews-finished")
    assert [(p.answers, p.failures) for p in run_points] == [(6, 2)], run_points


@when('a live answer costing ${cost} is stored for run "{run_id}" by actor "{actor}" on model "{model}"')
def step_live_answer(context: Context, cost: str, run_id: str, actor: str, model: str) -> None:
    store = context.views_store
    key = f"{run_id}-0"
    store.run_store.create(
        run_id,
        actor=actor,
        configuration={"model": model},
        options={},
        fingerprint=run_id,
        items=[NewItem(index=0, item_id=None, job={"prompt": "a look"}, key=key)],
        now=NOW,
    )
    answer = LiveAnswer(
        0, key, actor, model, {"model": model}, RequestState.SUCCEEDED, {"text": "ok"}, None, Decimal(cost)
    )
    store.run_store.record_live(run_id, [answer], now=NOW)


@then('spend by {dimension:w} reads "{lines}"')
def step_spend_lines(context: Context, dimension: str, lines: str) -> None:
    assert dimension in ("actor", "model", "provider")
    found = context.views_store.views.spend_by(cast("Dimension", dimension))
    shown = "; ".join(f"{line.name} {line.answers} answers ${line.cost_usd.normalize()}" for line in found)
    assert shown == lines, shown


def _money(store: LedgerStore, views: LedgerViews) -> tuple[object, ...]:
    dimensions: tuple[Dimension, ...] = ("actor", "model", "provider")
    return (
        views.timeline(60.0),
        views.timeline(3600.0),
        *(views.spend_by(d) for d in dimensions),
    )


@then("the money's sums read the same as a scan of every result")
def step_same_as_scan(context: Context) -> None:
    store = context.views_store
    kept, scanned = _money(store, store.views), _money(store, ScanViews(store))
    assert kept == scanned, (kept, scanned)
    assert kept[0], "no results over time"


@when("the ledger is copied into a new {kind:w} ledger store")
def step_copy(context: Context, kind: str) -> None:
    context.views_copy = open_store(context, kind, fresh=True)
    copy_ledger(context.views_store, context.views_copy)


@then("the copy's money reads the same as the original's")
def step_copy_same(context: Context) -> None:
    original = _money(context.views_store, context.views_store.views)
    copied = _money(context.views_copy, context.views_copy.views)
    assert copied == original, (copied, original)


@when("the ledger is taken back to the schema before its sums of results, and opened again")
def step_schema_before(context: Context) -> None:
    store = context.views_store
    if isinstance(store, Ledger):
        store.close()
        with closing(sqlite3.connect(store.path)) as db:
            db.executescript(f"DROP TABLE result_totals; {_LATER_TABLES} PRAGMA user_version = 8;")
    else:  # the same rows, in a ledger made again at schema 4 (the form of its requests every store copies)
        rows = [_before_later_columns(table, [r for chunk in store.export_rows(table) for r in chunk])
                for table in COPIED if table not in _LATER]  # fmt: skip
        store.close()
        ledger_at(context.postgres_url, 4, rows)
    context.views_store = reopened(context, store)


@when("the ledger is taken back to schema {version:d}, its sums counting every result stored, and opened again")
def step_schema_counting_all(context: Context, version: int) -> None:
    store = context.views_store
    assert isinstance(store, Ledger), "a SQLite ledger"
    store.close()
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute("DELETE FROM result_totals")
        db.execute(TOTALS.format(after="0"))  # schema 9's sums: a result stored again counted again
        (counted,) = db.execute("SELECT SUM(answers) FROM result_totals").fetchone()
        assert counted == 22, f"the replayed batch's 6 results should be counted twice in schema 9's sums: {counted}"
        db.executescript(_LATER_TABLES)
        db.execute(f"PRAGMA user_version = {version}")
    context.views_store = reopened(context, store)


_LATER = (
    "agent_journal",
    "agent_runs",
    "webhook_events",
    "spend_caps",
    "spend_entries",
    "spend_audit",
    "notice_outbox",
)
_LATER_COLUMNS = {"batches": ("trace",)}
_LATER_TABLES = "".join(f"DROP TABLE {table}; " for table in _LATER) + "".join(
    f"ALTER TABLE {table} DROP COLUMN {column}; " for table, columns in _LATER_COLUMNS.items() for column in columns
)
"""The tables schemas 12 (durable agents), 13 (webhooks received), 14 (spend by owner) and 16 (the notices' outbox)
made, and the columns 15 (a batch's trace context) added: a ledger taken back to an earlier schema has none of them,
as the ledger an older lowtide wrote has none."""


def _before_later_columns(
    table: str, rows: list[tuple[Any, ...]]
) -> tuple[str, tuple[str, ...], list[tuple[Any, ...]]]:
    """A table's copied rows without the columns later schemas added (`_LATER_COLUMNS`)."""
    later = _LATER_COLUMNS.get(table, ())
    kept = [n for n, column in enumerate(COPIED[table]) if column not in later]
    return table, tuple(COPIED[table][n] for n in kept), [tuple(row[n] for n in kept) for row in rows]
