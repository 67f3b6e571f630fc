"""The PostgreSQL ledger's schema, versioned in a `schema_version` table and migrated forward on first connection.

As with the SQLite ledger (`lowtide.ledger.schema`), a migration is appended to `MIGRATIONS`, never edited once
released, and a database newer than the code refuses to be used rather than be misread. Processes on any number of
hosts may connect to a new database at once: each step runs in one transaction under an advisory lock, reads the
version again first, and so is applied exactly once (PostgreSQL's DDL is transactional).
"""

from __future__ import annotations

from typing import LiteralString

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from lowtide.ledger.schema import LedgerVersionError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

MIGRATIONS: tuple[LiteralString, ...] = (
    # 1: live rate-limit scopes shared by every process using the database (lowtide.ledger.postgres.quotas).
    """
    CREATE TABLE live_quotas (
        scope      TEXT PRIMARY KEY,            -- provider, endpoint and a digest of the credentials: never a secret
        state      TEXT NOT NULL,               -- the buckets and the pause, JSON (lowtide.live.quota_state)
        updated_at DOUBLE PRECISION NOT NULL
    )
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)

_LOCK = 0x6C6F77746964  # pg_advisory_xact_lock key: "lowtid", so that no two processes migrate at once


async def migrate(connection: AsyncConnection[TupleRow]) -> int:
    """Bring the schema to `SCHEMA_VERSION`; returns the version it started from."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        await connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        cursor = await connection.execute("SELECT version FROM schema_version")
        row = await cursor.fetchone()
        started = int(str(row[0])) if row is not None else 0
        if row is None:
            await connection.execute("INSERT INTO schema_version (version) VALUES (0)")
        if started > SCHEMA_VERSION:
            raise LedgerVersionError(
                f"The ledger has schema version {started}, newer than this lowtide understands ({SCHEMA_VERSION}); "
                "upgrade lowtide.",
                field="ledger",
            )
        for version in range(started, SCHEMA_VERSION):
            await connection.execute(MIGRATIONS[version])
            await connection.execute("UPDATE schema_version SET version = %s", (version + 1,))
    return started
