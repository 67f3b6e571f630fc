"""The PostgreSQL ledger's requests: claims (a key claimed on two hosts at once is inserted by one), take-overs,
requeues, gathering other processes' pending calls, and reads of `request_view`. Operations (`steps.Op`), run by
either driver."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from lowtide.ledger.postgres.steps import LEASE_OVER, Op, Sql, chunks
from lowtide.ledger.records import (
    KeyState,
    NewRequest,
    PendingRequest,
    RequestRecord,
    RequestState,
    request_record,
    stored_json,
)

__all__ = [
    "claim_new",
    "committed_usd",
    "identity",
    "requests",
    "requests_by_key",
    "requeue",
    "states_by_key",
    "take_over",
    "take_pending",
]

_GATHERING = 0x6C74  # the advisory lock space of gathering a scope's pending calls ("lt")


def claim_new(
    requests: Sequence[NewRequest], *, owner: str, until: float, now: float
) -> Op[tuple[dict[str, str], list[RequestRecord]]]:
    """`LedgerStore.claim_new`. A key another host inserts at the same moment is inserted by one of the two: the
    other's insert waits for that transaction and finds the key known (`ON CONFLICT DO NOTHING`), then reads its
    record."""
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
        reply = yield Sql(
            "INSERT INTO requests (key, custom_id, actor, model, params, params_bytes, max_attempts,"
            " worst_case_usd, scope, state, created_at, updated_at, owner, owner_until)"
            " SELECT k, c, a, m, p, n, x, w, s, 'pending', %s, %s, %s, %s FROM unnest("
            "%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::int[], %b::int[],"
            " %b::float8[], %b::text[]) AS t(k, c, a, m, p, n, x, w, s)"
            " ON CONFLICT (key) DO NOTHING RETURNING key",
            (now, now, owner, until, *(list(column) for column in columns)),
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


def take_over(key: str, *, owner: str, until: float, now: float, dead_owner: str | None) -> Op[bool]:
    reply = yield Sql(
        "UPDATE requests r SET owner = %(owner)s, owner_until = %(until)s, updated_at = %(now)s"
        " WHERE r.key = %(key)s AND (SELECT state FROM request_view WHERE key = %(key)s) = 'pending'"
        " AND (r.owner IS NULL OR r.owner = %(owner)s OR r.owner = %(dead)s"
        f" OR {LEASE_OVER.format(t='r')} < %(now)s)",
        {"owner": owner, "until": until, "now": now, "key": key, "dead": dead_owner},
    )
    return reply.rowcount == 1


def requeue(keys: Iterable[str], *, owner: str, until: float, now: float) -> Op[None]:
    for chunk in chunks(list(keys)):
        yield Sql(
            "UPDATE requests SET state = 'pending', batch_id = NULL, owner = %s, owner_until = %s,"
            " updated_at = %s WHERE key = ANY(%b)",
            (owner, until, now, list(chunk)),
        )


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
    reply = yield Sql(
        "SELECT * FROM request_view WHERE (%(batch)s::text IS NULL OR batch_id = %(batch)s)"
        " AND (%(actor)s::text IS NULL OR actor = %(actor)s)"
        " AND (%(states)s::text[] IS NULL OR state = ANY(%(states)s)) ORDER BY created_at, key",
        {"batch": batch_id, "actor": actor, "states": wanted},
    )
    return [request_record(row) for row in reply.dicts()]


def requests_by_key(keys: Sequence[str]) -> Op[list[RequestRecord]]:
    """The records of `keys` the ledger knows, in the order given."""
    found: dict[str, RequestRecord] = {}
    for chunk in chunks(keys, size=500):
        reply = yield Sql("SELECT * FROM request_view WHERE key = ANY(%b)", (list(chunk),))
        for row in reply.dicts():
            record = request_record(row)
            found[record.key] = record
    return [found[key] for key in keys if key in found]


def states_by_key(keys: Sequence[str]) -> Op[list[KeyState]]:
    """The state and batch of each of `keys` the ledger knows, in the order given (no parameters nor answer read)."""
    found: dict[str, KeyState] = {}
    for chunk in chunks(keys, size=500):
        reply = yield Sql("SELECT key, state, batch_id FROM request_view WHERE key = ANY(%b)", (list(chunk),))
        for key, state, batch_id in reply.rows:
            found[str(key)] = KeyState(str(key), RequestState(state), None if batch_id is None else str(batch_id))
    return [found[key] for key in keys if key in found]


def traces_of(keys: Sequence[str]) -> Op[dict[str, str]]:
    """The trace contexts stored with `keys` (schema 4), of those that have one."""
    found: dict[str, str] = {}
    for chunk in chunks(keys, size=500):
        reply = yield Sql("SELECT key, context FROM request_traces WHERE key = ANY(%b)", (list(chunk),))
        for row in reply.rows:
            found[str(row[0])] = str(row[1])
    return found


def take_pending(
    scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
) -> Op[list[PendingRequest]]:
    if not scope or limit <= 0:
        return []
    # One process at a time gathers a scope: another flushing it right now takes these calls itself.
    free = (yield Sql("SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", (_GATHERING, scope))).one()
    if free is None or not free[0]:
        return []
    reply = yield Sql(
        "SELECT key, custom_id, params, params_bytes, model FROM requests"
        " WHERE scope = %s AND state = 'pending' AND owner IS DISTINCT FROM %s"
        " ORDER BY created_at, key LIMIT %s FOR UPDATE SKIP LOCKED",
        (scope, owner, limit),
    )
    taken: list[PendingRequest] = []
    size = 0
    for key, custom_id, params, params_bytes, model in reply.rows:
        size += int(params_bytes) + 64
        if size > max_bytes:
            break
        taken.append(PendingRequest(str(key), str(custom_id), str(params), int(params_bytes), str(model)))
    if taken:
        yield Sql(
            "UPDATE requests SET owner = %s, owner_until = %s, updated_at = %s WHERE key = ANY(%b)",
            (owner, until, now, [t.key for t in taken]),
        )
    return taken
