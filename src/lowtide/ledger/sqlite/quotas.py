"""`LedgerQuotaStore`: the live quota scopes of every process using one ledger, kept in its `live_quotas` table so
that they admit calls against one set of buckets and one pause.

Each update is one `BEGIN IMMEDIATE` transaction (a read and a write of one small row), so that two processes never
take the same budget. Nothing here expires: a process killed mid-call holds no reservation, only budget already
taken, which the buckets' refill gives back within a minute.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar, cast

import orjson

from lowtide.ledger.quota_records import ScopeState
from lowtide.ledger.sqlite.connection import SqliteFile

__all__ = ["LedgerQuotaStore"]

T = TypeVar("T")


class LedgerQuotaStore:
    """The quota scopes kept in `ledger`, shared by every process that opens it."""

    def __init__(self, ledger: SqliteFile) -> None:
        self.ledger = ledger

    @property
    def shared(self) -> str | None:
        return str(self.ledger.path)

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T:
        with self.ledger.transaction() as db:
            row = db.execute("SELECT state FROM live_quotas WHERE scope = ?", (scope,)).fetchone()
            state = ScopeState.from_json(cast("dict[str, object]", orjson.loads(row[0]))) if row else ScopeState()
            result = change(state)
            db.execute(
                "INSERT INTO live_quotas (scope, state, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (scope) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
                (scope, orjson.dumps(state.as_json()).decode(), time.time()),
            )
        return result
