"""The PostgreSQL ledger's results: a batch's outcomes appended in arrival order, and announced; which of a batch's
keys have a final result stored; the results a batch brought since a cursor, and their answers. Operations
(`steps.Op`), run by either driver."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import LiteralString

from lowtide.ledger.postgres.steps import NOTIFY, Op, Reply, Sql, by_key, told_again
from lowtide.ledger.postgres.totals import NEW_FINALS, Vouched
from lowtide.ledger.records import KeyAnswer, OutcomeRow, key_answer, stored_json

__all__ = ["answers_of", "record_outcomes", "results_since", "stored_finals", "storing"]


def record_outcomes(
    batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float, vouched: Vouched | None = None, again: bool = False
) -> Op[int | None]:
    """Append `outcomes`, in order, and announce them; with `vouched` (`totals.FinalsRead.vouch`), the batch's count of
    statements storing its results after this one's (None without).

    `again`: made again after a transient error (`steps.told_again`), it first looks whether an earlier attempt
    stored them, its commit applied and its answer lost (`outage`): its rows carry this call's `now`, and its one
    statement stored all of them or none. Stored, they are not appended a second time (the sums would not count them
    twice, but a request's history would show each twice)."""
    if not outcomes:
        return None
    if again:
        stored = yield Sql(
            "SELECT 1 FROM results WHERE batch_id = %s AND key = %s AND at = %s LIMIT 1",
            (batch_id, outcomes[0].key, now),
        )
        if stored.rows:
            return (yield from _stores(batch_id)) if vouched is not None else None
    if vouched is not None:
        yield Sql("SELECT set_config(%s, %s, true)", (NEW_FINALS, f"{batch_id} {vouched.stores}"))
    keys: list[str] = []
    states: list[str] = []
    responses: list[str | None] = []
    errors: list[str | None] = []
    costs: list[str | None] = []
    live_costs: list[str | None] = []
    for o in outcomes:
        keys.append(o.key)
        states.append(o.state.value)
        responses.append(o.response if isinstance(o.response, str) or o.response is None else stored_json(o.response))
        errors.append(stored_json(o.error) if o.error is not None else None)
        costs.append(str(o.cost_usd) if o.cost_usd is not None else None)
        live_costs.append(str(o.live_cost_usd) if o.live_cost_usd is not None else None)
    # WITH ORDINALITY keeps the arrival order in `seq`.
    yield Sql(
        "INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)"
        " SELECT %s, k, s, r, e, c, l, %s FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[],"
        " %b::text[], %b::text[]) WITH ORDINALITY AS t(k, s, r, e, c, l, n) ORDER BY n",
        (batch_id, now, keys, states, responses, errors, costs, live_costs),
    )
    stores = None
    if vouched is not None:
        stores = yield from _stores(batch_id)
    yield Sql(NOTIFY, (batch_id,))
    return stores


def storing(
    batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float, vouched: Vouched | None
) -> Callable[[], Op[int | None]]:
    """How a driver makes `record_outcomes`: told when it is made again (`steps.told_again`)."""
    return told_again(lambda again: record_outcomes(batch_id, outcomes, now=now, vouched=vouched, again=again))


def stored_finals(batch_id: str) -> Op[tuple[set[str], int | None]]:
    """The keys whose latest result from `batch_id` is final (the batch's region of `results_batch_key`), and how many
    statements had stored its results, read first (None: no such batch). Outside a transaction, a statement storing
    some between the two reads is counted in neither, or in the keys alone: never in the count alone, which would
    vouch for results it stored (`totals`)."""
    stores = yield from _stores(batch_id)
    reply = yield Sql(
        "SELECT DISTINCT ON (key) key, state FROM results WHERE batch_id = %s ORDER BY key, seq DESC", (batch_id,)
    )
    return {str(key) for key, state in reply.rows if state != "pending"}, stores


def _stores(batch_id: str) -> Op[int | None]:
    row = (yield Sql("SELECT result_stores FROM batches WHERE id = %s", (batch_id,))).one()
    return None if row is None else int(row[0])


def results_since(batch_id: str, after: int | None) -> Op[tuple[list[str], int]]:
    """The results after `after`, read by `seq` (a range of the primary key, from its end), filtered by batch."""
    if after is None:
        reply = yield Sql("SELECT coalesce(max(seq), 0) FROM results", ())
        return [], int(reply.rows[0][0])
    reply = yield Sql("SELECT seq, key FROM results WHERE seq > %s AND batch_id = %s ORDER BY seq", (after, batch_id))
    return [str(key) for _, key in reply.rows], int(reply.rows[-1][0]) if reply.rows else after


def answers_of(batch_id: str, keys: Sequence[str]) -> Op[list[KeyAnswer]]:
    """The latest result from `batch_id` of each of `keys` that has one, in the order given: each key's newest row of
    `results_batch_key` (batch, key, seq), read from the index's end; no request, no `request_view`."""
    return (yield from by_key(keys, _ANSWERS, _answers, batch_id))


_ANSWERS: LiteralString = (
    "SELECT x.key, x.state, x.response, x.error FROM unnest(%b::text[]) AS k(key) CROSS JOIN LATERAL"
    " (SELECT r.key, r.state, r.response, r.error FROM results r WHERE r.batch_id = %s AND r.key = k.key"
    " ORDER BY r.seq DESC LIMIT 1) x"
)


def members_among(batch_id: str, keys: Sequence[str]) -> Op[set[str]]:
    """Which of `keys` are in `batch_id` now: each key's latest membership, read from the end of `batch_members_key`
    (key, seq), and its request's `left_seq`; no `request_view`."""
    return set((yield from by_key(keys, _MEMBERS, _members, batch_id)))


_MEMBERS: LiteralString = (
    "SELECT x.key FROM unnest(%b::text[]) AS k(key) CROSS JOIN LATERAL"
    " (SELECT m.key, m.batch_id, m.seq FROM batch_members m WHERE m.key = k.key ORDER BY m.seq DESC LIMIT 1) x"
    " JOIN requests r ON r.key = x.key WHERE x.batch_id = %s AND x.seq > r.left_seq"
)
"""Looked up by key alone, newest first: with the batch in the lateral's condition, a plan made while the table's
statistics still said it was empty scanned the batch's every member for each key (18 s of the server's CPU for
66,667 keys)."""


def _members(reply: Reply) -> Iterator[tuple[str, str]]:
    for (key,) in reply.rows:
        yield str(key), str(key)


def _answers(reply: Reply) -> Iterator[tuple[str, KeyAnswer]]:
    for key, state, response, error in reply.rows:
        yield str(key), key_answer(str(key), str(state), response, error)
