"""`PostgresQuotaStore`: the live quota scopes of every process, on any host, using one PostgreSQL database, kept in
its `live_quotas` table so that they admit calls against one set of buckets and one pause.

Each update is one short transaction: the scope's row read `FOR UPDATE` (which waits for any other process
updating that scope) and written back, sent in pipeline mode so that it costs two round trips to the server: the
read, then the write and the commit together. The row lock is held only while this process computes the change
(microseconds), never across a wait. As on SQLite, nothing expires: a process killed mid-call holds no
reservation, only budget already taken, which the buckets' refill gives back within a minute.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar, cast

import orjson

from lowtide.ledger.postgres.pool import PostgresPool
from lowtide.live.quota_state import ScopeState

__all__ = ["PostgresQuotaStore"]

T = TypeVar("T")


class PostgresQuotaStore:
    """The quota scopes kept in the PostgreSQL database at `url`, shared by every process that uses it."""

    def __init__(self, url: str) -> None:
        self._pool = PostgresPool(url)
        self._known: set[str] = set()
        """Scopes whose row exists: the row is made once, so that `FOR UPDATE` always has a row to lock."""

    @property
    def shared(self) -> str | None:
        return self._pool.location

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T:
        async with self._pool.connection("keep the live quota") as db:
            if scope not in self._known:
                await db.execute(
                    "INSERT INTO live_quotas (scope, state, updated_at) VALUES (%s, '{}', %s)"
                    " ON CONFLICT (scope) DO NOTHING",
                    (scope, time.time()),
                )
                await db.commit()
                self._known.add(scope)
            async with db.pipeline(), db.transaction():
                cursor = await db.execute("SELECT state FROM live_quotas WHERE scope = %s FOR UPDATE", (scope,))
                row = await cursor.fetchone()
                stored = cast("dict[str, object]", orjson.loads(str(row[0]))) if row is not None else {}
                state = ScopeState.from_json(stored)
                result = change(state)
                await db.execute(
                    "UPDATE live_quotas SET state = %s, updated_at = %s WHERE scope = %s",
                    (orjson.dumps(state.as_json()).decode(), time.time(), scope),
                )
        return result

    async def aclose(self) -> None:
        """Close the connections (a later update opens them again)."""
        await self._pool.aclose()
