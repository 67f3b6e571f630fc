"""A scenario's PostgreSQL ledger made again at an earlier schema version, holding given rows: how the scenarios
reach a ledger an earlier lowtide wrote (its tables are that version's migrations, which are never edited), which the
next store opened on it migrates; and one statement run on a scenario's database through a connection of its own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from lowtide.ledger.postgres.schema import MIGRATIONS

__all__ = ["ledger_at", "pg_rows"]


def pg_rows(url: str, query: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
    """The rows `query` gives (none for a statement that gives none), run on its own connection, committed at once.
    Without `params`, the query is sent as it is (a `%` in it is a `%`)."""
    import psycopg  # the `postgres` extra: only the sessions that run PostgreSQL install it

    with psycopg.connect(url, autocommit=True) as db:
        cursor = db.execute(query.encode(), params)
        return cursor.fetchall() if cursor.description is not None else []


def _schema_of(url: str) -> str:
    """The schema a scenario's URL puts first on its search path (`options=-csearch_path=<name>`)."""
    options = parse_qs(urlsplit(url).query).get("options", [""])[0]
    assert options.startswith("-csearch_path="), url
    return options.removeprefix("-csearch_path=")


def ledger_at(url: str, version: int, tables: Iterable[tuple[str, Sequence[str], Iterable[Sequence[Any]]]]) -> None:
    """Empty the scenario's schema, make the ledger's tables as `version` had them, and insert each table's rows
    (columns named): `identity` and `result_totals` replace what the migrations made; results keep the `seq` given
    (the sequence then follows on)."""
    import psycopg
    from psycopg import sql

    schema = sql.Identifier(_schema_of(url))
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(schema))
        db.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
        with db.transaction():
            db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            db.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
            for migration in MIGRATIONS[:version]:
                db.execute(migration)
            for table, columns, rows in tables:
                if table in ("identity", "result_totals"):
                    db.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))
                insert = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                    sql.Identifier(table),
                    sql.SQL(", ").join(map(sql.Identifier, columns)),
                    sql.SQL(", ").join(sql.Placeholder() * len(columns)),
                )
                with db.cursor() as cursor:
                    cursor.executemany(insert, [tuple(row) for row in rows])
            if version >= 2:
                db.execute("SELECT setval(pg_get_serial_sequence('results', 'seq'), COALESCE(max(seq), 0) + 1, false)"
                           " FROM results")  # fmt: skip
