"""Bringing a PostgreSQL ledger's schema up to date, as one operation either driver runs on a first connection.

Under an advisory lock, in one transaction: the version is read again first, so that of many processes connecting to
a new database at once, each step is applied exactly once (PostgreSQL's DDL is transactional).

A step PostgreSQL refuses leaves the ledger as it was (the transaction is rolled back whole). The one refusal a user
can cause and mend is a view (or rule) of their own reading a column a step changes the type or collation of:
PostgreSQL will not change such a column, and names the first view in the way; the error says what to do.
"""

from __future__ import annotations

from lowtide.errors import LedgerError
from lowtide.ledger.interface import LedgerVersionError
from lowtide.ledger.postgres.schema import LOCK, MIGRATIONS, SCHEMA_VERSION
from lowtide.ledger.postgres.steps import Op, Sql

__all__ = ["migration", "version_found"]


def migration() -> Op[int]:
    """Bring the schema to `SCHEMA_VERSION`; returns the version it started from."""
    yield Sql("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
    yield Sql("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = (yield Sql("SELECT version FROM schema_version")).one()
    started = int(str(row[0])) if row is not None else 0
    if row is None:
        yield Sql("INSERT INTO schema_version (version) VALUES (0)")
    if started > SCHEMA_VERSION:
        raise LedgerVersionError(
            f"The ledger has schema version {started}, newer than this lowtide understands ({SCHEMA_VERSION}); "
            "upgrade lowtide.",
            field="ledger",
        )
    for version in range(started, SCHEMA_VERSION):
        try:
            yield Sql(MIGRATIONS[version], savepoint=True)
        except Exception as exc:
            if getattr(exc, "sqlstate", None) == _FEATURE_NOT_SUPPORTED and "view or rule" in str(exc):
                raise LedgerError(_in_the_way(exc, started)) from None
            raise
        yield Sql("UPDATE schema_version SET version = %s", (version + 1,))
    return started


def version_found() -> Op[int]:
    """The ledger's schema version, read without writing anything (0: the database holds no ledger)."""
    row = (yield Sql("SELECT to_regclass('schema_version') IS NOT NULL")).one()
    if row is None or not row[0]:
        return 0
    row = (yield Sql("SELECT version FROM schema_version")).one()
    return int(str(row[0])) if row is not None else 0


_FEATURE_NOT_SUPPORTED = "0A000"
"""What PostgreSQL answers when asked to change a column a view or rule reads (`cannot alter type of a column used
by a view or rule`)."""


def _in_the_way(exc: BaseException, started: int) -> str:
    said = " ".join(str(exc).split())  # the server's message and its DETAIL, which names the view, on one line
    return (
        f"The PostgreSQL ledger could not be brought from schema version {started} to {SCHEMA_VERSION}, and is "
        f"unchanged: {said}. A view or rule of your own reads a column of the ledger this version changes. Drop it "
        "(and any other such view), open the ledger with this lowtide, then make the view again: it reads the same "
        "rows after."
    )
