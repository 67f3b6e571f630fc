"""The PostgreSQL ledger's batches: intents and their members, creates recorded, refused, given up or resumed,
adoptions, batches' leases and statuses, and reads. Operations (`steps.Op`), run by either driver.

A take-over, a lease, an adoption, a given-up or resumed intent is one guarded `UPDATE`, which PostgreSQL re-checks
on the row's newest version when another transaction changed it meanwhile: exactly one contender wins. Every change
other processes may wait on is announced (`NOTIFY`) in the transaction that makes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import LiteralString

from lowtide.errors import LedgerError
from lowtide.ledger.postgres.steps import BATCH, GATHERING, LEASE_OVER, NOTIFY, Op, Sql, chunks
from lowtide.ledger.records import (
    ADOPTED,
    DISOWNED,
    FOREIGN,
    BatchClaim,
    BatchCreated,
    BatchIntent,
    BatchRecord,
    BatchState,
    batch_record,
    foreign_batch_id,
    stored_json,
)

__all__ = [
    "adopt",
    "batch",
    "batch_holding",
    "batches",
    "claim_batch",
    "create_steps",
    "disown",
    "give_up_intent",
    "members",
    "members_and_attempts",
    "record_collected",
    "record_create_step",
    "record_intent",
    "record_refused",
    "record_status",
    "record_submitted",
    "record_unknown",
    "release_batch",
    "resume_intent",
    "unresolved",
]


def record_intent(intent: BatchIntent, *, location: str) -> Op[list[str]]:
    batch_id, members, owner, now = intent.batch_id, intent.members, intent.owner, intent.now
    if intent.scope:
        # Not while another process gathers the scope's pending calls (`claims.take_pending` holds this lock alone,
        # and gathers none while an intent holds it): an intent begun as another process's gathering takes its calls
        # waits for that gathering to end, then finds them taken and leaves them out, so that the calls of processes
        # whose windows close together travel in the gatherer's one batch. Without it, the gathering skipped the
        # rows the intent had locked (`SKIP LOCKED`) and took the rest: the calls split across two or three batches.
        # Taken first, before any row: an intent waits for it holding nothing.
        yield Sql("SELECT pg_advisory_xact_lock_shared(%s, hashtext(%s))", (GATHERING, intent.scope))
    # The queue rows are deleted by key (`_JOIN`), a thousand keys a statement: by the queue's primary key, whatever
    # the table's statistics say. A queue filled since it was last analyzed (a burst of 100,000 claims) was read
    # whole for every chunk instead (a sequential scan, estimated the cheaper at 100,000 rows): 0.61 s of the
    # server's CPU for the intent of 100,000 calls against 0.73 s (three runs each, `log_statement_stats`), and a
    # scan of the whole queue a chunk for a queue of millions. For this transaction alone.
    yield Sql("SET LOCAL enable_seqscan = off")
    made = yield Sql(
        "INSERT INTO batches (id, provider, endpoint, state, request_count, request_bytes, intent_at,"
        " owner, owner_until, trace) VALUES (%s, %s, %s, 'intent', %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
        (
            batch_id,
            intent.provider,
            intent.endpoint,
            len(members),
            intent.request_bytes,
            now,
            owner,
            intent.until,
            intent.trace or None,
        ),
    )
    if made.rowcount == 0:
        # Recorded by an earlier attempt of this very call, whose commit applied but whose answer was lost (the server
        # went away at COMMIT, `outage`): the batch is this owner's intent of this call's `now`, and what it recorded
        # is the answer. Any other batch of that id is refused, as the other stores refuse it.
        mine = yield Sql(
            "SELECT 1 FROM batches WHERE id = %s AND owner = %s AND intent_at = %s AND provider = %s AND endpoint = %s",
            (batch_id, owner, now, intent.provider, intent.endpoint),
        )
        if not mine.rows:
            raise LedgerError(f"The ledger {location} could not record batch {batch_id}: it holds a batch of that id.")
        held = yield Sql("SELECT key FROM batch_members WHERE batch_id = %s", (batch_id,))
        recorded = {str(row[0]) for row in held.rows}
        return [key for key, _ in members if key in recorded]
    # One statement a chunk, in key order: the members still in the queue of pending requests and this owner's (or
    # no one's) leave it, and only those become its members. A request another process is taking into its batch
    # (`take_pending`) is waited for, and then found not to be this owner's any more: it stays out. Only rows this
    # owner's guard passes are deleted, so two intents contend for none: a process queues only requests it owns (its
    # claims, what it took over, gathered or had requeued), and a request owned by none (back from a refused create)
    # is taken over, by one process, before it is queued again. (Were two to meet in a circle all the same, PostgreSQL
    # would end one with a deadlock error: its whole intent rolled back, nothing sent.) `take_pending` never waits
    # (`SKIP LOCKED`). Locking every member first, in key order, cost 40% of the intent's server time. The members
    # left out (another process gathered them: all of them, often) are checked to be requests in one statement, at the
    # end, by key (a lateral join: `key = ANY(...)` of tens of thousands may be planned as a scan).
    kept: set[str] = set()
    missing: list[str] = []
    for chunk in chunks(sorted(dict(members).items())):
        keys = [key for key, _ in chunk]
        ids = [custom_id for _, custom_id in chunk]
        reply = yield Sql(_JOIN, {"keys": keys, "ids": ids, "batch": batch_id, "owner": owner, "now": now})
        joined = {str(row[0]) for row in reply.rows}
        kept |= joined
        missing.extend(key for key in keys if key not in joined)
    strangers: list[str] = []
    if missing:  # not this owner's pending request any more, or not a request at all
        found = yield Sql(_STRANGERS, (missing,))
        strangers = [str(row[0]) for row in found.rows]
    if strangers:  # a batch of requests the ledger does not hold would be answered to nobody
        raise LedgerError(
            f"The ledger {location} could not record batch {batch_id}: it holds no request {', '.join(strangers[:5])}."
        )
    if len(kept) < len(members):
        if not kept:
            yield Sql("DELETE FROM batches WHERE id = %s", (batch_id,))
            return []
        yield Sql("UPDATE batches SET request_count = %s WHERE id = %s", (len(kept), batch_id))
    return [key for key, _ in members if key in kept]


_JOIN: LiteralString = (
    "WITH joined AS (DELETE FROM pending_requests q"
    " WHERE q.key = ANY(%(keys)b) AND (q.owner IS NULL OR q.owner = %(owner)s) RETURNING q.key, q.actor, q.model),"
    " kinds AS (INSERT INTO batch_kinds (batch_id, actor, model) SELECT DISTINCT %(batch)s,"
    " COALESCE(j.actor, (SELECT r.actor FROM requests r WHERE r.key = j.key)),"
    " COALESCE(j.model, (SELECT r.model FROM requests r WHERE r.key = j.key)) FROM joined j"
    " ORDER BY 2, 3 ON CONFLICT DO NOTHING)"
    " INSERT INTO batch_members (batch_id, key, custom_id) SELECT %(batch)s, t.k, t.c"
    " FROM unnest(%(keys)b::text[], %(ids)b::text[]) AS t(k, c) JOIN joined j ON j.key = t.k ORDER BY t.k"
    " RETURNING key"
)
"""A chunk of an intent's members, in one statement: those still queued and the owner's (or no one's) taken off the
queue, and recorded as members (the request's batch from then on: no request row is written), their actors and models
as the batch's kinds (`batch_kinds`, from the queue rows: a row queued before schema 8 has none, and its request is
read); the keys that joined."""


_STRANGERS: LiteralString = (
    "SELECT t.k FROM unnest(%b::text[]) AS t(k)"
    " LEFT JOIN LATERAL (SELECT 1 AS one FROM requests r WHERE r.key = t.k) x ON true WHERE x.one IS NULL"
)
"""Which of the keys given are no request's: each looked up by itself on the key (a lateral join: `key = ANY(...)` of
tens of thousands may be planned as a scan), only those found missing returned."""


def record_submitted(created: BatchCreated) -> Op[None]:
    yield Sql(
        "UPDATE batches SET provider_batch_id = %s, state = 'waiting-on-batch', phase = %s,"
        " request_id = %s, submitted_at = COALESCE(submitted_at, %s) WHERE id = %s",
        (created.provider_batch_id, created.phase, created.request_id, created.now, created.batch_id),
    )
    yield Sql(NOTIFY, (created.batch_id,))


def record_unknown(batch_id: str, *, note: str) -> Op[None]:
    yield Sql("UPDATE batches SET state = 'unknown', note = %s WHERE id = %s", (note, batch_id))


def give_up_intent(
    batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None
) -> Op[list[str] | None]:
    failed = yield Sql(
        "UPDATE batches SET state = 'failed', note = %(note)s"
        " WHERE id = %(id)s AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')"
        " AND (%(at)s::float8 IS NULL OR intent_at = %(at)s)",
        {"note": note, "id": batch_id, "at": intent_at},
    )
    if failed.rowcount != 1:
        # Resolved elsewhere, or given up by an earlier attempt of this very call whose commit applied but whose
        # answer was lost (`outage`): then the batch failed with this note and its members wait, queued again,
        # in this owner's hands, stamped with this call's `now`.
        mine = yield Sql(
            "SELECT 1 FROM batches b JOIN batch_members m ON m.batch_id = b.id JOIN pending_requests q ON q.key = m.key"
            " WHERE b.id = %(id)s AND b.state = 'failed' AND b.note = %(note)s AND q.owner = %(owner)s"
            " AND q.updated_at = %(now)s LIMIT 1",
            {"id": batch_id, "note": note, "owner": owner, "now": now},
        )
        if not mine.rows:
            return None
        return (yield from _member_keys(batch_id))
    keys = yield from _member_keys(batch_id)
    yield from _leave(batch_id, owner=owner, until=until, now=now)
    yield Sql(NOTIFY, (batch_id,))
    return keys


def _member_keys(batch_id: str) -> Op[list[str]]:
    return [str(row[0]) for row in (yield Sql("SELECT key FROM batch_members WHERE batch_id = %s", (batch_id,))).rows]


def resume_intent(batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> Op[bool]:
    # The attempt it looked at, or (made again after a commit whose answer was lost, `outage`) the one this call
    # began: resumed already by this owner at this call's `now`.
    reply = yield Sql(
        "UPDATE batches SET state = 'intent', intent_at = %(now)s, owner = %(owner)s, owner_until = %(until)s,"
        " note = NULL WHERE id = %(id)s AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')"
        " AND (intent_at = %(at)s OR (intent_at = %(now)s AND owner = %(owner)s))",
        {"now": now, "owner": owner, "until": until, "id": batch_id, "at": intent_at},
    )
    return reply.rowcount == 1


def record_refused(batch_id: str, *, note: str, now: float) -> Op[None]:
    yield Sql("UPDATE batches SET state = 'failed', note = %s WHERE id = %s", (note, batch_id))
    yield from _leave(batch_id, owner=None, until=None, now=now)
    yield Sql(NOTIFY, (batch_id,))


def _leave(batch_id: str, *, owner: str | None, until: float | None, now: float) -> Op[None]:
    """The requests in `batch_id` (an intent that came to nothing: refused, or given up) leave it, the attempt not
    counted, and are queued again, owned by `owner` (or by none)."""
    yield Sql(
        "WITH gone AS (UPDATE requests r SET left_seq = m.seq, updated_at = %(now)s FROM batch_members m"
        " WHERE m.batch_id = %(batch)s AND r.key = m.key AND r.left_seq < m.seq"
        " RETURNING r.key, r.scope, r.created_at, r.actor, r.model)"
        " INSERT INTO pending_requests (key, scope, created_at, owner, owner_until, updated_at, actor, model)"
        " SELECT key, scope, created_at, %(owner)s, %(until)s, %(now)s, actor, model FROM gone ORDER BY key"
        " ON CONFLICT (key) DO NOTHING",
        {"batch": batch_id, "owner": owner, "until": until, "now": now},
    )


def record_status(batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None) -> Op[None]:
    state = BatchState.ENDED.value if phase == "ended" else BatchState.WAITING.value
    yield Sql(
        "UPDATE batches SET phase = %s, counts = %s, ended_at = %s,"
        " state = CASE WHEN state IN ('waiting-on-batch', 'ended') THEN %s ELSE state END WHERE id = %s",
        (phase, stored_json(counts) if counts is not None else None, ended_at, state, batch_id),
    )


def record_collected(batch_id: str, *, state: BatchState, now: float) -> Op[None]:
    yield Sql(
        "UPDATE batches SET state = %s, collected_at = %s, owner = NULL, owner_until = NULL WHERE id = %s",
        (state.value, now, batch_id),
    )
    yield Sql(NOTIFY, (batch_id,))


def adopt(batch_id: str, *, provider_batch_id: str, now: float) -> Op[bool]:
    from psycopg.errors import UniqueViolation

    try:  # in a savepoint: another host adopting the same batch meanwhile wins
        adopted = yield Sql(
            "UPDATE batches SET provider_batch_id = %(api)s, state = 'waiting-on-batch',"
            " submitted_at = %(now)s, note = %(note)s"
            " WHERE id = %(id)s AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')"
            " AND NOT EXISTS (SELECT 1 FROM batches WHERE provider_batch_id = %(api)s)",
            {"api": provider_batch_id, "now": now, "id": batch_id, "note": ADOPTED},
            savepoint=True,
        )
    except UniqueViolation:
        return False
    if adopted.rowcount == 1:
        yield Sql(NOTIFY, (batch_id,))
        return True
    # Adopted elsewhere, or by an earlier attempt of this very call whose commit applied but whose answer was lost
    # (`outage`): then the intent holds this batch, adopted at this call's `now`.
    mine = yield Sql(
        "SELECT 1 FROM batches WHERE id = %s AND provider_batch_id = %s AND note = %s AND submitted_at = %s",
        (batch_id, provider_batch_id, ADOPTED, now),
    )
    return bool(mine.rows)


def disown(batch_id: str, *, provider_batch_id: str, now: float) -> Op[bool]:
    """`LedgerStore.disown`: the intent unknown again, the batch kept apart as foreign, in one transaction."""
    reply = yield Sql(
        "UPDATE batches SET provider_batch_id = NULL, state = 'unknown', phase = NULL, counts = NULL,"
        " submitted_at = NULL, ended_at = NULL, note = %s"
        " WHERE id = %s AND provider_batch_id = %s AND state IN ('waiting-on-batch', 'ended')"
        " RETURNING provider, endpoint",
        (DISOWNED, batch_id, provider_batch_id),
    )
    row = reply.one()
    if row is None:
        # Disowned elsewhere, or by an earlier attempt of this very call whose commit applied but whose answer was
        # lost (`outage`): then the batch is kept apart as foreign since this call's `now`.
        mine = yield Sql(
            "SELECT 1 FROM batches f JOIN batches b ON b.id = %s WHERE f.id = %s AND f.note = %s AND f.intent_at = %s"
            " AND b.note = %s AND b.provider_batch_id IS NULL",
            (batch_id, foreign_batch_id(provider_batch_id), FOREIGN, now, DISOWNED),
        )
        return bool(mine.rows)
    yield Sql(
        "INSERT INTO batches (id, provider, endpoint, provider_batch_id, state, request_count, request_bytes,"
        " intent_at, note) VALUES (%s, %s, %s, %s, 'failed', 0, 0, %s, %s)",
        (foreign_batch_id(provider_batch_id), row[0], row[1], provider_batch_id, now, FOREIGN),
    )
    yield Sql(NOTIFY, (batch_id,))
    return True


def claim_batch(claim: BatchClaim) -> Op[bool]:
    reply = yield Sql(
        "UPDATE batches b SET owner = %(owner)s, owner_until = %(until)s"
        " WHERE b.id = %(id)s AND (%(force)s OR b.owner IS NULL OR b.owner = %(owner)s OR b.owner = %(dead)s"
        f" OR {LEASE_OVER.format(t='b')} IS NULL OR {LEASE_OVER.format(t='b')} < %(now)s)"
        " AND b.state IN ('intent', 'unknown', 'waiting-on-batch', 'ended')",
        {
            "owner": claim.owner,
            "until": claim.until,
            "id": claim.batch_id,
            "force": claim.force,
            "dead": claim.dead_owner,
            "now": claim.now,
        },
    )
    return reply.rowcount == 1


def release_batch(batch_id: str, *, owner: str) -> Op[None]:
    yield Sql("UPDATE batches SET owner = NULL, owner_until = NULL WHERE id = %s AND owner = %s", (batch_id, owner))
    yield Sql(NOTIFY, (batch_id,))


def batch(batch_id: str) -> Op[BatchRecord | None]:
    reply = yield Sql(f"{BATCH} WHERE b.id = %(id)s OR b.provider_batch_id = %(id)s", {"id": batch_id})
    rows = reply.dicts()
    return batch_record(rows[0]) if rows else None


def batches(*, states: Iterable[BatchState] | None) -> Op[list[BatchRecord]]:
    wanted = [s.value for s in states] if states is not None else None
    reply = yield Sql(
        f"{BATCH} WHERE (%(states)s::text[] IS NULL OR b.state = ANY(%(states)s)) ORDER BY b.intent_at, b.id",
        {"states": wanted},
    )
    return [batch_record(row) for row in reply.dicts()]


def batch_durations(
    provider: str, *, last: int, endpoint: str | None = None, requests: tuple[int, int] | None = None
) -> Op[list[float]]:
    fewest, most = requests if requests is not None else (None, None)
    reply = yield Sql(
        "SELECT ended_at - submitted_at FROM batches WHERE provider = %s AND state IN ('ended', 'collected')"
        " AND submitted_at IS NOT NULL AND ended_at IS NOT NULL AND (%s::text IS NULL OR endpoint = %s)"
        " AND (%s::bigint IS NULL OR request_count BETWEEN %s AND %s) ORDER BY ended_at DESC LIMIT %s",
        (provider, endpoint, endpoint, fewest, fewest, most, last),
    )
    return [max(0.0, float(row[0])) for row in reply.rows]


def record_create_step(batch_id: str, step: str, value: str) -> Op[None]:
    row = (yield Sql("SELECT create_steps FROM batches WHERE id = %s FOR UPDATE", (batch_id,))).one()
    steps: dict[str, str] = json.loads(str(row[0])) if row is not None and row[0] else {}
    steps[step] = value
    yield Sql("UPDATE batches SET create_steps = %s WHERE id = %s", (stored_json(steps), batch_id))


def create_steps(batch_id: str) -> Op[dict[str, str]]:
    row = (yield Sql("SELECT create_steps FROM batches WHERE id = %s", (batch_id,))).one()
    return dict(json.loads(str(row[0]))) if row is not None and row[0] else {}


def unresolved(*, provider: str, endpoint: str) -> Op[list[BatchRecord]]:
    reply = yield Sql(
        f"{BATCH} WHERE b.state IN ('intent', 'unknown') AND b.provider_batch_id IS NULL"
        " AND b.provider = %s AND b.endpoint = %s ORDER BY b.intent_at, b.id",
        (provider, endpoint),
    )
    return [batch_record(row) for row in reply.dicts()]


def batch_holding(custom_id: str, among: Sequence[str]) -> Op[str | None]:
    if not among:
        return None
    row = (
        yield Sql(
            "SELECT batch_id FROM batch_members WHERE custom_id = %s AND batch_id = ANY(%s) LIMIT 1",
            (custom_id, list(among)),
        )
    ).one()
    return str(row[0]) if row is not None else None


def members(batch_id: str) -> Op[dict[str, str]]:
    reply = yield Sql("SELECT custom_id, key FROM batch_members WHERE batch_id = %s", (batch_id,))
    return {str(custom_id): str(key) for custom_id, key in reply.rows}


def members_and_attempts(batch_id: str) -> Op[tuple[dict[str, str], dict[str, tuple[int, int]]]]:
    found: dict[str, str] = {}
    attempts: dict[str, tuple[int, int]] = {}
    pairs: dict[tuple[int, int], tuple[int, int]] = {}
    # A request in a later batch has left this one: only the latest membership can be past `left_seq`.
    reply = yield Sql(
        "SELECT m.custom_id, m.key, r.attempts, r.max_attempts, m.seq > r.left_seq"
        " FROM batch_members m LEFT JOIN requests r ON r.key = m.key WHERE m.batch_id = %s",
        (batch_id,),
    )
    for custom_id, key, made, allowed, current in reply.rows:
        custom_id, key = str(custom_id), str(key)
        key = custom_id if key == custom_id else key
        found[custom_id] = key
        if current:  # the attempt it is making now counts
            pair = (int(made) + 1, int(allowed))
            attempts[key] = pairs.setdefault(pair, pair)
    return found, attempts
