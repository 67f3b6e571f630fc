"""Steps for a PostgreSQL ledger an earlier lowtide wrote with requests in flight (`features/data/postgres_v6.py`,
`postgres_v7.py`): migrated in place when this lowtide opens it, read as that lowtide read it, copied, and worked on
from there, its sums checked."""

from __future__ import annotations

import importlib.util
import json
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any, LiteralString, Protocol

from _pg_ledgers import ledger_at, pg_rows
from _support import check_error, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.postgres.ledger import PostgresLedger
from lowtide.ledger.records import BatchIntent, OutcomeRow, RequestState


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    postgres_copy: PostgresLedger
    gathered: list[str]
    rows_before: dict[str, list[str]]


_DATA = Path(__file__).resolve().parent.parent / "data"


def _reader() -> ModuleType:
    """`features/data/ledger_v5.py`, whose `what_it_reads` says what a lowtide reads from a ledger."""
    spec = importlib.util.spec_from_file_location("ledger_v5", _DATA / "ledger_v5.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reads_as(ledger: Any, expected: str) -> None:
    read: dict[str, Any] = _reader().what_it_reads(ledger)
    before: dict[str, Any] = json.loads((_DATA / expected).read_text())
    assert read.keys() == before.keys(), read.keys()
    for part, rows in before.items():
        assert read[part] == rows, (part, read[part], rows)


@given('the scenario\'s PostgreSQL database holds the ledger lowtide wrote at schema version {version:d} ("{name}")')
def step_old_ledger(context: Context, version: int, name: str) -> None:
    tables: dict[str, dict[str, Any]] = json.loads((_DATA / name).read_text())
    ledger_at(context.postgres_url, version, [(t, held["columns"], held["rows"]) for t, held in tables.items()])


@given(
    'the scenario\'s PostgreSQL database holds the rows of "{name}" in a ledger at schema version {version:d}, and'
    ' a view "{view}" of its own over the requests\' actors'
)
def step_old_ledger_with_view(context: Context, name: str, version: int, view: str) -> None:
    step_old_ledger(context, version, name)
    pg_rows(context.postgres_url, f"CREATE VIEW {view} AS SELECT actor, count(*) AS calls FROM requests GROUP BY actor")
    context.rows_before = _ledger_rows(context)


def _ledger_rows(context: Context) -> dict[str, list[str]]:
    """Every row of every table of the scenario's schema, each as PostgreSQL writes a row as text, in order."""
    url = context.postgres_url
    tables = pg_rows(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1")
    return {
        str(table): [str(row[0]) for row in pg_rows(url, f"SELECT t::text FROM {table} t ORDER BY 1")]
        for (table,) in tables
    }


@when("the PostgreSQL ledger is opened by this lowtide")
def step_open(context: Context) -> None:
    w = world(context)
    w.value = PostgresLedger(context.postgres_url)
    w.cleanups.append(w.value.close)


@when("the PostgreSQL ledger is opened by this lowtide, and refused")
def step_open_refused(context: Context) -> None:
    w = world(context)
    w.attempt(lambda: PostgresLedger(context.postgres_url))
    w.failure()


@then('the error is a {kind} saying "{first}" and "{second}"')
def step_error_says(context: Context, kind: str, first: str, second: str) -> None:
    error = world(context).failure()
    check_error(error, kind)
    assert first in str(error), str(error)
    assert second in str(error), str(error)


@then(
    'the PostgreSQL database\'s schema_version is {version:d}, every row of the ledger as it was, and "{view}" reads'
    " them"
)
def step_unchanged(context: Context, version: int, view: str) -> None:
    assert pg_rows(context.postgres_url, "SELECT version FROM schema_version") == [(version,)]
    assert _ledger_rows(context) == context.rows_before
    counted = dict(pg_rows(context.postgres_url, "SELECT actor, count(*) FROM requests GROUP BY actor"))
    assert dict(pg_rows(context.postgres_url, f"SELECT actor, calls FROM {view}")) == counted, counted


@when('the view "{view}" is dropped')
def step_drop_view(context: Context, view: str) -> None:
    pg_rows(context.postgres_url, f"DROP VIEW {view}")


@then('it reads every request, batch member, run item and copied row as schema 6\'s lowtide read them ("{expected}")')
@then('it reads every request, batch member, run item and copied row as schema 7\'s lowtide read them ("{expected}")')
def step_reads_as_before(context: Context, expected: str) -> None:
    _reads_as(world(context).value, expected)


@when("it is copied into a new PostgreSQL database")
def step_copy_into_postgres(context: Context) -> None:
    w = world(context)
    copy = PostgresLedger(context.new_postgres_database())
    w.cleanups.append(copy.close)
    copy_ledger(w.value, copy)
    context.postgres_copy = copy


@then('that copy reads every request, batch member, run item and copied row as it does ("{expected}")')
def step_copy_reads(context: Context, expected: str) -> None:
    _reads_as(context.postgres_copy, expected)


@when('a process on host "{host}" gathers the pending calls of scope "{scope}" into batch "{batch}"')
def step_gather_into(context: Context, host: str, scope: str, batch: str) -> None:
    ledger: PostgresLedger = world(context).value
    owner = f"{host}/1/x"
    taken = ledger.take_pending(scope, owner=owner, until=400.0, now=30.0, limit=100, max_bytes=10**6)
    members = [(t.key, t.custom_id) for t in taken]
    intent = BatchIntent(batch, provider="anthropic", endpoint="https://api.anthropic.com", members=members,
                         request_bytes=10, owner=owner, until=400.0, now=31.0)  # fmt: skip
    kept = ledger.record_intent(intent)
    context.gathered = sorted(kept)


@then('it gathered "{keys}"')
def step_gathered(context: Context, keys: str) -> None:
    assert context.gathered == [k.strip() for k in keys.split(",")], context.gathered


@when('batch "{batch}" answers "{keys}" at {cost} each, at {at:g} seconds')
def step_batch_answers_at(context: Context, batch: str, keys: str, cost: str, at: float) -> None:
    ledger: PostgresLedger = world(context).value
    price = Decimal(cost)
    answers = [
        OutcomeRow(k.strip(), RequestState.SUCCEEDED, {"id": "msg", "text": k.strip()}, cost_usd=price,
                   live_cost_usd=2 * price)
        for k in keys.split(",")
    ]  # fmt: skip
    ledger.record_outcomes(batch, answers, now=at)


_SUMS: LiteralString = (
    "SELECT minute, batch_id, actor, model, sum(answers), sum(failures), sum(cost_usd), sum(live_cost_usd)"
    " FROM result_totals GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
)
_COUNTED_AGAIN: LiteralString = (
    "SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),"
    " count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),"
    " COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)"
    " FROM results o LEFT JOIN requests r ON r.key = o.key WHERE o.state <> 'pending'"
    " AND (o.batch_id = '' OR NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id"
    " AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending'))"
    " GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
)
"""Every batch's first final result of each request, and every live answer, counted from the results as they are
(migration 6's count): what the kept sums must say."""


def _sums(context: Context, query: LiteralString) -> list[list[str]]:
    import psycopg

    with psycopg.connect(context.postgres_url) as db:
        rows = db.execute(query).fetchall()
    return [[f"{row[0]:g}", str(row[1]), str(row[2]), str(row[3]), *(str(Decimal(v).normalize()) for v in row[4:])]
            for row in rows]  # fmt: skip


@then("the sums read")
def step_sums_read(context: Context) -> None:
    wanted = [
        [row["minute"], row["batch"], row["actor"], row["model"], row["answers"], row["failures"], row["cost"],
         row["live cost"]]
        for row in context.table
    ]  # fmt: skip
    found = _sums(context, _SUMS)
    assert found == wanted, found


@then("the sums are those counted again from every result")
def step_sums_counted_again(context: Context) -> None:
    kept, again = _sums(context, _SUMS), _sums(context, _COUNTED_AGAIN)
    assert kept == again, (kept, again)
