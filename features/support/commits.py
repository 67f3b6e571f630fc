"""Every transaction of the PostgreSQL ledger made a second time once it has committed: what its retry does when the
server goes away at COMMIT, the commit applied and its answer lost (`lowtide.ledger.postgres.outage`). Each piece of
work a pool does on a connection (`SyncPool.using`, `PostgresPool.using`: an operation made and driven in its
transaction) is done, then done again as the retry would, its operation made anew, on the same connection; the
second's answer is the one returned. A store whose every operation is safe to repeat reads the same after.

`features/environment.py` makes it so for a whole run with `-D commits=twice` (the stores' scenarios on PostgreSQL:
`behave -D store=postgres -D commits=twice --tags="@stores and not @sqlite"`), and a step for one scenario.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["made_twice"]


def made_twice() -> Callable[[], None]:
    """Make every pool's work twice from now on; returns how to undo it."""
    from lowtide.ledger.postgres.pool import PostgresPool, SyncPool

    sync_using = SyncPool.using
    async_using = PostgresPool.using

    def using_twice(self: SyncPool, doing: str, work: Callable[[Any], Any], *, wait_out: bool = True) -> Any:
        def twice(db: Any) -> Any:
            work(db)  # committed, its answer lost
            return work(db)

        return sync_using(self, doing, twice, wait_out=wait_out)

    async def using_twice_async(
        self: PostgresPool, doing: str, work: Callable[[Any], Awaitable[Any]], *, wait_out: bool = True
    ) -> Any:
        async def twice(db: Any) -> Any:
            await work(db)  # committed, its answer lost
            return await work(db)

        return await async_using(self, doing, twice, wait_out=wait_out)

    patched: list[tuple[type[Any], Any]] = [(SyncPool, using_twice), (PostgresPool, using_twice_async)]
    for cls, using in patched:
        setattr(cls, "using", using)  # noqa: B010 - a method replaced for the run, and put back by `undo`

    def undo() -> None:
        for cls, using in ((SyncPool, sync_using), (PostgresPool, async_using)):
            setattr(cls, "using", using)  # noqa: B010

    return undo
