"""The PostgreSQL ledger's migrations 1 to 8 (`schema.MIGRATIONS` begins with them): the ledger made, its identity,
the claims' trace context, results counted per minute, batch, actor and model, the queue of pending claims (the form
of schema 7), and the sums counted by a batch's kinds. Released: never edited."""

from __future__ import annotations

from typing import LiteralString

from lowtide.ledger.postgres.forms import KINDS, NEW_FORM, REQUEST_VIEW

__all__ = ["MIGRATIONS_1_8"]

MIGRATIONS_1_8: tuple[LiteralString, ...] = (
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
)
