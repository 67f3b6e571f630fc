"""`PostgresRunStore`: bulk runs in a PostgreSQL ledger, with the meaning of the SQLite ledger's `RunStore`
(`lowtide.ledger.runs`): a run and all its items written at once, each item pointing at its latest request; and
`AsyncPostgresRunStore`, the same for an event loop (a bulk run's decisions and live answers, awaited). Each
operation is written once (`steps.Op`), driven by either face.

A run id taken on two hosts at once is recorded by one of them (`ON CONFLICT DO NOTHING`): the other is told it was
taken, and resumes that run as any process would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from functools import partial
from typing import Any, TypeVar

from lowtide.ledger.postgres.pool import PostgresPool, SyncPool
from lowtide.ledger.postgres.steps import CHUNK, Op, Sql, run, run_async
from lowtide.ledger.records import answer_json, stored_json
from lowtide.ledger.run_ledger import AsyncRunLedger, RunLedger
from lowtide.ledger.runs import (
    ItemOutcome,
    ItemRow,
    ItemsApart,
    LiveAnswer,
    NewItem,
    RunRecord,
    item_outcome,
    item_row,
    items_apart,
    job_text,
    run_record,
)

__all__ = ["AsyncPostgresRunStore", "PostgresRunStore"]

T = TypeVar("T")


class PostgresRunStore:
    """The runs of one PostgreSQL ledger."""

    def __init__(self, pool: SyncPool) -> None:
        self._pool = pool

    def _read(self, make: Callable[[], Op[T]]) -> T:
        return run(self._pool, "read runs", make, transaction=False)

    def run(self, run_id: str) -> RunRecord | None:
        return self._read(partial(_run, run_id))

    def runs(self) -> list[RunRecord]:
        return self._read(_runs)

    def create(
        self,
        run_id: str,
        *,
        actor: str,
        configuration: dict[str, Any],
        options: dict[str, Any],
        fingerprint: str,
        items: Sequence[NewItem],
        now: float,
    ) -> bool:
        op = partial(
            _create,
            run_id,
            actor=actor,
            configuration=configuration,
            options=options,
            fingerprint=fingerprint,
            items=items,
            now=now,
        )
        return run(self._pool, "record a run", op)

    def update_options(self, run_id: str, options: dict[str, Any], *, now: float) -> None:
        run(self._pool, "record a run's options", partial(_update_options, run_id, options, now=now))

    def items(self, run_id: str, *, with_jobs: bool = True, start: int = 0, stop: int | None = None) -> list[ItemRow]:
        return self._read(partial(_items, run_id, with_jobs=with_jobs, start=start, stop=stop))

    def items_apart(self, run_id: str, *, start: int, stop: int) -> ItemsApart:
        return self._read(partial(_items_apart, run_id, start=start, stop=stop))

    def outcomes(self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None) -> list[ItemOutcome]:
        return self._read(partial(_outcomes, run_id, start=start, stop=stop, only=only))

    def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        _not_on_a_loop("decide")
        run(self._pool, "record a run's decisions", partial(_decide, run_id, decisions, now=now))

    def new_attempts(self, run_id: str, keys: Iterable[tuple[int, str]], *, now: float) -> None:
        run(self._pool, "record a run's new attempts", partial(_new_attempts, run_id, keys, now=now))

    def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        _not_on_a_loop("record_live")
        run(self._pool, "store live answers", partial(_record_live, run_id, answers, now=now))

    def outstanding_batches(self, run_id: str) -> list[str]:
        return self._read(partial(_outstanding_batches, run_id))

    def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        return self._read(partial(_batches, run_id))

    def live_cost(self, run_id: str) -> Decimal:
        return self._read(partial(_live_cost, run_id))


def _not_on_a_loop(method: str) -> None:
    """Refuse a blocking write of a running run's items from an event loop's thread. The run's own awaited writes,
    in a transaction on another connection, may hold the very rows it waits for, and they commit only when the loop
    runs again: a deadlock PostgreSQL cannot see. The loop writes through `AsyncPostgresRunStore`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"PostgresRunStore.{method} blocks: from an event loop, write through the ledger's async face "
        "(AsyncPostgresRunStore), or the loop may wait on rows its own transaction holds"
    )


class AsyncPostgresRunStore:
    """The runs of one PostgreSQL ledger, as an event loop calls them."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        await run_async(self._pool, "record a run's decisions", partial(_decide, run_id, decisions, now=now))

    async def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        await run_async(self._pool, "store live answers", partial(_record_live, run_id, answers, now=now))

    async def outstanding_batches(self, run_id: str) -> list[str]:
        return await run_async(self._pool, "read runs", partial(_outstanding_batches, run_id), transaction=False)

    async def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        return await run_async(self._pool, "read runs", partial(_batches, run_id), transaction=False)

    async def outcomes(
        self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None
    ) -> list[ItemOutcome]:
        op = partial(_outcomes, run_id, start=start, stop=stop, only=only)
        return await run_async(self._pool, "read runs", op, transaction=False)


# The operations.


def _run(run_id: str) -> Op[RunRecord | None]:
    rows = (yield Sql("SELECT * FROM runs WHERE id = %s", (run_id,))).dicts()
    return run_record(rows[0]) if rows else None


def _runs() -> Op[list[RunRecord]]:
    return [run_record(row) for row in (yield Sql("SELECT * FROM runs ORDER BY created_at, id", ())).dicts()]


def _create(
    run_id: str,
    *,
    actor: str,
    configuration: dict[str, Any],
    options: dict[str, Any],
    fingerprint: str,
    items: Sequence[NewItem],
    now: float,
) -> Op[bool]:
    reply = yield Sql(
        "INSERT INTO runs (id, actor, configuration, options, fingerprint, item_count, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
        (run_id, actor, _dumps(configuration), _dumps(options), fingerprint, len(items), now, now),
    )
    if reply.rowcount == 0:
        # Taken by another process, or recorded by an earlier attempt of this very call whose commit applied but
        # whose answer was lost (`outage`): then the run is this one, made at this call's `now`, items and all.
        mine = yield Sql(
            "SELECT 1 FROM runs WHERE id = %s AND created_at = %s AND fingerprint = %s", (run_id, now, fingerprint)
        )
        return bool(mine.rows)
    for start in range(0, len(items), CHUNK):
        chunk = items[start : start + CHUNK]
        yield Sql(
            "INSERT INTO run_items (run_id, idx, item_id, job, key) SELECT %s, i, d, j, k"
            " FROM unnest(%b::int[], %b::text[], %b::text[], %b::text[]) AS t(i, d, j, k)",
            (
                run_id,
                [i.index for i in chunk],
                [i.item_id for i in chunk],
                [job_text(i) for i in chunk],
                [i.key for i in chunk],
            ),
        )
    return True


def _update_options(run_id: str, options: dict[str, Any], *, now: float) -> Op[None]:
    yield Sql("UPDATE runs SET options = %s, updated_at = %s WHERE id = %s", (_dumps(options), now, run_id))


def _items(run_id: str, *, with_jobs: bool, start: int = 0, stop: int | None = None) -> Op[list[ItemRow]]:
    reply = yield Sql(
        "SELECT ri.idx, ri.item_id, CASE WHEN %s THEN ri.job END AS job, ri.key, ri.attempt, ri.status,"
        " ri.reason, r.state AS request_state, r.batch_id, r.cost_usd, r.worst_case_usd"
        " FROM run_items ri LEFT JOIN request_view r ON r.key = ri.key WHERE ri.run_id = %s AND ri.idx >= %s"
        " AND (%s::bigint IS NULL OR ri.idx < %s) ORDER BY ri.idx",
        (with_jobs, run_id, start, stop, stop),
    )
    return [item_row(row) for row in reply.dicts()]


def _items_apart(run_id: str, *, start: int, stop: int) -> Op[ItemsApart]:
    reply = yield Sql(
        "SELECT ri.idx, ri.item_id, ri.key, ri.attempt, ri.status, ri.reason, r.state, r.batch_id, r.cost_usd,"
        " r.worst_case_usd FROM run_items ri LEFT JOIN request_view r ON r.key = ri.key"
        " WHERE ri.run_id = %s AND ri.idx >= %s AND ri.idx < %s ORDER BY ri.idx",
        (run_id, start, stop),
    )
    return items_apart(reply.rows)


def _outcomes(run_id: str, *, start: int, stop: int, only: Sequence[int] | None) -> Op[list[ItemOutcome]]:
    reply = yield Sql(
        "SELECT ri.idx, ri.key, ri.status, ri.reason, r.state, r.response, r.error"
        " FROM run_items ri LEFT JOIN request_view r ON r.key = ri.key"
        " WHERE ri.run_id = %s AND ri.idx >= %s AND ri.idx < %s AND (%s::bigint[] IS NULL OR ri.idx = ANY(%s))"
        " ORDER BY ri.idx",
        (run_id, start, stop, None if only is None else list(only), None if only is None else list(only)),
    )
    return [item_outcome(row) for row in reply.dicts()]


def _decide(run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> Op[None]:
    rows = list(decisions)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        yield Sql(
            "UPDATE run_items ri SET status = t.s, reason = t.r"
            " FROM unnest(%b::int[], %b::text[], %b::text[]) AS t(i, s, r)"
            " WHERE ri.run_id = %s AND ri.idx = t.i",
            ([i for i, _, _ in chunk], [s for _, s, _ in chunk], [r for _, _, r in chunk], run_id),
        )
    yield Sql("UPDATE runs SET updated_at = %s WHERE id = %s", (now, run_id))


def _new_attempts(run_id: str, keys: Iterable[tuple[int, str]], *, now: float) -> Op[None]:
    rows = list(keys)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        yield Sql(
            "UPDATE run_items ri SET key = t.k, attempt = ri.attempt + 1, status = NULL, reason = NULL"
            " FROM unnest(%b::int[], %b::text[]) AS t(i, k) WHERE ri.run_id = %s AND ri.idx = t.i"
            # An attempt's key is its own (`item_key`): an item already on it is not counted again (this call made
            # again after a commit whose answer was lost, `outage`).
            " AND ri.key IS DISTINCT FROM t.k",
            ([i for i, _ in chunk], [k for _, k in chunk], run_id),
        )
    yield Sql("UPDATE runs SET updated_at = %s WHERE id = %s", (now, run_id))


def _record_live(run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> Op[None]:
    for a in answers:
        params = stored_json(a.params)
        cost = str(a.cost_usd) if a.cost_usd is not None else None
        # It leaves any batch it was in (its latest membership) and the queue: its outcome is the live answer.
        yield Sql(
            "INSERT INTO requests (key, custom_id, actor, model, params, params_bytes, state, attempts,"
            " max_attempts, created_at, updated_at, left_seq) VALUES (%(k)s, %(k)s, %(a)s, %(m)s, %(p)s, %(n)s,"
            " %(s)s, 1, 1, %(now)s, %(now)s, COALESCE((SELECT max(seq) FROM batch_members WHERE key = %(k)s), 0))"
            " ON CONFLICT (key) DO UPDATE SET custom_id = excluded.custom_id, actor = excluded.actor,"
            " model = excluded.model, params = excluded.params, params_bytes = excluded.params_bytes,"
            " state = excluded.state, batch_id = NULL, attempts = 1, max_attempts = 1, worst_case_usd = NULL,"
            " created_at = excluded.created_at, updated_at = excluded.updated_at, owner = NULL,"
            " owner_until = NULL, left_seq = excluded.left_seq",
            {"k": a.key, "a": a.actor, "m": a.model, "p": params, "n": len(params), "s": a.state.value, "now": now},
        )
        # Each batch it was in keeps its actor and model among its kinds (`batch_kinds`): a result of that batch
        # stored for it later is counted under the request's actor and model as they are now, as every store does.
        yield Sql(
            "WITH gone AS (DELETE FROM pending_requests WHERE key = %(k)s)"
            " INSERT INTO batch_kinds (batch_id, actor, model) SELECT DISTINCT m.batch_id, %(a)s, %(m)s"
            " FROM batch_members m WHERE m.key = %(k)s ON CONFLICT DO NOTHING",
            {"k": a.key, "a": a.actor, "m": a.model},
        )
        # The answer is appended: the request's outcome is its latest result with no batch (''). Once: this call made
        # again after a commit whose answer was lost (`outage`) finds it stored at its `now`, and its cost summed.
        yield Sql(
            "INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)"
            " SELECT '', %(k)s, %(s)s, %(r)s, %(e)s, %(c)s, %(c)s, %(now)s WHERE NOT EXISTS (SELECT 1 FROM results"
            " WHERE batch_id = '' AND key = %(k)s AND at = %(now)s)",
            {
                "k": a.key,
                "s": a.state.value,
                "r": answer_json(a.response) if a.response is not None else None,
                "e": stored_json(a.error) if a.error is not None else None,
                "c": cost,
                "now": now,
            },
        )
        yield Sql(
            "UPDATE run_items SET status = %s, reason = %s WHERE run_id = %s AND idx = %s",
            (a.status, a.reason, run_id, a.index),
        )
    yield Sql("UPDATE runs SET updated_at = %s WHERE id = %s", (now, run_id))


def _outstanding_batches(run_id: str) -> Op[list[str]]:
    reply = yield Sql(
        "SELECT DISTINCT b.id FROM run_items ri JOIN batch_members m ON m.key = ri.key"
        " JOIN batches b ON b.id = m.batch_id"
        " WHERE ri.run_id = %s AND b.state IN ('intent', 'unknown', 'waiting-on-batch', 'ended') ORDER BY b.id",
        (run_id,),
    )
    return [str(row[0]) for row in reply.rows]


def _batches(run_id: str) -> Op[list[tuple[str, str | None, str, int]]]:
    reply = yield Sql(
        "SELECT b.id, b.provider_batch_id, b.state, b.intent_at, COUNT(*) AS n FROM batch_members m"
        " JOIN run_items ri ON ri.key = m.key JOIN batches b ON b.id = m.batch_id"
        " WHERE ri.run_id = %s GROUP BY b.id ORDER BY b.intent_at, b.id",
        (run_id,),
    )
    return [(str(r["id"]), r["provider_batch_id"], str(r["state"]), int(r["n"])) for r in reply.dicts()]


def _live_cost(run_id: str) -> Op[Decimal]:
    reply = yield Sql(
        "SELECT r.live_cost_usd FROM run_items ri JOIN request_view r ON r.key = ri.key"
        " WHERE ri.run_id = %s AND r.live_cost_usd IS NOT NULL",
        (run_id,),
    )
    return sum((Decimal(row[0]) for row in reply.rows), Decimal(0))


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


_IMPLEMENTS: type[RunLedger] = PostgresRunStore
"""The type checker's proof that `PostgresRunStore` is a `RunLedger`."""
_IMPLEMENTS_ASYNC: type[AsyncRunLedger] = AsyncPostgresRunStore
"""... and that `AsyncPostgresRunStore` is an `AsyncRunLedger`."""
