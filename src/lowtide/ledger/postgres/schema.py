"""The PostgreSQL ledger's schema, versioned in a `schema_version` table and migrated forward on first connection.

As with the SQLite ledger (`lowtide.ledger.sqlite.schema`), a migration is appended to `MIGRATIONS`, never edited once
released, and a database newer than the code refuses to be used rather than be misread. Processes on any number of
hosts may connect to a new database at once: each step runs in one transaction under an advisory lock, reads the
version again first, and so is applied exactly once (PostgreSQL's DDL is transactional).

The tables are the SQLite ledger's (the same columns, the same meaning), so that `lowtide ledger copy` moves a ledger
row for row: JSON is kept as the text lowtide wrote (the exact bytes: jsonb would reorder keys and drop duplicates),
costs as the exact digits of their `Decimal`, times as seconds since the epoch.

Migrations 1 to 8 are `migrations_1_8.MIGRATIONS_1_8`, and the SQL they share with a copy's load is `forms`; the
later ones are here, and a new one is appended here.
"""

from __future__ import annotations

from typing import LiteralString

from lowtide.ledger.postgres.forms import REQUEST_VIEW
from lowtide.ledger.postgres.migrations_1_8 import MIGRATIONS_1_8
from lowtide.ledger.postgres.totals import ADD_TOTALS

__all__ = [
    "LOCK",
    "MIGRATIONS",
    "NOTICE_CHANNEL",
    "SCHEMA_VERSION",
]

NOTICE_CHANNEL = "lowtide_batches"
"""The `LISTEN`/`NOTIFY` channel on which a batch's changes (results stored, state changed) are announced, with the
batch's ledger id as the payload."""

MIGRATIONS: tuple[LiteralString, ...] = (
    *MIGRATIONS_1_8,  # migrations_1_8.py: the ledger made, up to the sums counted by a batch's kinds
    # 9: no table changes. A stored answer may leave its `text` out, its blocks giving it back
    # (`ledger.answer_form`): a lowtide before it would refuse such an answer when it read it, on any host sharing the
    # database, so the version moves and an older lowtide refuses the ledger when it opens it instead.
    "SELECT 1",
    # 10: every name, key and state compares byte by byte (`COLLATE "C"`), whatever the database's locale: they are
    # ids, never words, and a database made with a language's collation (en_US.UTF-8, say: the default of many
    # installations) compared each of them by its rules at every index insertion and lookup: 1.7x the server's CPU a
    # call under "C" (en_US.UTF-8, 100,000 calls, `benchmarks/many_hosts.py`). Their order is Python's from here
    # on. No table is rewritten; their indexes are made again. `request_view` reads these columns, so it is dropped
    # while they change and made again as it was. A column added later names its collation the same way.
    """
    DROP VIEW request_view;
    ALTER TABLE batches ALTER COLUMN id TYPE text COLLATE "C", ALTER COLUMN provider TYPE text COLLATE "C",
        ALTER COLUMN endpoint TYPE text COLLATE "C", ALTER COLUMN provider_batch_id TYPE text COLLATE "C",
        ALTER COLUMN state TYPE text COLLATE "C", ALTER COLUMN phase TYPE text COLLATE "C",
        ALTER COLUMN request_id TYPE text COLLATE "C", ALTER COLUMN owner TYPE text COLLATE "C";
    ALTER TABLE requests ALTER COLUMN key TYPE text COLLATE "C", ALTER COLUMN custom_id TYPE text COLLATE "C",
        ALTER COLUMN actor TYPE text COLLATE "C", ALTER COLUMN model TYPE text COLLATE "C",
        ALTER COLUMN state TYPE text COLLATE "C", ALTER COLUMN batch_id TYPE text COLLATE "C",
        ALTER COLUMN owner TYPE text COLLATE "C", ALTER COLUMN scope TYPE text COLLATE "C";
    ALTER TABLE batch_members ALTER COLUMN batch_id TYPE text COLLATE "C",
        ALTER COLUMN custom_id TYPE text COLLATE "C", ALTER COLUMN key TYPE text COLLATE "C";
    ALTER TABLE results ALTER COLUMN batch_id TYPE text COLLATE "C", ALTER COLUMN key TYPE text COLLATE "C",
        ALTER COLUMN state TYPE text COLLATE "C";
    ALTER TABLE pending_requests ALTER COLUMN key TYPE text COLLATE "C", ALTER COLUMN scope TYPE text COLLATE "C",
        ALTER COLUMN owner TYPE text COLLATE "C", ALTER COLUMN actor TYPE text COLLATE "C",
        ALTER COLUMN model TYPE text COLLATE "C";
    ALTER TABLE batch_kinds ALTER COLUMN batch_id TYPE text COLLATE "C", ALTER COLUMN actor TYPE text COLLATE "C",
        ALTER COLUMN model TYPE text COLLATE "C";
    ALTER TABLE result_totals ALTER COLUMN batch_id TYPE text COLLATE "C", ALTER COLUMN actor TYPE text COLLATE "C",
        ALTER COLUMN model TYPE text COLLATE "C";
    ALTER TABLE request_traces ALTER COLUMN key TYPE text COLLATE "C";
    ALTER TABLE owners ALTER COLUMN owner TYPE text COLLATE "C", ALTER COLUMN host TYPE text COLLATE "C";
    ALTER TABLE live_quotas ALTER COLUMN scope TYPE text COLLATE "C";
    ALTER TABLE runs ALTER COLUMN id TYPE text COLLATE "C", ALTER COLUMN actor TYPE text COLLATE "C",
        ALTER COLUMN fingerprint TYPE text COLLATE "C";
    ALTER TABLE run_items ALTER COLUMN run_id TYPE text COLLATE "C", ALTER COLUMN item_id TYPE text COLLATE "C",
        ALTER COLUMN key TYPE text COLLATE "C", ALTER COLUMN status TYPE text COLLATE "C";
    """
    + REQUEST_VIEW,
    # 11: each batch counts the statements that stored its results (`batches.result_stores`), and the sums' trigger
    # adds the results of a statement whose storer vouches for them (it read the batch's final results at the count
    # the batch still has, and stores none of their keys again) without looking each one up (`totals`).
    ADD_TOTALS,
    # 12: durable agent runs and their journals, as the SQLite ledger's schema 12 has them; their names, keys and states
    # compare byte by byte, as schema 10 made every other (the JSON, errors and costs they hold are never compared).
    """
    CREATE TABLE agent_runs (
        run_id     TEXT COLLATE "C" PRIMARY KEY,
        reference  TEXT COLLATE "C" NOT NULL,
        input      TEXT NOT NULL,
        state      TEXT COLLATE "C" NOT NULL,
        result     TEXT,
        error      TEXT,
        cost_usd   TEXT NOT NULL,
        awaiting   TEXT COLLATE "C",
        holder     TEXT COLLATE "C",
        held_until DOUBLE PRECISION,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX agent_runs_state ON agent_runs (state);
    CREATE TABLE agent_journal (
        run_id      TEXT COLLATE "C" NOT NULL REFERENCES agent_runs(run_id),
        position    INTEGER NOT NULL,
        kind        TEXT COLLATE "C" NOT NULL,
        name        TEXT COLLATE "C" NOT NULL,
        fingerprint TEXT COLLATE "C" NOT NULL,
        key         TEXT COLLATE "C" NOT NULL,
        result      TEXT,
        error       TEXT,
        cost_usd    TEXT,
        idempotent  INTEGER NOT NULL,
        retry       INTEGER NOT NULL,
        attempts    INTEGER NOT NULL,
        started_at  DOUBLE PRECISION NOT NULL,
        ended_at    DOUBLE PRECISION,
        PRIMARY KEY (run_id, position)
    );
    """,
    # 13: the providers' webhook events received, as the SQLite ledger's schema 13 has them, each row marked by the
    # operation that wrote it (`recorded_by`): made again after a commit whose answer was lost, it knows its own row.
    """
    CREATE TABLE webhook_events (
        provider          TEXT COLLATE "C" NOT NULL,
        event_id          TEXT COLLATE "C" NOT NULL,
        delivery          TEXT COLLATE "C" NOT NULL,
        provider_batch_id TEXT COLLATE "C" NOT NULL,
        kind              TEXT COLLATE "C" NOT NULL,
        batch_id          TEXT COLLATE "C",
        received_at       DOUBLE PRECISION NOT NULL,
        recorded_by       TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (provider, event_id)
    );
    CREATE INDEX webhook_events_batch ON webhook_events (provider, provider_batch_id);
    """,
    # 14: spend by owner, as the SQLite ledger's schema 14 has it (`postgres/spending.py`: a cap's row is locked by
    # each admission it holds, so that hosts are judged one after the other).
    """
    CREATE TABLE spend_caps (
        scope     TEXT COLLATE "C" NOT NULL,
        name      TEXT COLLATE "C" NOT NULL,
        period    TEXT COLLATE "C" NOT NULL,
        limit_usd NUMERIC NOT NULL,
        PRIMARY KEY (scope, name, period)
    );
    CREATE TABLE spend_entries (
        key            TEXT COLLATE "C" PRIMARY KEY,
        team           TEXT COLLATE "C",
        project        TEXT COLLATE "C",
        tags           TEXT COLLATE "C" NOT NULL,
        actor          TEXT COLLATE "C" NOT NULL,
        model          TEXT COLLATE "C" NOT NULL,
        worst_case_usd NUMERIC NOT NULL,
        created_at     DOUBLE PRECISION NOT NULL,
        host           TEXT COLLATE "C" NOT NULL,
        released       BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE INDEX spend_entries_team ON spend_entries (team, created_at);
    CREATE INDEX spend_entries_project ON spend_entries (project, created_at);
    CREATE INDEX spend_entries_at ON spend_entries (created_at);
    CREATE TABLE spend_audit (
        seq            BIGSERIAL PRIMARY KEY,
        at             DOUBLE PRECISION NOT NULL,
        action         TEXT COLLATE "C" NOT NULL,
        subject        TEXT COLLATE "C" NOT NULL,
        team           TEXT COLLATE "C",
        project        TEXT COLLATE "C",
        tags           TEXT COLLATE "C" NOT NULL,
        actor          TEXT COLLATE "C" NOT NULL,
        worst_case_usd NUMERIC,
        cap_left_usd   NUMERIC,
        host           TEXT COLLATE "C" NOT NULL
    );
    CREATE INDEX spend_audit_at ON spend_audit (at);
    """,
    # 15: the trace context of a batch's span, as the SQLite ledger's schema 15 has it.
    "ALTER TABLE batches ADD COLUMN trace TEXT;",
    # 16: the notices to the user's server, as the SQLite ledger's schema 16 has them (`postgres/outbox.py`).
    """
    CREATE TABLE notice_outbox (
        event_id     TEXT COLLATE "C" PRIMARY KEY,
        kind         TEXT COLLATE "C" NOT NULL,
        url          TEXT COLLATE "C" NOT NULL,
        secret_env   TEXT COLLATE "C" NOT NULL,
        body         BYTEA NOT NULL,
        made_at      DOUBLE PRECISION NOT NULL,
        give_up_at   DOUBLE PRECISION NOT NULL,
        tries        INTEGER NOT NULL DEFAULT 0,
        next_at      DOUBLE PRECISION NOT NULL,
        owner        TEXT COLLATE "C",
        lease_until  DOUBLE PRECISION NOT NULL DEFAULT 0,
        delivered_at DOUBLE PRECISION,
        given_up_at  DOUBLE PRECISION
    );
    CREATE INDEX notice_outbox_due ON notice_outbox (next_at) WHERE delivered_at IS NULL AND given_up_at IS NULL;
    """,
    # 17: what a live call cost, as the SQLite ledger's schema 17 has it (`postgres/spending.py`).
    "ALTER TABLE spend_entries ADD COLUMN cost_usd NUMERIC;",
)

SCHEMA_VERSION = len(MIGRATIONS)

LOCK = 0x6C6F77746964
"""The `pg_advisory_xact_lock` key (\"lowtid\") under which a migration runs: no two processes migrate at once."""
