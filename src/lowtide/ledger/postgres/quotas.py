"""`PostgresQuotaStore`: the live quota scopes of every process, on any host, using one PostgreSQL database, kept in
its `live_quotas` table so that they admit calls against one set of buckets and one pause.

Each update is one short transaction in two round trips to the server: `BEGIN` and the scope's row read `FOR
UPDATE` (which waits for any other process updating that scope) in the first, the row written back and `COMMIT` in
the second (several statements in one message: psycopg binds their parameters on the client). The row lock is held
only while this process computes the change (microseconds), never across a wait. A process's first update of a
scope makes its row first, committed on its own, so that there is always a row to lock. (Pipeline mode would save the
same round trips, at about twice the client's CPU.) As on SQLite, nothing expires: a process killed mid-call holds no
reservation, only budget already taken, which the buckets' refill gives back within a minute. Through an outage of
the server an update is made again (`outage`); each writes a mark of its own with the state, so that one made again
after a commit whose answer was lost finds it and answers what it computed, never changing the state twice.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

import orjson

from lowtide.ledger.postgres.outage import Outage
from lowtide.ledger.postgres.pool import PostgresPool
from lowtide.ledger.quota_records import ScopeState

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

__all__ = ["PostgresQuotaStore"]

T = TypeVar("T")

_CREATE = (
    "INSERT INTO live_quotas (scope, state, updated_at) VALUES (%(scope)s, '{}', %(now)s)"
    " ON CONFLICT (scope) DO NOTHING"
)
"""Once per scope and process, so that `FOR UPDATE` always has a row to lock."""
_WRITE = (
    "INSERT INTO live_quotas (scope, state, updated_at) VALUES (%(scope)s, %(state)s, %(now)s)"
    " ON CONFLICT (scope) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at; COMMIT"
)
"""The state back and the commit, in one round trip (an upsert: a row someone removed meanwhile is made again)."""
_MARK = "written_by"
"""The key of the state's JSON that names the update that wrote it (`ScopeState.from_json` reads past it)."""


class PostgresQuotaStore:
    """The quota scopes kept in the PostgreSQL database at `url`, shared by every process that uses it."""

    def __init__(self, url: str, *, outage: Outage | None = None) -> None:
        self._pool = PostgresPool(url, outage=outage)  # first: says so if psycopg is missing
        from psycopg import AsyncClientCursor  # psycopg is the `postgres` extra: imported only when used

        self._cursor = AsyncClientCursor
        self._known: set[str] = set()
        """Scopes whose row this process knows to exist."""

    @property
    def shared(self) -> str | None:
        return self._pool.location

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T:
        # This update's mark, written in the row with the state: made again after a transient error, it finds its
        # mark if the attempt before committed (its answer lost in an outage), and answers what that attempt
        # computed, instead of changing the state a second time (an admission taken twice from the buckets).
        mark = uuid.uuid4().hex
        computed: list[T] = []

        async def update(db: AsyncConnection[TupleRow]) -> T:
            cursor = self._cursor(db)
            if scope not in self._known:
                # Committed on its own (the connection is in autocommit), before the transaction: a row made
                # inside it would go with a rollback, and an absent row has nothing for FOR UPDATE to lock.
                await cursor.execute(_CREATE, {"scope": scope, "now": time.time()})
                self._known.add(scope)
            await cursor.execute(
                "BEGIN; SELECT state FROM live_quotas WHERE scope = %(scope)s FOR UPDATE", {"scope": scope}
            )
            cursor.nextset()  # past BEGIN's empty result, to the SELECT's row
            row = await cursor.fetchone()
            try:
                stored = cast("dict[str, object]", orjson.loads(str(row[0]))) if row is not None else {}
                if computed and stored.get(_MARK) == mark:
                    await cursor.execute("ROLLBACK")  # written already: nothing to change
                    return computed[0]
                state = ScopeState.from_json(stored)
                result = change(state)
            except BaseException:
                await cursor.execute("ROLLBACK")
                raise
            computed[:] = [result]
            written = orjson.dumps({**state.as_json(), _MARK: mark}).decode()
            await cursor.execute(_WRITE, {"scope": scope, "state": written, "now": time.time()})
            return result

        return await self._pool.using("keep the live quota", update)

    async def aclose(self) -> None:
        """Close the connections (a later update opens them again)."""
        await self._pool.aclose()
