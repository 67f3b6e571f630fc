"""The ledger's SQLite schema, versioned through `PRAGMA user_version` and migrated forward on open.

A migration is appended to `MIGRATIONS`, never edited once released: a ledger written by an older lowtide opens
in a newer one. A ledger newer than the code refuses to open rather than be misread.
"""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "LedgerVersionError", "migrate"]

MIGRATIONS: tuple[str, ...] = (
    # 1: batches and requests.
    """
    CREATE TABLE batches (
        id                TEXT PRIMARY KEY,     -- lowtide's own id, recorded before the API is called
        provider          TEXT NOT NULL,
        endpoint          TEXT NOT NULL,        -- the API's base URL; never a key
        provider_batch_id TEXT UNIQUE,          -- the API's id, once known
        state             TEXT NOT NULL,        -- see BatchState
        processing_status TEXT,
        request_count     INTEGER NOT NULL,
        request_bytes     INTEGER NOT NULL,
        intent_at         REAL NOT NULL,
        submitted_at      REAL,
        ended_at          REAL,
        collected_at      REAL,
        counts            TEXT,                 -- the API's request_counts, JSON
        owner             TEXT,                 -- the process working on it (polling, reconciling)
        owner_until       REAL,
        note              TEXT
    );
    CREATE INDEX batches_state ON batches(state);

    CREATE TABLE requests (
        key            TEXT PRIMARY KEY,        -- the caller's key, or one derived from the request
        custom_id      TEXT NOT NULL,
        actor          TEXT NOT NULL,
        model          TEXT NOT NULL,
        params         TEXT NOT NULL,           -- the Messages parameters, JSON; never a key
        params_bytes   INTEGER NOT NULL,
        state          TEXT NOT NULL,           -- see RequestState
        batch_id       TEXT REFERENCES batches(id),
        attempts       INTEGER NOT NULL DEFAULT 0,
        max_attempts   INTEGER NOT NULL DEFAULT 1,
        response       TEXT,                    -- ActorResponse JSON when succeeded
        error          TEXT,                    -- the error, JSON, when it did not
        worst_case_usd REAL,                    -- the budget check's estimate, while not final
        cost_usd       TEXT,
        live_cost_usd  TEXT,
        created_at     REAL NOT NULL,
        updated_at     REAL NOT NULL,
        owner          TEXT,                    -- the process that queued it, until it is in a batch
        owner_until    REAL
    );
    CREATE INDEX requests_batch ON requests(batch_id);
    CREATE INDEX requests_state ON requests(state);
    CREATE INDEX requests_actor ON requests(actor);

    -- Which requests went into which batch, over every attempt: results are confirmed against it.
    CREATE TABLE batch_members (
        batch_id  TEXT NOT NULL REFERENCES batches(id),
        custom_id TEXT NOT NULL,
        key       TEXT NOT NULL REFERENCES requests(key),
        PRIMARY KEY (batch_id, custom_id)
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class LedgerVersionError(RuntimeError):
    pass


def migrate(connection: sqlite3.Connection) -> int:
    """Bring the schema to `SCHEMA_VERSION`; returns the version it started from."""
    (current,) = connection.execute("PRAGMA user_version").fetchone()
    if current > SCHEMA_VERSION:
        raise LedgerVersionError(
            f"The ledger has schema version {current}, newer than this lowtide understands ({SCHEMA_VERSION}); "
            "upgrade lowtide."
        )
    for version in range(current, SCHEMA_VERSION):
        # One transaction per step: a crash mid-migration leaves the previous version intact.
        connection.executescript(
            f"BEGIN IMMEDIATE; {MIGRATIONS[version]}; PRAGMA user_version = {version + 1}; COMMIT;"
        )
    return int(current)
