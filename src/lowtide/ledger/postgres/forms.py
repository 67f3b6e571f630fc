"""SQL that a PostgreSQL ledger's migrations and a copy's load share (`schema`, `copying`): the joins of a request's
current membership, the form of schema 7 made from that of 5, `request_view` as schema 7 made it, and every batch's
kinds. Each is part of a released migration: never edited."""

from __future__ import annotations

from typing import LiteralString

__all__ = ["CURRENT_MEMBERSHIP", "KINDS", "NEW_FORM", "REQUEST_VIEW"]

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
