"""The PostgreSQL ledger's schema, versioned in a `schema_version` table and migrated forward on first connection.

As with the SQLite ledger (`lowtide.ledger.sqlite.schema`), a migration is appended to `MIGRATIONS`, never edited once
released, and a database newer than the code refuses to be used rather than be misread. Processes on any number of
hosts may connect to a new database at once: each step runs in one transaction under an advisory lock, reads the
version again first, and so is applied exactly once (PostgreSQL's DDL is transactional).

The tables are the SQLite ledger's (the same columns, the same meaning), so that `lowtide ledger copy` moves a ledger
row for row: JSON is kept as the text lowtide wrote (the exact bytes: jsonb would reorder keys and drop duplicates),
costs as the exact digits of their `Decimal`, times as seconds since the epoch.
"""

from __future__ import annotations

from typing import LiteralString

from lowtide.ledger.postgres.totals import ADD_TOTALS

__all__ = [
    "CURRENT_MEMBERSHIP",
    "KINDS",
    "LOCK",
    "MIGRATIONS",
    "NEW_FORM",
    "NOTICE_CHANNEL",
    "REQUEST_VIEW",
    "SCHEMA_VERSION",
]

NOTICE_CHANNEL = "lowtide_batches"
"""The `LISTEN`/`NOTIFY` channel on which a batch's changes (results stored, state changed) are announced, with the
batch's ledger id as the payload."""

CURRENT_MEMBERSHIP: LiteralString = (
    "LEFT JOIN LATERAL (SELECT m.batch_id, m.seq FROM batch_members m WHERE m.key = r.key AND m.seq > r.left_seq"
    " ORDER BY m.seq DESC LIMIT 1) m ON TRUE LEFT JOIN batches b ON b.id = m.batch_id"
)
"""The joins, on `requests r` (schema 7), of the membership `m` it is in (its latest, unless it has left it since:
`left_seq`) and that batch `b`; both NULL when it is in none. A request joins a batch only once it has left the one
before, so at most one membership is past `left_seq`."""

NEW_FORM: LiteralString = """
    UPDATE requests r SET left_seq = l.seq FROM (
        SELECT m.key, max(m.seq) AS seq FROM batch_members m JOIN requests q ON q.key = m.key
        WHERE q.batch_id IS NULL OR m.batch_id <> q.batch_id GROUP BY m.key
    ) l WHERE r.key = l.key;
    INSERT INTO pending_requests (key, scope, created_at, owner, owner_until, updated_at)
        SELECT key, scope, created_at, owner, owner_until, updated_at FROM requests
        WHERE state = 'pending' AND batch_id IS NULL ORDER BY key;
    UPDATE requests SET state = 'pending', attempts = GREATEST(attempts - 1, 0) WHERE batch_id IS NOT NULL;
    UPDATE requests SET batch_id = NULL, owner = NULL, owner_until = NULL
        WHERE batch_id IS NOT NULL OR owner IS NOT NULL OR owner_until IS NOT NULL;
"""
"""Requests as schema 6 kept them (the SQLite ledger's form of 5: a request in a batch has `batch_id` set, its attempt
counted, state `submitting`; a pending one its owner on its row) brought to the form of 7 (a request in a batch: its
row as before it joined, in its latest membership; `left_seq`: the latest membership it left; a pending request: a row
of `pending_requests`, with its owner). A request's current membership must be its latest (`seq`). Part of migration
7, and of loading a copy (whose rows are in the form of 5): never edited."""

REQUEST_VIEW: LiteralString = (
    """
    CREATE VIEW request_view AS
        SELECT r.key, r.custom_id, r.actor, r.model, r.params, r.params_bytes,
            COALESCE(o.state, CASE WHEN b.id IS NULL THEN r.state WHEN b.provider_batch_id IS NOT NULL
                THEN 'waiting-on-batch' ELSE 'submitting' END) AS state,
            b.id AS batch_id, r.attempts + (b.id IS NOT NULL)::int AS attempts, r.max_attempts, o.response, o.error,
            r.worst_case_usd, o.cost_usd, o.live_cost_usd, r.created_at,
            COALESCE(o.at, b.intent_at, q.updated_at, r.updated_at) AS updated_at, q.owner,
            COALESCE(w.lease_until, q.owner_until) AS owner_until
        FROM requests r
    """
    + CURRENT_MEMBERSHIP
    + """
        LEFT JOIN LATERAL (
            SELECT x.state, x.response, x.error, x.cost_usd, x.live_cost_usd, x.at FROM results x
            WHERE x.batch_id = COALESCE(b.id, '') AND x.key = r.key ORDER BY x.seq DESC LIMIT 1
        ) o ON TRUE
        LEFT JOIN LATERAL (
            SELECT p.owner, p.owner_until, p.updated_at FROM pending_requests p WHERE p.key = r.key OFFSET 0
        ) q ON TRUE
        LEFT JOIN owners w ON w.owner = q.owner;
    """
)
"""`request_view` as schema 7 made it: each request with its current batch (`CURRENT_MEMBERSHIP`), its latest result
there, and its owner while it waits in the queue. Made by migration 7, and made again, the same, by 10 (a view must be
dropped while the columns it reads are altered). Never edited."""

KINDS: LiteralString = """
    UPDATE pending_requests q SET actor = r.actor, model = r.model FROM requests r WHERE r.key = q.key;
    INSERT INTO batch_kinds (batch_id, actor, model)
        SELECT DISTINCT m.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?')
        FROM batch_members m LEFT JOIN requests r ON r.key = m.key ORDER BY 1, 2, 3;
"""
"""Every batch's kinds (`batch_kinds`: the actors and models of all its members, '?' for a member whose request is
not there, as the sums name it) and the queue rows' actors and models, made from the requests and memberships as they
are: part of migration 8, and of loading a copy (whose batches come without kinds). A batch whose kinds are known is
known whole: a statement storing its results trusts a single kind for every result. Never edited."""

MIGRATIONS: tuple[LiteralString, ...] = (
    # 1: live rate-limit scopes shared by every process using the database (lowtide.ledger.postgres.quotas).
    """
    CREATE TABLE live_quotas (
        scope      TEXT PRIMARY KEY,            -- provider, endpoint and a digest of the credentials: never a secret
        state      TEXT NOT NULL,               -- the buckets and the pause, JSON (lowtide.ledger.quota_records)
        updated_at DOUBLE PRECISION NOT NULL
    )
    """,
    # 2: the ledger itself: batches, requests, members, results appended in arrival order, bulk runs, and the leases
    # of the processes that own work (heartbeats). The SQLite ledger's tables at its schema version 5.
    """
    CREATE TABLE batches (
        id                TEXT PRIMARY KEY,     -- lowtide's own id, recorded before the API is called
        provider          TEXT NOT NULL,
        endpoint          TEXT NOT NULL,        -- the API's base URL; never a key
        provider_batch_id TEXT UNIQUE,          -- the API's id, once known
        state             TEXT NOT NULL,        -- see BatchState
        phase             TEXT,
        request_count     INTEGER NOT NULL,
        request_bytes     BIGINT NOT NULL,
        intent_at         DOUBLE PRECISION NOT NULL,
        submitted_at      DOUBLE PRECISION,
        ended_at          DOUBLE PRECISION,
        collected_at      DOUBLE PRECISION,
        counts            TEXT,                 -- the API's request counts, JSON
        request_id        TEXT,                 -- the request-id of the create call, for support
        owner             TEXT,                 -- the process working on it (creating, reconciling, polling)
        owner_until       DOUBLE PRECISION,
        note              TEXT,
        create_steps      TEXT                  -- {"step": "value"}, JSON: what a create of several calls made
    );
    CREATE INDEX batches_state ON batches(state);
    CREATE INDEX batches_unresolved ON batches(provider, endpoint) WHERE provider_batch_id IS NULL;

    CREATE TABLE requests (
        key            TEXT PRIMARY KEY,        -- the caller's key, or one derived from the request
        custom_id      TEXT NOT NULL,
        actor          TEXT NOT NULL,
        model          TEXT NOT NULL,
        params         TEXT NOT NULL,           -- the provider's request body, JSON; never a key
        params_bytes   INTEGER NOT NULL,
        state          TEXT NOT NULL,           -- pending, submitting; or final, for a live answer
        batch_id       TEXT REFERENCES batches(id),
        attempts       INTEGER NOT NULL DEFAULT 0,
        max_attempts   INTEGER NOT NULL DEFAULT 1,
        worst_case_usd DOUBLE PRECISION,        -- the budget check's estimate, while not final
        created_at     DOUBLE PRECISION NOT NULL,
        updated_at     DOUBLE PRECISION NOT NULL,
        owner          TEXT,                    -- the process that queued it, until it is in a batch
        owner_until    DOUBLE PRECISION,
        scope          TEXT NOT NULL DEFAULT '' -- which engines may send it: a digest of provider, endpoint, key
    );
    CREATE INDEX requests_batch ON requests(batch_id);
    CREATE INDEX requests_actor ON requests(actor);
    -- The calls waiting for a batch, by scope: what a process flushing its window takes from the others.
    CREATE INDEX requests_pending ON requests(scope, created_at) WHERE state = 'pending';

    -- Which requests went into which batch, over every attempt: results are confirmed against it.
    CREATE TABLE batch_members (
        batch_id  TEXT NOT NULL REFERENCES batches(id),
        custom_id TEXT NOT NULL,
        key       TEXT NOT NULL REFERENCES requests(key),
        PRIMARY KEY (batch_id, custom_id)
    );
    CREATE INDEX batch_members_key ON batch_members(key);

    -- Every result in arrival order, never updated: a request's outcome is its latest result for the batch it is in
    -- ('' for a live answer, which has none).
    CREATE TABLE results (
        seq           BIGSERIAL PRIMARY KEY,
        batch_id      TEXT NOT NULL,
        key           TEXT NOT NULL,
        state         TEXT NOT NULL,
        response      TEXT,
        error         TEXT,
        cost_usd      TEXT,
        live_cost_usd TEXT,
        at            DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX results_batch_key ON results(batch_id, key, seq);

    -- The processes that own work, each renewing its lease while it lives (a heartbeat): a process on any host whose
    -- lease ran out is dead to the others, and its work is taken over by exactly one of them.
    CREATE TABLE owners (
        owner       TEXT PRIMARY KEY,
        host        TEXT NOT NULL,
        pid         INTEGER NOT NULL,
        started_at  DOUBLE PRECISION NOT NULL,
        lease_until DOUBLE PRECISION NOT NULL
    );

    CREATE VIEW request_view AS
        SELECT r.key, r.custom_id, r.actor, r.model, r.params, r.params_bytes,
            COALESCE(o.state, CASE WHEN r.state = 'submitting' AND b.provider_batch_id IS NOT NULL
                THEN 'waiting-on-batch' ELSE r.state END) AS state,
            r.batch_id, r.attempts, r.max_attempts, o.response, o.error, r.worst_case_usd, o.cost_usd,
            o.live_cost_usd, r.created_at, COALESCE(o.at, r.updated_at) AS updated_at, r.owner,
            COALESCE(w.lease_until, r.owner_until) AS owner_until
        FROM requests r
        LEFT JOIN LATERAL (
            SELECT x.state, x.response, x.error, x.cost_usd, x.live_cost_usd, x.at FROM results x
            WHERE x.batch_id = COALESCE(r.batch_id, '') AND x.key = r.key ORDER BY x.seq DESC LIMIT 1
        ) o ON TRUE
        LEFT JOIN batches b ON b.id = r.batch_id
        LEFT JOIN owners w ON w.owner = r.owner;

    CREATE TABLE runs (
        id            TEXT PRIMARY KEY,
        actor         TEXT NOT NULL,
        configuration TEXT NOT NULL,            -- the ActorConfiguration, JSON; names a key's variable, never a key
        options       TEXT NOT NULL,            -- limits, splitting and output options, JSON
        fingerprint   TEXT NOT NULL,            -- a hash of the items: a run id names one set of inputs
        item_count    INTEGER NOT NULL,
        created_at    DOUBLE PRECISION NOT NULL,
        updated_at    DOUBLE PRECISION NOT NULL
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
    # 3: the ledger's own identity, as the SQLite ledger's schema 7 has it: random, made once, a part of every custom
    # id made from then on. (gen_random_uuid: PostgreSQL 13 and later.)
    """
    CREATE TABLE identity (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id  TEXT NOT NULL                       -- 12 lowercase hex digits
    );
    INSERT INTO identity (one, id) VALUES (1, substr(md5(gen_random_uuid()::text), 1, 12));
    """,
    # 4: the trace context of the call that claimed a request, as the SQLite ledger's schema 8 has it.
    """
    CREATE TABLE request_traces (
        key     TEXT PRIMARY KEY REFERENCES requests(key),
        context TEXT NOT NULL
    );
    """,
    # 5: final results counted and priced per minute, batch, actor and model, as the SQLite ledger's schema 9 keeps
    # them, added by a trigger on every statement that stores results (a batch's, live answers, a copy's COPY), in
    # its transaction; backfilled here once. In a fixed order, so that two writers adding to the same rows never
    # wait on each other in a circle.
    """
    CREATE TABLE result_totals (
        minute        DOUBLE PRECISION NOT NULL,    -- the start of the minute the results were stored in
        batch_id      TEXT NOT NULL,                -- '' for live answers
        actor         TEXT NOT NULL,
        model         TEXT NOT NULL,
        answers       BIGINT NOT NULL,
        failures      BIGINT NOT NULL,              -- failed, expired or canceled
        cost_usd      NUMERIC NOT NULL,
        live_cost_usd NUMERIC NOT NULL,
        PRIMARY KEY (minute, batch_id, actor, model)
    );
    CREATE FUNCTION lowtide_add_totals() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO result_totals AS t (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
            SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),
                count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
                COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
            FROM added o LEFT JOIN requests r ON r.key = o.key WHERE o.state <> 'pending'
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = t.answers + excluded.answers,
            failures = t.failures + excluded.failures, cost_usd = t.cost_usd + excluded.cost_usd,
            live_cost_usd = t.live_cost_usd + excluded.live_cost_usd;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER results_totals AFTER INSERT ON results REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION lowtide_add_totals();
    INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
        SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),
            count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
            COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
        FROM results o LEFT JOIN requests r ON r.key = o.key WHERE o.state <> 'pending'
        GROUP BY 1, 2, 3, 4;
    """,
    # 6: a batch's result stored again (a collection replayed after a crash) was counted again in `result_totals`:
    # each batch's final result is counted once from now on (a live answer, batch '', each its own), and the sums
    # are made again.
    """
    CREATE OR REPLACE FUNCTION lowtide_add_totals() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO result_totals AS t (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
            SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),
                count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
                COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
            FROM added o LEFT JOIN requests r ON r.key = o.key WHERE o.state <> 'pending'
                AND (o.batch_id = '' OR NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id
                    AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending'))
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = t.answers + excluded.answers,
            failures = t.failures + excluded.failures, cost_usd = t.cost_usd + excluded.cost_usd,
            live_cost_usd = t.live_cost_usd + excluded.live_cost_usd;
        RETURN NULL;
    END
    $$;
    DELETE FROM result_totals;
    INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
        SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),
            count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
            COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
        FROM results o LEFT JOIN requests r ON r.key = o.key WHERE o.state <> 'pending'
            AND (o.batch_id = '' OR NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id
                AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending'))
        GROUP BY 1, 2, 3, 4;
    """,
    # 7: the intent before a create writes no request row, as the SQLite ledger's schema 6 does: a request's batch is
    # its latest membership (`batch_members.seq`, numbered in the order they were made, current memberships last),
    # unless it has left it since (`requests.left_seq`: requeued for a retry, with the attempt counted then; refused
    # or given up). A request waiting for a batch is a row of `pending_requests` (with its owner and lease), which
    # gathering takes from and the intent deletes: the queue of pending claims. Requests move to that form;
    # `requests.batch_id`, `owner` and `owner_until` are unused from here on (a copy's rows still carry them, in the
    # form of 5). The members' foreign keys go: the intent joins only requests it finds in the queue, to the batch it
    # inserts in the same transaction, and nothing deletes a request (a copy's `load` checks its members). The sums'
    # trigger looks each result's request up by key (an index lookup per result) instead of hashing the whole
    # requests table for every statement that stores results (a 100,000-request batch: twelve scans of 100,000 rows).
    """
    CREATE OR REPLACE FUNCTION lowtide_add_totals() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO result_totals AS t (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
            SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),
                count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
                COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
            FROM added o LEFT JOIN LATERAL (SELECT x.actor, x.model FROM requests x WHERE x.key = o.key OFFSET 0) r
                ON TRUE
            WHERE o.state <> 'pending'
                AND (o.batch_id = '' OR NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id
                    AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending'))
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = t.answers + excluded.answers,
            failures = t.failures + excluded.failures, cost_usd = t.cost_usd + excluded.cost_usd,
            live_cost_usd = t.live_cost_usd + excluded.live_cost_usd;
        RETURN NULL;
    END
    $$;
    ALTER TABLE batch_members ADD COLUMN seq BIGINT;
    UPDATE batch_members x SET seq = n.seq FROM (
        SELECT m.batch_id, m.custom_id, row_number() OVER (
            ORDER BY COALESCE(m.batch_id = r.batch_id, FALSE), b.intent_at, m.batch_id, m.custom_id) AS seq
        FROM batch_members m LEFT JOIN requests r ON r.key = m.key LEFT JOIN batches b ON b.id = m.batch_id
    ) n WHERE x.batch_id = n.batch_id AND x.custom_id = n.custom_id;
    CREATE SEQUENCE batch_members_seq AS BIGINT OWNED BY batch_members.seq;
    SELECT setval('batch_members_seq', COALESCE((SELECT max(seq) FROM batch_members), 0) + 1, FALSE);
    ALTER TABLE batch_members ALTER COLUMN seq SET DEFAULT nextval('batch_members_seq'), ALTER COLUMN seq SET NOT NULL,
        DROP CONSTRAINT batch_members_batch_id_fkey, DROP CONSTRAINT batch_members_key_fkey;
    DROP INDEX batch_members_key;
    CREATE INDEX batch_members_key ON batch_members(key, seq);

    CREATE TABLE pending_requests (
        key         TEXT PRIMARY KEY,           -- a request waiting for a batch, not in one
        scope       TEXT NOT NULL,              -- its request's: which engines may send it
        created_at  DOUBLE PRECISION NOT NULL,  -- its request's: the order gathering takes them in
        owner       TEXT,                       -- the process that queued it
        owner_until DOUBLE PRECISION,
        updated_at  DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX pending_requests_scope ON pending_requests(scope, created_at);
    ALTER TABLE requests ADD COLUMN left_seq BIGINT NOT NULL DEFAULT 0;
    """
    + NEW_FORM
    + """
    DROP INDEX requests_pending;
    DROP INDEX requests_batch;
    ALTER TABLE requests DROP CONSTRAINT requests_batch_id_fkey;
    DROP VIEW request_view;"""
    + REQUEST_VIEW,
    # 8: the sums' trigger looks no request up for a batch whose members are all of one actor and model (what a
    # batch almost always holds): `batch_kinds` keeps each batch's actors and models, written by its intent from the
    # queue rows it takes (which carry their request's actor and model from here on: no request is read for them),
    # and a statement storing one such batch's results adds them to the sums with that actor and model as they are.
    # A batch of several kinds, a live answer, or a batch `batch_kinds` does not know (copied in) is counted as before,
    # each result's request looked up by key. A batch's results are only ever its members' (matched by custom id).
    # The kinds of every batch already recorded, and the queue rows' actors and models, are filled in here once.
    """
    ALTER TABLE pending_requests ADD COLUMN actor TEXT, ADD COLUMN model TEXT;  -- NULL: read from its request
    CREATE TABLE batch_kinds (
        batch_id TEXT NOT NULL,                 -- a batch, and an actor and model of its members
        actor    TEXT NOT NULL,
        model    TEXT NOT NULL,
        PRIMARY KEY (batch_id, actor, model)
    );
    """
    + KINDS
    + """
    CREATE OR REPLACE FUNCTION lowtide_add_totals() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        lone       TEXT;    -- the one batch every result stored belongs to, if there is one
        kinds      BIGINT;  -- how many actors and models its members have
        lone_actor TEXT;
        lone_model TEXT;
    BEGIN
        SELECT min(o.batch_id) INTO lone FROM added o HAVING min(o.batch_id) = max(o.batch_id);
        IF lone IS NOT NULL AND lone <> '' THEN
            SELECT count(*), min(k.actor), min(k.model) INTO kinds, lone_actor, lone_model FROM batch_kinds k
                WHERE k.batch_id = lone;
        END IF;
        IF kinds = 1 THEN
            INSERT INTO result_totals AS t (minute, batch_id, actor, model, answers, failures, cost_usd,
                    live_cost_usd)
                SELECT floor(o.at / 60) * 60, lone, lone_actor, lone_model, count(*),
                    count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
                    COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
                FROM added o WHERE o.state <> 'pending'
                    AND NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id
                        AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending')
                GROUP BY 1 ORDER BY 1
            ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = t.answers + excluded.answers,
                failures = t.failures + excluded.failures, cost_usd = t.cost_usd + excluded.cost_usd,
                live_cost_usd = t.live_cost_usd + excluded.live_cost_usd;
            RETURN NULL;
        END IF;
        INSERT INTO result_totals AS t (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
            SELECT floor(o.at / 60) * 60, o.batch_id, COALESCE(r.actor, '?'), COALESCE(r.model, '?'), count(*),
                count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
                COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
            FROM added o LEFT JOIN LATERAL (SELECT x.actor, x.model FROM requests x WHERE x.key = o.key OFFSET 0) r
                ON TRUE
            WHERE o.state <> 'pending'
                AND (o.batch_id = '' OR NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id
                    AND p.key = o.key AND p.seq < o.seq AND p.state <> 'pending'))
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = t.answers + excluded.answers,
            failures = t.failures + excluded.failures, cost_usd = t.cost_usd + excluded.cost_usd,
            live_cost_usd = t.live_cost_usd + excluded.live_cost_usd;
        RETURN NULL;
    END
    $$;
    """,
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
)

SCHEMA_VERSION = len(MIGRATIONS)

LOCK = 0x6C6F77746964
"""The `pg_advisory_xact_lock` key (\"lowtid\") under which a migration runs: no two processes migrate at once."""
