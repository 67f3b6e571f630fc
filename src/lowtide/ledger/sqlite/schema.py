"""The SQLite ledger's schema, versioned through `PRAGMA user_version` and migrated forward on open.

A migration is appended to `MIGRATIONS`, never edited once released: a ledger written by an older lowtide opens
in a newer one. A ledger newer than the code refuses to open rather than be misread. The sums' SQL, which migrations 9
and 10 use and every writer of results after them, is `totals`.
"""

from __future__ import annotations

import sqlite3

from lowtide.ledger.interface import LedgerVersionError
from lowtide.ledger.sqlite.totals import TOTALS, TOTALS_ONCE

__all__ = [
    "MIGRATIONS", "NEW_FORM", "REQUEST_BATCH", "REQUEST_OUTCOME", "REQUEST_STATE", "SCHEMA_VERSION",
    "latest_membership", "migrate", "statements",
]  # fmt: skip


def latest_membership(key: str) -> str:
    """SQL for the `seq` of the latest membership of the request whose key is the SQL `key` (0: never in a batch)."""
    return f"COALESCE((SELECT MAX(seq) FROM batch_members WHERE key = {key}), 0)"


REQUEST_BATCH = (
    f"LEFT JOIN batch_members m ON m.seq = {latest_membership('r.key')} AND m.seq > r.left_seq"
    " LEFT JOIN batches b ON b.id = m.batch_id"
)
"""The joins, on `requests r`, of the membership `m` it is in (its latest, unless it has left it since) and that
batch `b`; both NULL when it is in none."""
REQUEST_OUTCOME = (
    f"{REQUEST_BATCH}"
    " LEFT JOIN results o ON o.seq = (SELECT MAX(seq) FROM results WHERE batch_id IS b.id AND key = r.key)"
)
"""`request_view`'s joins, for a query on `requests r` that cannot go through the view: `REQUEST_BATCH`'s, and its
latest result `o` from that batch (from no batch, a live answer, when it is in none)."""
REQUEST_STATE = (
    "COALESCE(o.state, CASE WHEN b.id IS NULL THEN r.state WHEN b.provider_batch_id IS NOT NULL"
    " THEN 'waiting-on-batch' ELSE 'submitting' END)"
)
"""`request_view`'s state, over `REQUEST_OUTCOME`'s joins."""

NEW_FORM = """
    UPDATE requests SET left_seq = COALESCE((
        SELECT MAX(m.seq) FROM batch_members m WHERE m.key = requests.key AND (requests.batch_id IS NULL
            OR m.seq < (SELECT MAX(l.seq) FROM batch_members l WHERE l.key = requests.key))
    ), 0) WHERE key IN (SELECT key FROM batch_members);
    UPDATE requests SET state = 'pending', attempts = MAX(attempts - 1, 0), owner = NULL, owner_until = NULL,
        batch_id = NULL WHERE batch_id IS NOT NULL;
"""
"""Requests as schema 5 kept them (a request in a batch: `batch_id` set, its attempt counted, `submitting`) brought to
the form of 6 (a request in a batch: its row as before it joined, in its latest membership; `left_seq`: the latest
membership it left). Part of migration 6, and of loading a copy (whose rows are in the form of 5): never edited."""

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
        request_id        TEXT,                 -- the request-id of the create call, for support
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
    # 2: bulk runs and their items, in input order.
    """
    CREATE TABLE runs (
        id            TEXT PRIMARY KEY,
        actor         TEXT NOT NULL,
        configuration TEXT NOT NULL,            -- the ActorConfiguration, JSON; names a key's variable, never a key
        options       TEXT NOT NULL,            -- limits, splitting and output options, JSON
        fingerprint   TEXT NOT NULL,            -- a hash of the items: a run id names one set of inputs
        item_count    INTEGER NOT NULL,
        created_at    REAL NOT NULL,
        updated_at    REAL NOT NULL
    );

    CREATE TABLE run_items (
        run_id   TEXT NOT NULL REFERENCES runs(id),
        idx      INTEGER NOT NULL,              -- the item's place in the input, from 0
        item_id  TEXT,                          -- the user's own id for it, if any
        job      TEXT NOT NULL,                 -- the input (prompt, messages, file path, overrides), JSON
        key      TEXT NOT NULL,                 -- the request key of its latest attempt
        attempt  INTEGER NOT NULL DEFAULT 1,
        status   TEXT,                          -- set when the run decided without the API (not-run, failed)
        reason   TEXT,
        PRIMARY KEY (run_id, idx)
    );
    CREATE INDEX run_items_key ON run_items(key);
    """,
    # 3: provider-neutral batch phases (running, canceling, ended; the in_progress of earlier releases: running), and
    # the steps of a create made of several calls (an uploaded input file), so that a crash never repeats them.
    """
    ALTER TABLE batches RENAME COLUMN processing_status TO phase;
    UPDATE batches SET phase = 'running' WHERE phase = 'in_progress';
    ALTER TABLE batches ADD COLUMN create_steps TEXT;  -- {"step": "value"}, JSON
    """,
    # 4: live rate-limit scopes shared by the processes using the ledger (lowtide.ledger.sqlite.quotas).
    """
    CREATE TABLE live_quotas (
        scope      TEXT PRIMARY KEY,   -- provider, endpoint and a digest of the credentials: never a secret
        state      TEXT NOT NULL,      -- the buckets and the pause, JSON (lowtide.ledger.quota_records.ScopeState)
        updated_at REAL NOT NULL
    );
    """,
    # 5: results appended in arrival order, never updated in place: a request's outcome is its latest result row for
    # the batch it is in (`request_view`), and a request in a batch the API has is waiting on it without a write of
    # its own. The answers stored in place by earlier releases move to `results`, every one still readable.
    """
    CREATE TABLE results (
        seq           INTEGER PRIMARY KEY,      -- arrival order
        batch_id      TEXT,                     -- the batch it came from; NULL for a live answer
        key           TEXT NOT NULL,
        state         TEXT NOT NULL,            -- the request's state it brings (final, or pending for a retry)
        response      TEXT,
        error         TEXT,
        cost_usd      TEXT,
        live_cost_usd TEXT,
        at            REAL NOT NULL
    );
    -- By batch first: a batch's results land in one region of the index, however large the ledger has grown.
    CREATE INDEX results_batch_key ON results(batch_id, key);
    -- A request's state is derived from here on, and no query looks requests up by the column: its index only cost
    -- two entries rewritten per request claimed and sent.
    DROP INDEX IF EXISTS requests_state;
    INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)
        SELECT batch_id, key, state, response, error, cost_usd, live_cost_usd, updated_at FROM requests
        WHERE state IN ('succeeded', 'failed', 'canceled', 'expired') ORDER BY updated_at, key;
    UPDATE requests SET response = NULL, error = NULL, cost_usd = NULL, live_cost_usd = NULL
        WHERE state IN ('succeeded', 'failed', 'canceled', 'expired');
    CREATE VIEW request_view AS
        SELECT r.key, r.custom_id, r.actor, r.model, r.params, r.params_bytes,
            COALESCE(o.state, CASE WHEN r.state = 'submitting' AND b.provider_batch_id IS NOT NULL
                THEN 'waiting-on-batch' ELSE r.state END) AS state,
            r.batch_id, r.attempts, r.max_attempts, o.response, o.error, r.worst_case_usd, o.cost_usd,
            o.live_cost_usd, r.created_at, COALESCE(o.at, r.updated_at) AS updated_at, r.owner, r.owner_until
        FROM requests r
        LEFT JOIN results o ON o.seq = (
            SELECT MAX(seq) FROM results WHERE batch_id IS r.batch_id AND key = r.key
        )
        LEFT JOIN batches b ON b.id = r.batch_id;
    """,
    # 6: a request's batch is its latest membership (`batch_members`, numbered in the order they were made and found
    # by key), unless it has left it since: the intent before a create appends members and rewrites no request. A
    # request's row is written again only when it leaves a batch (requeued for a retry, with the attempt it made
    # counted then; refused or given up): `left_seq`, the membership it left. Requests in a batch move to that form:
    # their row as it was before they joined. `requests.batch_id` is unused from here on.
    f"""
    CREATE TABLE members (
        seq       INTEGER PRIMARY KEY,          -- the order memberships were made in (kept by VACUUM)
        batch_id  TEXT NOT NULL REFERENCES batches(id),
        custom_id TEXT NOT NULL,
        key       TEXT NOT NULL REFERENCES requests(key),
        UNIQUE (batch_id, custom_id)
    );
    INSERT INTO members (batch_id, custom_id, key) SELECT batch_id, custom_id, key FROM batch_members ORDER BY rowid;
    DROP TABLE batch_members;
    ALTER TABLE members RENAME TO batch_members;
    CREATE INDEX batch_members_key ON batch_members(key);
    DROP INDEX IF EXISTS requests_batch;
    ALTER TABLE requests ADD COLUMN left_seq INTEGER NOT NULL DEFAULT 0;
    {NEW_FORM}
    DROP VIEW request_view;
    CREATE VIEW request_view AS
        SELECT r.key, r.custom_id, r.actor, r.model, r.params, r.params_bytes,
            COALESCE(o.state, CASE WHEN b.id IS NULL THEN r.state WHEN b.provider_batch_id IS NOT NULL
                THEN 'waiting-on-batch' ELSE 'submitting' END) AS state,
            b.id AS batch_id, r.attempts + (b.id IS NOT NULL) AS attempts, r.max_attempts, o.response, o.error,
            r.worst_case_usd, o.cost_usd, o.live_cost_usd, r.created_at,
            COALESCE(o.at, b.intent_at, r.updated_at) AS updated_at,
            CASE WHEN b.id IS NULL THEN r.owner END AS owner,
            CASE WHEN b.id IS NULL THEN r.owner_until END AS owner_until
        FROM requests r
        LEFT JOIN batch_members m ON m.seq = (SELECT MAX(seq) FROM batch_members WHERE key = r.key)
            AND m.seq > r.left_seq
        LEFT JOIN batches b ON b.id = m.batch_id
        LEFT JOIN results o ON o.seq = (SELECT MAX(seq) FROM results WHERE batch_id IS b.id AND key = r.key);
    """,
    # 7: the ledger's own identity, random, made once (when the ledger is made, or first opened by a lowtide that
    # knows it) and never changed: a part of every custom id made from then on, so that a batch another ledger made
    # from the same inputs with the same API key is never taken for this one's. Requests already claimed keep the
    # custom ids they were sent with (stored with them, never made again). A copy keeps its own (`IDENTITY`).
    """
    CREATE TABLE identity (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id  TEXT NOT NULL                       -- 12 lowercase hex digits
    );
    INSERT INTO identity (one, id) VALUES (1, lower(hex(randomblob(6))));
    """,
    # 8: the trace context of the call that claimed a request (W3C traceparent and tracestate, JSON), written with
    # its claim when telemetry is on, so that the process that answers it (`lowtide collect`, a resumed call) ends
    # the same trace. A table of its own: no row at all, and no read, while telemetry is off.
    """
    CREATE TABLE request_traces (
        key     TEXT PRIMARY KEY REFERENCES requests(key),
        context TEXT NOT NULL
    );
    """,
    # 9: final results counted and priced per minute, batch, actor and model, kept as results are stored (`TOTALS`),
    # so that a viewer's sums over every result (`lowtide dashboard`'s money) read these few rows, not every result.
    # Backfilled here once from the results already stored.
    f"""
    CREATE TABLE result_totals (
        minute        REAL NOT NULL,            -- the start of the minute the results were stored in
        batch_id      TEXT NOT NULL,            -- '' for live answers
        actor         TEXT NOT NULL,
        model         TEXT NOT NULL,
        answers       INTEGER NOT NULL,
        failures      INTEGER NOT NULL,         -- failed, expired or canceled
        cost_usd      REAL NOT NULL,
        live_cost_usd REAL NOT NULL,
        PRIMARY KEY (minute, batch_id, actor, model)
    ) WITHOUT ROWID;
    {TOTALS.format(after="0")};
    """,
    # 10: a batch's result stored again (a collection replayed after a crash) was counted again in `result_totals`:
    # the sums made again, each batch's final result counted once.
    f"""
    DELETE FROM result_totals;
    {TOTALS_ONCE.format(after="0")};
    """,
    # 11: no table changes. A stored answer may leave its `text` out, its blocks giving it back
    # (`ledger.answer_form`): a lowtide before it would refuse such an answer when it read it, deep in a run, so the
    # version moves and an older lowtide refuses the ledger when it opens it instead, saying to upgrade.
    "SELECT 1",
    # 12: durable agent runs (`lowtide.agents`): a run, and the journal of its model turns and steps, each entry's
    # intent written before it starts and its result or error after (`ledger.journal_records`).
    """
    CREATE TABLE agent_runs (
        run_id     TEXT PRIMARY KEY,
        reference  TEXT NOT NULL,               -- module:qualname
        input      TEXT NOT NULL,               -- JSON
        state      TEXT NOT NULL,               -- running | parked | waiting-on-person | in-doubt | finished | ...
        result     TEXT,
        error      TEXT,
        cost_usd   TEXT NOT NULL,               -- exact decimal
        awaiting   TEXT,                        -- the key of the turn it waits for
        holder     TEXT,                        -- the process advancing it, and until when
        held_until REAL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX agent_runs_state ON agent_runs (state);
    CREATE TABLE agent_journal (
        run_id      TEXT NOT NULL REFERENCES agent_runs(run_id),
        position    INTEGER NOT NULL,
        kind        TEXT NOT NULL,              -- turn | step
        name        TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        key         TEXT NOT NULL,
        result      TEXT,
        error       TEXT,
        cost_usd    TEXT,
        idempotent  INTEGER NOT NULL,
        retry       INTEGER NOT NULL,
        attempts    INTEGER NOT NULL,
        started_at  REAL NOT NULL,
        ended_at    REAL,
        PRIMARY KEY (run_id, position)
    ) WITHOUT ROWID;
    """,
    # 13: the providers' webhook events received, each once by its id (`ledger.webhook_records`): a replay is known
    # by its delivery (the moment it was signed), a webhook that came before its batch's create was recorded by the
    # API's batch id.
    """
    CREATE TABLE webhook_events (
        provider          TEXT NOT NULL,
        event_id          TEXT NOT NULL,
        delivery          TEXT NOT NULL,
        provider_batch_id TEXT NOT NULL,
        kind              TEXT NOT NULL,
        batch_id          TEXT,
        received_at       REAL NOT NULL,
        PRIMARY KEY (provider, event_id)
    ) WITHOUT ROWID;
    CREATE INDEX webhook_events_batch ON webhook_events (provider, provider_batch_id);
    """,
    # 14: spend by owner (`ledger.spending`): the caps on teams and projects, each admitted request's owner and worst
    # case (its spend read through its request's state, never written twice), and the audit of creates and cancels.
    """
    CREATE TABLE spend_caps (
        scope     TEXT NOT NULL,                -- 'team' or 'project'
        name      TEXT NOT NULL,
        period    TEXT NOT NULL,                -- 'day', 'month' or 'all'
        limit_usd TEXT NOT NULL,                -- exact, as a decimal
        PRIMARY KEY (scope, name, period)
    ) WITHOUT ROWID;
    CREATE TABLE spend_entries (
        key            TEXT PRIMARY KEY,
        team           TEXT,
        project        TEXT,
        tags           TEXT NOT NULL,           -- a JSON object
        actor          TEXT NOT NULL,
        model          TEXT NOT NULL,
        worst_case_usd TEXT NOT NULL,
        created_at     REAL NOT NULL,
        host           TEXT NOT NULL,
        released       INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE INDEX spend_entries_team ON spend_entries (team, created_at);
    CREATE INDEX spend_entries_project ON spend_entries (project, created_at);
    CREATE INDEX spend_entries_at ON spend_entries (created_at);
    CREATE TABLE spend_audit (
        seq            INTEGER PRIMARY KEY,
        at             REAL NOT NULL,
        action         TEXT NOT NULL,
        subject        TEXT NOT NULL,
        team           TEXT,
        project        TEXT,
        tags           TEXT NOT NULL,
        actor          TEXT NOT NULL,
        worst_case_usd TEXT,
        cap_left_usd   TEXT,
        host           TEXT NOT NULL
    );
    CREATE INDEX spend_audit_at ON spend_audit (at);
    """,
    # 15: the trace context of a batch's span (`BatchIntent.trace`), written with its intent when telemetry is on, so
    # that whichever process polls and collects the batch continues its trace; NULL, and never read, while it is off.
    "ALTER TABLE batches ADD COLUMN trace TEXT;",
    # 16: the notices to the user's server (`ledger.outbox_records`), each once by its event id, until delivered
    # (`delivered_at`) or given up (`given_up_at`); a process trying one holds it until `lease_until`.
    """
    CREATE TABLE notice_outbox (
        event_id     TEXT PRIMARY KEY,
        kind         TEXT NOT NULL,
        url          TEXT NOT NULL,
        secret_env   TEXT NOT NULL,
        body         BLOB NOT NULL,
        made_at      REAL NOT NULL,
        give_up_at   REAL NOT NULL,
        tries        INTEGER NOT NULL DEFAULT 0,
        next_at      REAL NOT NULL,
        owner        TEXT,
        lease_until  REAL NOT NULL DEFAULT 0,
        delivered_at REAL,
        given_up_at  REAL
    ) WITHOUT ROWID;
    CREATE INDEX notice_outbox_due ON notice_outbox (next_at) WHERE delivered_at IS NULL AND given_up_at IS NULL;
    """,
    # 17: what a request answered outside the ledger's requests (a live call) cost (`SpendLedger.settle`): NULL while
    # its spend is read through its request's state, as a batch-mode request's always is.
    "ALTER TABLE spend_entries ADD COLUMN cost_usd TEXT;",
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(connection: sqlite3.Connection) -> int:
    """Bring the schema to `SCHEMA_VERSION`; returns the version it started from.

    Each step runs in one `BEGIN IMMEDIATE` transaction that reads the version again first, so processes that
    open a new ledger at the same moment apply every step exactly once (SQLite's DDL is transactional).
    """
    (started,) = connection.execute("PRAGMA user_version").fetchone()
    if started > SCHEMA_VERSION:
        raise LedgerVersionError(
            f"The ledger has schema version {started}, newer than this lowtide understands ({SCHEMA_VERSION}); "
            "upgrade lowtide.",
            field="ledger",
        )
    for version in range(int(started), SCHEMA_VERSION):
        connection.execute("BEGIN IMMEDIATE")
        try:
            (current,) = connection.execute("PRAGMA user_version").fetchone()
            if current <= version:
                for statement in statements(MIGRATIONS[version]):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {version + 1}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    return int(started)


def statements(script: str) -> list[str]:
    """The statements of a migration script: comments dropped (they may hold ';'), split on ';'."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [statement.strip() for statement in "\n".join(lines).split(";") if statement.strip()]
