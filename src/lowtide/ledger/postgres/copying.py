"""Moving a PostgreSQL ledger (`lowtide ledger copy`): its rows read table by table, or another ledger's written
into it by `COPY`, checked empty under `LOCK TABLE` in the same transaction. Only the sync face does this (the CLI):
a named cursor and `COPY` stream rows, which the operations of `steps` do not."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lowtide.errors import ConfigurationError
from lowtide.ledger.postgres.steps import CHUNK
from lowtide.ledger.records import COPIED

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow
    from psycopg.sql import Composed

    from lowtide.ledger.postgres.pool import SyncPool

__all__ = ["export_rows", "load"]


def export_rows(pool: SyncPool, table: str) -> Iterator[list[tuple[Any, ...]]]:
    """`LedgerStore.export_rows`: results in arrival order, a live answer's batch None (stored as '')."""
    from psycopg import sql

    columns = COPIED[table]
    order = "seq" if table == "results" else columns[0]
    query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table), sql.Identifier(order)
    )
    batch_at = columns.index("batch_id") if table == "results" else -1
    with pool.transaction("read the ledger") as db, db.cursor(name=f"lowtide_export_{table}") as cursor:
        cursor.execute(query)
        while chunk := cursor.fetchmany(CHUNK):
            rows = [tuple(row) for row in chunk]
            if batch_at >= 0:  # a live answer's '' is the None other stores keep
                rows = [(*r[:batch_at], r[batch_at] or None, *r[batch_at + 1 :]) for r in rows]
            yield rows


def load(
    pool: SyncPool, location: str, tables: Iterable[tuple[str, Iterable[list[tuple[object, ...]]]]]
) -> dict[str, int]:
    """`LedgerStore.load`, into the ledger at `location` (as people are told it)."""
    from psycopg import sql

    written: dict[str, int] = {}
    with pool.transaction("be written") as db:
        # No other copy or process may write meanwhile: the emptiness checked here holds until the commit.
        db.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(sql.SQL(", ").join(map(sql.Identifier, COPIED))))
        held = [
            table
            for table in COPIED
            if _one(db, sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(table)))
        ]
        if held:
            raise ConfigurationError(
                f"The ledger {location} is not empty (it holds {', '.join(held)}): a copy goes into a new"
                " ledger, and nothing was written.",
                field="ledger",
            )
        for table, chunks in tables:
            columns = COPIED[table]
            batch_at = columns.index("batch_id") if table == "results" else -1
            copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
                sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
            )
            written[table] = 0
            with db.cursor().copy(copy) as writing:
                for chunk in chunks:
                    for row in chunk:
                        if batch_at >= 0 and row[batch_at] is None:
                            row = (*row[:batch_at], "", *row[batch_at + 1 :])
                        writing.write_row(row)
                    written[table] += len(chunk)
    return written


def _one(db: Connection[TupleRow], query: Composed) -> object:
    row = db.execute(query).fetchone()
    return row[0] if row is not None else None
