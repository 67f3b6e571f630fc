"""The PostgreSQL ledger's operations, written once, run by either driver ("sans-IO").

Each operation is a generator: it yields the statements it needs (`Sql`) one at a time and is sent each one's
answer (`Reply`: its rows, its row count), then returns what the operation comes to. It does no I/O of its own, so
one operation serves both faces of the store: `run` drives it on a plain connection (the CLI, parking, `ledger
copy`: `PostgresLedger`), `run_async` on an async one (the event loop's hot path: `AsyncPostgresLedger`), each driver
owning the transaction the operation runs in. A driver is given how to make its operation, not the operation: after a
transient error (an outage of the server: `outage`) the operation is made again and driven on another connection,
which only an operation safe to repeat may be, even after a commit that applied but whose answer was lost (every one
of this store is: docs/ledger.md). An operation that must survive a statement's failure (an adoption losing a
race) marks that statement `savepoint`; the driver runs it in a savepoint and throws the error into the operation,
which may catch it. An operation PostgreSQL may end in a deadlock is run by `run_again`: rolled back whole, it is
made and driven again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, LiteralString, Protocol, TypeVar

from lowtide.ledger.postgres.schema import NOTICE_CHANNEL

if TYPE_CHECKING:
    from psycopg import AsyncConnection, AsyncCursor, Connection, Cursor
    from psycopg.rows import TupleRow
    from psycopg.sql import Composed

__all__ = [
    "BATCH", "CHUNK", "DEADLOCK_ATTEMPTS", "GATHERING", "LEASE_OVER", "NOTIFY", "AsyncConnections", "Connections",
    "Op", "Reply", "Sql", "by_key", "chunks", "run", "run_again", "run_again_async", "run_async", "run_hopeful",
    "run_hopeful_async", "run_on", "run_on_async", "told_again",
]  # fmt: skip

T = TypeVar("T")

CHUNK = 1000
GATHERING = 0x6C74
"""The advisory lock space of a scope's pending calls (`lt`), keyed by the scope's `hashtext`: a gathering of them
(`claims.take_pending`) holds it alone, an intent (`batches.record_intent`) shares it."""
DEADLOCK_ATTEMPTS = 5
"""How many times `run_again` makes and drives an operation PostgreSQL keeps ending in a deadlock."""
NOTIFY: LiteralString = f"SELECT pg_notify('{NOTICE_CHANNEL}', %s)"
BATCH: LiteralString = (
    "SELECT b.id, b.provider, b.endpoint, b.provider_batch_id, b.state, b.phase, b.request_count, b.request_bytes,"
    " b.intent_at, b.submitted_at, b.ended_at, b.collected_at, b.counts, b.request_id, b.owner,"
    " COALESCE(w.lease_until, b.owner_until) AS owner_until, b.note, b.trace"
    " FROM batches b LEFT JOIN owners w ON w.owner = b.owner"
)
"""A batch as the ledger's readers see it: its owner's lease is the owner's heartbeat, when it keeps one."""
LEASE_OVER: LiteralString = "COALESCE((SELECT lease_until FROM owners WHERE owner = {t}.owner), {t}.owner_until)"
"""How long the owner of a row of table `{t}` is still working on it."""


@dataclass(frozen=True, slots=True)
class Sql:
    """One statement of an operation, with its parameters."""

    query: LiteralString | Composed
    params: Sequence[Any] | Mapping[str, Any] | None = None
    savepoint: bool = False
    """Run in a savepoint: should it fail, the error is thrown into the operation, and the transaction goes on."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What a statement answered: its rows (none for a statement that returns none) and how many rows it touched."""

    rows: list[tuple[Any, ...]]
    rowcount: int
    columns: tuple[str, ...]

    def one(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def dicts(self) -> list[dict[str, Any]]:
        """The rows as dicts of their columns (what `records.request_record` and `batch_record` read)."""
        columns = self.columns
        return [dict(zip(columns, row, strict=True)) for row in self.rows]


Op = Generator[Sql, Reply, T]
"""An operation: statements out, replies in, its result returned."""


class Connections(Protocol):
    """Where `run` takes a plain connection from (`pool.SyncPool`): `work` done on one, and done again on another
    after a transient error while an outage of the server lasts (`outage`; without `wait_out`, once more at most, at
    once, on a new connection: a connection the server ended earlier is no outage)."""

    def using(self, doing: str, work: Callable[[Connection[TupleRow]], T], *, wait_out: bool = True) -> T: ...


class AsyncConnections(Protocol):
    """Where `run_async` takes an async connection from (`pool.PostgresPool`), as `Connections`."""

    async def using(
        self, doing: str, work: Callable[[AsyncConnection[TupleRow]], Awaitable[T]], *, wait_out: bool = True
    ) -> T: ...


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def by_key(
    keys: Sequence[str], query: LiteralString, made: Callable[[Reply], Iterable[tuple[str, T]]], *after: object
) -> Op[list[T]]:
    """What `query` finds of each of `keys`, in the order given (a key it finds nothing of left out): a statement a
    500 keys, given the chunk's keys first (`%b`), then `after`; `made` reads a reply's rows as keys and values. For
    reads that look each key up by itself, a lateral join on an index (`key = ANY(...)` may be planned as a scan)."""
    found: dict[str, T] = {}
    for chunk in chunks(keys, size=500):
        found.update(made((yield Sql(query, (list(chunk), *after)))))
    return [found[key] for key in keys if key in found]


def run(
    pool: Connections, doing: str, make: Callable[[], Op[T]], *, transaction: bool = True, wait_out: bool = True
) -> T:
    """Drive the operation `make` makes on a plain connection of `pool`, in one transaction (or, for a single read,
    none); made and driven again, on another connection, after a transient error, while an outage of the server lasts
    (without `wait_out`, once more at most)."""

    def once(db: Connection[TupleRow]) -> T:
        if not transaction:
            return _drive(db, make())
        with db.transaction():
            return _drive(db, make())

    return pool.using(doing, once, wait_out=wait_out)


async def run_async(
    pool: AsyncConnections, doing: str, make: Callable[[], Op[T]], *, transaction: bool = True, wait_out: bool = True
) -> T:
    """`run` on an async connection of `pool`: the event loop goes on while the server answers."""

    async def once(db: AsyncConnection[TupleRow]) -> T:
        if not transaction:
            return await _drive_async(db, make())
        async with db.transaction():
            return await _drive_async(db, make())

    return await pool.using(doing, once, wait_out=wait_out)


def run_again(pool: Connections, doing: str, make: Callable[[], Op[T]], *, wait_out: bool = True) -> T:
    """Drive the operation `make` makes in one transaction on a plain connection of `pool`, made and driven again
    should PostgreSQL end the transaction in a deadlock (up to `DEADLOCK_ATTEMPTS` times in all), or, as by `run`,
    after a transient error.

    PostgreSQL breaks a circle of transactions waiting on each other's row locks by ending one of them: that one is
    rolled back whole, so it changed nothing, and may be run again from the start, on what the others have since
    committed. Only an operation whose every statement is in its one transaction may be run again this way."""
    from psycopg.errors import DeadlockDetected

    def once(db: Connection[TupleRow]) -> T:
        attempt = 1
        while True:
            try:
                with db.transaction():
                    return _drive(db, make())
            except DeadlockDetected:
                if attempt == DEADLOCK_ATTEMPTS:
                    raise
                attempt += 1

    return pool.using(doing, once, wait_out=wait_out)


async def run_again_async(pool: AsyncConnections, doing: str, make: Callable[[], Op[T]], *, wait_out: bool = True) -> T:
    """`run_again` on an async connection of `pool`: the event loop goes on while the server answers."""
    from psycopg.errors import DeadlockDetected

    async def once(db: AsyncConnection[TupleRow]) -> T:
        attempt = 1
        while True:
            try:
                async with db.transaction():
                    return await _drive_async(db, make())
            except DeadlockDetected:
                if attempt == DEADLOCK_ATTEMPTS:
                    raise
                attempt += 1

    return await pool.using(doing, once, wait_out=wait_out)


def run_hopeful(
    pool: Connections, doing: str, make: Callable[[bool], Op[T]], *, hoping: bool = True, wait_out: bool = True
) -> T:
    """Drive `make(True)` in one transaction on a plain connection of `pool`: the operation that hopes none of the
    rows it inserts is there already, and so inserts them without `ON CONFLICT` (PostgreSQL's speculative insertion
    looks each key up before it inserts it, and writes once more after). Should a unique key refuse it (a row another
    transaction has inserted, or one the caller did not know was there), it was rolled back whole, changing nothing,
    and `make(False)` is driven in a new transaction: the operation that expects such rows. Not `hoping`: `make(False)`
    alone. After a transient error, as by `run`, the whole is done again."""
    from psycopg.errors import UniqueViolation

    if not hoping:
        return run(pool, doing, lambda: make(False), wait_out=wait_out)

    def once(db: Connection[TupleRow]) -> T:
        try:
            with db.transaction():
                return _drive(db, make(True))
        except UniqueViolation:
            with db.transaction():
                return _drive(db, make(False))

    return pool.using(doing, once, wait_out=wait_out)


async def run_hopeful_async(
    pool: AsyncConnections, doing: str, make: Callable[[bool], Op[T]], *, hoping: bool = True
) -> T:
    """`run_hopeful` on an async connection of `pool`: the event loop goes on while the server answers."""
    from psycopg.errors import UniqueViolation

    if not hoping:
        return await run_async(pool, doing, lambda: make(False))

    async def once(db: AsyncConnection[TupleRow]) -> T:
        try:
            async with db.transaction():
                return await _drive_async(db, make(True))
        except UniqueViolation:
            async with db.transaction():
                return await _drive_async(db, make(False))

    return await pool.using(doing, once)


def told_again(make: Callable[[bool], Op[T]]) -> Callable[[], Op[T]]:
    """How to make an operation that must know whether it is made again: `make(False)` the first time, `make(True)`
    after (a transient error: the attempt before may have committed, its answer lost), for an operation whose first
    attempt's work, once committed, would not be found again by doing the same (`claims.take_pending`)."""
    made = False

    def maker() -> Op[T]:
        nonlocal made
        again, made = made, True
        return make(again)

    return maker


def run_on(db: Connection[TupleRow], op: Op[T]) -> T:
    """Drive `op` in one transaction on `db`, a connection of no pool (the schema's first connection)."""
    with db.transaction():
        return _drive(db, op)


async def run_on_async(db: AsyncConnection[TupleRow], op: Op[T]) -> T:
    """Drive `op` in one transaction on `db`, an async connection of no pool."""
    async with db.transaction():
        return await _drive_async(db, op)


def _drive(db: Connection[TupleRow], op: Op[T]) -> T:
    from psycopg import Error

    try:
        step = next(op)
        while True:
            try:
                if step.savepoint:
                    with db.transaction():
                        reply = _reply(db.execute(step.query, step.params))
                else:
                    reply = _reply(db.execute(step.query, step.params))
            except Error as exc:
                if not step.savepoint:
                    raise
                step = op.throw(exc)
                continue
            step = op.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        op.close()


async def _drive_async(db: AsyncConnection[TupleRow], op: Op[T]) -> T:
    from psycopg import Error

    try:
        step = next(op)
        while True:
            try:
                if step.savepoint:
                    async with db.transaction():
                        reply = await _reply_async(await db.execute(step.query, step.params))
                else:
                    reply = await _reply_async(await db.execute(step.query, step.params))
            except Error as exc:
                if not step.savepoint:
                    raise
                step = op.throw(exc)
                continue
            step = op.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result
    finally:
        op.close()


def _reply(cursor: Cursor[TupleRow]) -> Reply:
    described = cursor.description
    if described is None:
        return Reply([], cursor.rowcount, ())
    return Reply(cursor.fetchall(), cursor.rowcount, tuple(column.name for column in described))


async def _reply_async(cursor: AsyncCursor[TupleRow]) -> Reply:
    described = cursor.description
    if described is None:
        return Reply([], cursor.rowcount, ())
    return Reply(await cursor.fetchall(), cursor.rowcount, tuple(column.name for column in described))
