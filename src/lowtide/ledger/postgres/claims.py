"""The PostgreSQL ledger's requests: claims (a key claimed on two hosts at once is inserted by one), take-overs,
requeues, gathering other processes' pending calls, and reads of `request_view`. Operations (`steps.Op`), run by
either driver."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, LiteralString

from lowtide.ledger.postgres.steps import CHUNK, GATHERING, LEASE_OVER, Op, Reply, Sql, by_key, chunks, told_again
from lowtide.ledger.records import (
    KeyState,
    NewRequest,
    PendingRequest,
    RequestRecord,
    RequestState,
    request_record,
    request_state,
    stored_json,
)

__all__ = [
    "HOPED",
    "claim_new",
    "committed_usd",
    "gathering",
    "hoped",
    "identity",
    "requests",
    "requests_by_key",
    "requeue",
    "states_by_key",
    "take_over",
    "take_over_many",
    "take_pending",
]


def claim_new(
    requests: Sequence[NewRequest], *, owner: str, until: float, now: float, hoping: bool = False
) -> Op[tuple[dict[str, str], list[RequestRecord]]]:
    """`LedgerStore.claim_new`. A key another host inserts at the same moment is inserted by one of the two: the
    other's insert waits for that transaction and finds the key known (`ON CONFLICT DO NOTHING`), then reads its
    record.

    `hoping`: the requests are taken to be new and are inserted without `ON CONFLICT`: 0.78 s of the server's CPU
    for 100,000 claims, against 0.94 s (each key looked up before its insertion, and its row written once more
    after). A key the ledger knows then fails the statement on the requests' primary key; driven by
    `steps.run_hopeful`, the transaction is rolled back whole and the claim made again, not hoping. The stores hope
    for a claim of `HOPED` requests or more (`hoped`): a program's thousands of calls of one moment, new keys but for
    a few, almost always; a call or a few asked again (a stored answer wanted) are claimed expecting known keys."""
    inserted: dict[str, str] = {}
    known: list[RequestRecord] = []
    given: set[str] = set()
    for chunk in chunks(requests):
        rows: list[tuple[Any, ...]] = []
        params_of: dict[str, str] = {}
        for r in chunk:
            if r.key in given:
                continue  # of a key given twice, the first request counts
            given.add(r.key)
            params_of[r.key] = params = r.params if isinstance(r.params, str) else stored_json(r.params)
            worst = float(r.worst_case_usd) if r.worst_case_usd is not None else None
            rows.append((r.key, r.custom_id, r.actor, r.model, params, len(params), r.max_attempts, worst, r.scope))
        if not rows:
            continue
        columns = list(zip(*rows, strict=True))
        # Each request inserted is queued, owned by the claimer (`pending_requests`), in the same statement.
        reply = yield Sql(
            "WITH fresh AS (INSERT INTO requests (key, custom_id, actor, model, params, params_bytes, max_attempts,"
            " worst_case_usd, scope, state, created_at, updated_at)"
            " SELECT k, c, a, m, p, n, x, w, s, 'pending', %(now)s, %(now)s FROM unnest("
            "%(k)b::text[], %(c)b::text[], %(a)b::text[], %(m)b::text[], %(p)b::text[], %(n)b::int[], %(x)b::int[],"
            " %(w)b::float8[], %(s)b::text[]) AS t(k, c, a, m, p, n, x, w, s)"
            + ("" if hoping else " ON CONFLICT (key) DO NOTHING")
            + " RETURNING key, scope, actor, model),"
            " queued AS (INSERT INTO pending_requests (key, scope, created_at, owner, owner_until, updated_at, actor,"
            " model) SELECT key, scope, %(now)s, %(owner)s, %(until)s, %(now)s, actor, model FROM fresh)"
            " SELECT key FROM fresh",
            {"now": now, "owner": owner, "until": until, **dict(zip("kcampnxws", map(list, columns), strict=True))},
        )
        fresh = {str(row[0]) for row in reply.rows}
        for key in params_of:
            if key in fresh:
                inserted[key] = params_of[key]
        traced = [(r.key, r.trace) for r in chunk if r.trace and r.key in fresh]
        if traced:
            keys, contexts = zip(*traced, strict=True)
            yield Sql(
                "INSERT INTO request_traces (key, context) SELECT * FROM unnest(%b::text[], %b::text[])"
                " ON CONFLICT (key) DO NOTHING",
                (list(keys), list(contexts)),
            )
        there = [key for key in params_of if key not in fresh]
        if there:
            known.extend((yield from requests_by_key(sorted(there))))
    return inserted, known


HOPED = CHUNK
"""How many requests a claim holds for the stores to claim them hoping none is known (`claim_new`'s `hoping`)."""


def hoped(requests: Sequence[NewRequest]) -> bool:
    """Whether to claim `requests` hoping none is known: there are `HOPED` or more of them."""
    return len(requests) >= HOPED


def take_over(key: str, *, owner: str, until: float, now: float, dead_owner: str | None) -> Op[bool]:
    reply = yield Sql(
        "UPDATE pending_requests q SET owner = %(owner)s, owner_until = %(until)s, updated_at = %(now)s"
        " WHERE q.key = %(key)s AND (q.owner IS NULL OR q.owner = %(owner)s OR q.owner = %(dead)s"
        f" OR {LEASE_OVER.format(t='q')} < %(now)s)",
        {"owner": owner, "until": until, "now": now, "key": key, "dead": dead_owner},
    )
    if reply.rowcount == 1:
        return True
    # Pending in the batch it is in: its result there says it may succeed next time, and the collection that stored it
    # stopped before queueing it again. It leaves the batch (the attempt counted), queued here, by one taker alone.
    left = yield Sql(
        "WITH gone AS (UPDATE requests r SET left_seq = m.seq, attempts = r.attempts + 1, updated_at = %(now)s"
        " FROM batch_members m WHERE m.key = %(key)s AND r.key = m.key AND m.seq > r.left_seq"
        " AND (SELECT x.state FROM results x WHERE x.batch_id = m.batch_id AND x.key = r.key"
        " ORDER BY x.seq DESC LIMIT 1) = 'pending'"
        " RETURNING r.key, r.scope, r.created_at, r.actor, r.model)"
        f" {_QUEUE} FROM gone ON CONFLICT (key) DO NOTHING",
        {"owner": owner, "until": until, "now": now, "key": key},
    )
    return left.rowcount == 1


def take_over_many(keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float) -> Op[set[str]]:
    """`take_over` of each (key, dead owner), in order: driven in one transaction, a statement or two each."""
    taken: set[str] = set()
    for key, dead_owner in keys:
        if (yield from take_over(key, owner=owner, until=until, now=now, dead_owner=dead_owner)):
            taken.add(key)
    return taken


def requeue(keys: Iterable[str], *, owner: str, until: float, now: float) -> Op[None]:
    """Each request leaves the batch it is in (if any), the attempt it made there counted, and is queued again."""
    for chunk in chunks(sorted(set(keys))):
        yield Sql(
            "WITH gone AS (UPDATE requests r SET state = 'pending', attempts = r.attempts + (l.seq > r.left_seq)::int,"
            " left_seq = GREATEST(r.left_seq, l.seq), updated_at = %(now)s"
            " FROM (SELECT k, COALESCE((SELECT max(seq) FROM batch_members WHERE key = k), 0) AS seq"
            " FROM unnest(%(keys)b::text[]) AS k) l WHERE r.key = l.k RETURNING r.key, r.scope, r.created_at, r.actor,"
            " r.model)"
            f" {_QUEUE} FROM gone ORDER BY key ON CONFLICT (key) DO UPDATE SET owner = excluded.owner,"
            " owner_until = excluded.owner_until, updated_at = excluded.updated_at",
            {"owner": owner, "until": until, "now": now, "keys": list(chunk)},
        )


_QUEUE: LiteralString = (
    "INSERT INTO pending_requests (key, scope, created_at, owner, owner_until, updated_at, actor, model)"
    " SELECT key, scope, created_at, %(owner)s, %(until)s, %(now)s, actor, model"
)
"""The requests a statement's `gone` gives (key, scope, created_at, actor, model) queued, owned by %(owner)s until
%(until)s."""


def identity() -> Op[str]:
    """The ledger's own id (schema 3), which every custom id of its claims carries."""
    row = (yield Sql("SELECT id FROM identity")).one()
    assert row is not None, "the ledger has no identity (schema 3 makes it)"
    return str(row[0])


def committed_usd(actor: str) -> Op[Decimal]:
    reply = yield Sql(
        "SELECT COALESCE(SUM(cost_usd::numeric), 0),"
        " COALESCE(SUM(CASE WHEN state IN ('pending', 'submitting', 'waiting-on-batch')"
        " THEN worst_case_usd ELSE 0 END), 0) FROM request_view WHERE actor = %s",
        (actor,),
    )
    row = reply.one()
    assert row is not None
    return Decimal(str(row[0])) + Decimal(str(row[1]))


def requests(
    *, batch_id: str | None, actor: str | None, states: Iterable[RequestState] | None
) -> Op[list[RequestRecord]]:
    wanted = [s.value for s in states] if states is not None else None
    # A batch's requests by its members first: the view finds each one's batch.
    reply = yield Sql(
        "SELECT * FROM request_view WHERE (%(batch)s::text IS NULL OR (batch_id = %(batch)s"
        " AND key IN (SELECT key FROM batch_members WHERE batch_id = %(batch)s)))"
        " AND (%(actor)s::text IS NULL OR actor = %(actor)s)"
        " AND (%(states)s::text[] IS NULL OR state = ANY(%(states)s)) ORDER BY created_at, key",
        {"batch": batch_id, "actor": actor, "states": wanted},
    )
    return [request_record(row) for row in reply.dicts()]


def requests_by_key(keys: Sequence[str]) -> Op[list[RequestRecord]]:
    """The records of `keys` the ledger knows, in the order given."""
    # Each key looked up by itself (an index lookup, whatever the table's statistics say): `key = ANY(...)` was
    # planned as a scan of the whole table once the requests table no longer carried its intents' dead rows (schema
    # 7), 40 ms a read at 100,000 requests, for every reread of the keys waiting on a batch.
    return (yield from by_key(keys, _RECORDS, _records))


_RECORDS: LiteralString = (
    "SELECT v.* FROM unnest(%b::text[]) AS k(key) CROSS JOIN LATERAL"
    " (SELECT * FROM request_view r WHERE r.key = k.key OFFSET 0) v"
)


def _records(reply: Reply) -> Iterator[tuple[str, RequestRecord]]:
    for row in reply.dicts():
        record = request_record(row)
        yield record.key, record


def states_by_key(keys: Sequence[str]) -> Op[list[KeyState]]:
    """The state, batch and owner of each of `keys` the ledger knows, in the order given (no parameters nor answer
    read)."""
    # Each key looked up by itself, as `requests_by_key` does: `key = ANY(...)` over the view took 17 us of the
    # server's a key, this 11 (pg_stat_statements, three hosts waiting on one another's batch, 30,000 calls).
    return (yield from by_key(keys, _STATES, _states))


_STATES: LiteralString = (
    "SELECT v.key, v.state, v.batch_id, v.owner, v.owner_until FROM unnest(%b::text[]) AS k(key) CROSS JOIN"
    " LATERAL (SELECT r.key, r.state, r.batch_id, r.owner, r.owner_until FROM request_view r"
    " WHERE r.key = k.key OFFSET 0) v"
)


def _states(reply: Reply) -> Iterator[tuple[str, KeyState]]:
    for key, state, batch_id, owner, until in reply.rows:
        yield (
            str(key),
            KeyState(
                str(key),
                request_state(str(state)),
                None if batch_id is None else str(batch_id),
                None if owner is None else str(owner),
                None if until is None else float(until),
            ),
        )


def traces_of(keys: Sequence[str]) -> Op[dict[str, str]]:
    """The trace contexts stored with `keys` (schema 4), of those that have one."""
    found: dict[str, str] = {}
    for chunk in chunks(keys, size=500):
        reply = yield Sql("SELECT key, context FROM request_traces WHERE key = ANY(%b)", (list(chunk),))
        for row in reply.rows:
            found[str(row[0])] = str(row[1])
    return found


def take_pending(
    scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int, again: bool = False
) -> Op[list[PendingRequest]]:
    """`LedgerStore.take_pending`. `again`: made again after a transient error (`steps.told_again`), it first looks
    for what an earlier attempt took, should its commit have applied with its answer lost (`outage`): the calls of
    the scope in this owner's hands, stamped with this gathering's `now` (no one else takes them meanwhile: the owner
    is alive). They are the answer; none, and it gathers as the first attempt did."""
    if not scope or limit <= 0:
        return []
    if again:
        reply = yield Sql(
            f"{_GATHERED} WHERE q.scope = %s AND q.owner = %s AND q.updated_at = %s ORDER BY q.created_at, q.key",
            (scope, owner, now),
        )
        if reply.rows:
            return [_pending(row) for row in reply.rows]
    # One process at a time gathers a scope, and none while an intent of the scope is being written (it shares the
    # lock): another flushing it right now takes these calls itself.
    free = (yield Sql("SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", (GATHERING, scope))).one()
    if free is None or not free[0]:
        return []
    reply = yield Sql(
        f"{_GATHERED} WHERE q.scope = %s AND q.owner IS DISTINCT FROM %s"
        " ORDER BY q.created_at, q.key LIMIT %s FOR UPDATE OF q SKIP LOCKED",
        (scope, owner, limit),
    )
    taken: list[PendingRequest] = []
    size = 0
    for row in reply.rows:
        size += int(row[3]) + 64
        if size > max_bytes:
            break
        taken.append(_pending(row))
    if taken:
        yield Sql(
            "UPDATE pending_requests SET owner = %s, owner_until = %s, updated_at = %s WHERE key = ANY(%b)",
            (owner, until, now, [t.key for t in taken]),
        )
    return taken


def gathering(
    scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
) -> Callable[[], Op[list[PendingRequest]]]:
    """How a driver makes `take_pending`: told when it is made again (`steps.told_again`)."""
    return told_again(
        lambda again: take_pending(
            scope, owner=owner, until=until, now=now, limit=limit, max_bytes=max_bytes, again=again
        )
    )


_GATHERED: LiteralString = (
    "SELECT q.key, r.custom_id, r.params, r.params_bytes, r.model"
    " FROM pending_requests q JOIN requests r ON r.key = q.key"
)
"""A queued call as a gathering takes it (`_pending` reads it)."""


def _pending(row: tuple[Any, ...]) -> PendingRequest:
    key, custom_id, params, params_bytes, model = row
    return PendingRequest(str(key), str(custom_id), str(params), int(params_bytes), str(model))
