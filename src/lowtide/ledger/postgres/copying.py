"""Moving a PostgreSQL ledger (`lowtide ledger copy`): its rows read table by table, or another ledger's written
into it by `COPY`, checked empty under `LOCK TABLE` in the same transaction. Only the sync face does this (the CLI):
a named cursor and `COPY` stream rows, which the operations of `steps` do not."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, LiteralString

from lowtide.errors import ConfigurationError
from lowtide.ledger.postgres.forms import CURRENT_MEMBERSHIP, KINDS, NEW_FORM
from lowtide.ledger.postgres.steps import CHUNK
from lowtide.ledger.records import COPIED

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow
    from psycopg.sql import SQL, Composed

    from lowtide.ledger.postgres.pool import SyncPool

__all__ = ["export_rows", "load"]


def export_rows(pool: SyncPool, table: str) -> Iterator[list[tuple[Any, ...]]]:
    """`LedgerStore.export_rows`: results in arrival order, a live answer's batch None (stored as '')."""
    from psycopg import sql

    columns = COPIED[table]
    order = "seq" if table in ("results", "batch_members", "spend_audit") else columns[0]
    query: Composed | SQL = (
        sql.SQL(_REQUESTS)
        if table == "requests"
        else sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table), sql.Identifier(order)
        )
    )
    batch_at = columns.index("batch_id") if table == "results" else -1
    with pool.transaction("read the ledger") as db, db.cursor(name=f"lowtide_export_{table}") as cursor:
        cursor.execute(query)
        while chunk := cursor.fetchmany(CHUNK):
            rows = [tuple(row) for row in chunk]
            if batch_at >= 0:  # a live answer's '' is the None other stores keep
                rows = [(*r[:batch_at], r[batch_at] or None, *r[batch_at + 1 :]) for r in rows]
            if table.startswith("spend_"):  # amounts as decimal text, `released` 0 or 1: as every store copies them
                rows = [tuple(_copied(value) for value in r) for r in rows]
            yield rows


def load(
    pool: SyncPool,
    location: str,
    tables: Iterable[tuple[str, Iterable[list[tuple[object, ...]]]]],
    *,
    identity: str | None = None,
) -> dict[str, int]:
    """`LedgerStore.load`, into the ledger at `location` (as people are told it), taking `identity` when given."""
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
        # Requests come in the form of 5, which every store copies: brought to this one's (`schema.NEW_FORM`), and
        # every batch's kinds made (`schema.KINDS`: its results were counted as they went in, each looked up).
        db.execute(NEW_FORM)
        db.execute(KINDS)
        strays = _one(db, sql.SQL(_STRAYS))
        if strays:
            raise ConfigurationError(
                f"The ledger copied into {location} names a batch member that is not one of its requests or batches"
                f" ({strays}): nothing was written.",
                field="ledger",
            )
        if identity is not None:
            db.execute("UPDATE identity SET id = %s", (identity,))
    return written


_REQUESTS: LiteralString = (
    "SELECT r.key, r.custom_id, r.actor, r.model, r.params, r.params_bytes,"
    " CASE WHEN b.id IS NULL THEN r.state ELSE 'submitting' END, b.id, r.attempts + (b.id IS NOT NULL)::int,"
    " r.max_attempts, r.worst_case_usd, r.created_at,"
    " CASE WHEN b.id IS NULL THEN COALESCE(q.updated_at, r.updated_at) ELSE b.intent_at END, q.owner, q.owner_until"
    f" FROM requests r {CURRENT_MEMBERSHIP} LEFT JOIN pending_requests q ON q.key = r.key ORDER BY r.key"
)
"""A request as the SQLite ledger's schema 5 kept it (the form every store copies): its batch and the attempt it is
making read from its memberships, its owner from the queue (`schema.NEW_FORM` is the way back)."""
_STRAYS: LiteralString = (
    "SELECT m.batch_id || ' ' || m.key FROM batch_members m WHERE NOT EXISTS (SELECT 1 FROM requests r"
    " WHERE r.key = m.key) OR NOT EXISTS (SELECT 1 FROM batches b WHERE b.id = m.batch_id) LIMIT 1"
)
"""A member naming no request or no batch (the foreign keys schema 7 dropped checked this as rows went in)."""


def _copied(value: object) -> object:
    """A spend table's value as every store copies it: NUMERIC as decimal text, BOOLEAN as 0 or 1."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, Decimal):
        return str(value)
    return value


def _one(db: Connection[TupleRow], query: Composed | SQL) -> object:
    row = db.execute(query).fetchone()
    return row[0] if row is not None else None
