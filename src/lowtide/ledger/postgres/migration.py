"""Bringing a PostgreSQL ledger's schema up to date, as one operation either driver runs on a first connection.

Under an advisory lock, in one transaction: the version is read again first, so that of many processes connecting to
a new database at once, each step is applied exactly once (PostgreSQL's DDL is transactional).
"""

from __future__ import annotations

from lowtide.ledger.interface import LedgerVersionError
from lowtide.ledger.postgres.schema import LOCK, MIGRATIONS, SCHEMA_VERSION
from lowtide.ledger.postgres.steps import Op, Sql

__all__ = ["migration"]


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
        yield Sql(MIGRATIONS[version])
        yield Sql("UPDATE schema_version SET version = %s", (version + 1,))
    return started
