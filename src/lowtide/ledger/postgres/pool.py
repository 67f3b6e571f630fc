"""Connections to a PostgreSQL ledger: pools of psycopg connections opened from a `postgresql://` URL (async, for an
event loop's ledger and the live quota; plain, for the sync ledger's callers and threads), the schema migrated on the
first connection, and every driver error turned into a `LedgerError` that never holds the password.

psycopg is an optional dependency (`pip install 'lowtide[postgres]'`): without it, a PostgreSQL URL is refused with
that instruction, and nothing else in lowtide imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING

from lowtide.cancelling import cancel_requests, stop_if_cancelled
from lowtide.errors import ConfigurationError, LedgerError
from lowtide.hosts import HOST_ID_ENV, host_id
from lowtide.ledger.postgres.migration import migration
from lowtide.ledger.postgres.steps import run_on, run_on_async
from lowtide.ledger.postgres.url import redacted, scrub

if TYPE_CHECKING:
    from psycopg import AsyncConnection, Connection
    from psycopg.rows import TupleRow
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

__all__ = ["HOST_ID_ENV", "PostgresPool", "SyncPool", "host_id", "ledger_errors", "need_psycopg"]

_CONNECT_TIMEOUT = 10


@contextlib.contextmanager
def ledger_errors(url: str, doing: str) -> Generator[None]:
    """Turn psycopg's errors (and pool timeouts) into `LedgerError`, saying `doing` and the URL, password removed."""
    from psycopg import Error
    from psycopg_pool import PoolTimeout

    try:
        yield
    except (Error, PoolTimeout, OSError) as exc:
        detail = scrub(str(exc).strip() or type(exc).__name__, url)
        advice = _REBUILD.format(url=redacted(url)) if getattr(exc, "sqlstate", None) in _DAMAGE else ""
        raise LedgerError(f"The PostgreSQL ledger at {redacted(url)} could not {doing}: {detail}{advice}") from None


_DAMAGE = frozenset({"XX001", "XX002", "42P01"})
"""What says the ledger's data is damaged (`data_corrupted`, `index_corrupted`) or its tables gone from under it
(`undefined_table`: dropped while a program ran)."""
_REBUILD = (
    ". Its tables are damaged or gone: do not start a new ledger and run your programs again (a new ledger has an"
    " identity of its own, so it would send, and pay for, again every request this one had sent); rebuild it from"
    " the providers' APIs instead: lowtide ledger rebuild --ledger {url} --actors ACTOR_FILE."
)


def need_psycopg() -> None:
    """Raise a `ConfigurationError` saying how to install psycopg, when it is missing."""
    if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
        raise ConfigurationError("A PostgreSQL ledger needs psycopg: pip install 'lowtide[postgres]'.", field="ledger")


def _application_name() -> str:
    """The connections' `application_name`: an operator sees which host holds what (`pg_stat_activity`)."""
    return f"lowtide {host_id()}"[:63]


def connect(url: str, *, autocommit: bool = True) -> Connection[TupleRow]:
    """One plain connection (the listener's, the schema's), named for this host, errors left to the caller."""
    from psycopg import Connection

    return Connection.connect(
        url, application_name=_application_name(), connect_timeout=_CONNECT_TIMEOUT, autocommit=autocommit
    )


def migrated(url: str) -> None:
    """Connect once and bring the schema up to date; a refused connection or a wrong password is said at once, with
    the server's reason (a pool would only time out)."""
    with ledger_errors(url, "be opened"), connect(url) as first:
        run_on(first, migration())


async def migrated_async(url: str) -> None:
    """`migrated`, the loop going on while the server answers."""
    from psycopg import AsyncConnection

    with ledger_errors(url, "be opened"):
        first = await AsyncConnection.connect(
            url, application_name=_application_name(), connect_timeout=_CONNECT_TIMEOUT, autocommit=True
        )
        async with first:
            await run_on_async(first, migration())


class SyncPool:
    """A pool of plain connections for one URL, opened (and the schema migrated) when made. Connections are in
    autocommit mode: a transaction is begun by the code that needs one, and only there."""

    def __init__(self, url: str, *, max_size: int = 4) -> None:
        need_psycopg()
        from psycopg_pool import ConnectionPool

        self.url = url
        migrated(url)
        with ledger_errors(url, "be opened"):
            self._pool: ConnectionPool[Connection[TupleRow]] = ConnectionPool(
                url,
                min_size=1,
                max_size=max_size,
                kwargs={
                    "application_name": _application_name(),
                    "connect_timeout": _CONNECT_TIMEOUT,
                    "autocommit": True,
                },
                open=False,
                name="lowtide-ledger",
            )
            self._pool.open(wait=True, timeout=_CONNECT_TIMEOUT)

    @contextlib.contextmanager
    def connection(self, doing: str) -> Generator[Connection[TupleRow]]:
        """A connection of the pool for the length of the `with`; errors said as `LedgerError` (`doing`: what
        could not be done)."""
        with ledger_errors(self.url, doing), self._pool.connection() as connection:
            yield connection

    @contextlib.contextmanager
    def transaction(self, doing: str) -> Generator[Connection[TupleRow]]:
        """One transaction on a connection of the pool: committed when the `with` ends, rolled back if it raises."""
        with self.connection(doing) as connection, connection.transaction():
            yield connection

    def close(self) -> None:
        self._pool.close()


class PostgresPool:
    """A pool for one URL, opened in the running event loop on first use (and again after `aclose`). Its
    connections are in autocommit mode: a transaction is begun by the code that needs one, and only there.

    A pool left open is closed when its event loop's tasks are cancelled (the end of `asyncio.run`): psycopg_pool's
    async workers catch a cancellation that lands while they run a task of theirs and go back to waiting for the
    next, so a loop that only cancelled them would wait for them forever and the program would never exit. Closed,
    they are told to stop and do.
    """

    def __init__(self, url: str, *, max_size: int = 4) -> None:
        need_psycopg()
        self._url = url
        self._max_size = max_size
        self._pool: AsyncConnectionPool[AsyncConnection[TupleRow]] | None = None
        self._opening = asyncio.Lock()
        self._guard: asyncio.Task[None] | None = None

    @property
    def location(self) -> str:
        """The URL, password redacted: what may be shown or stored."""
        return redacted(self._url)

    async def _open(self) -> AsyncConnectionPool[AsyncConnection[TupleRow]]:
        from psycopg_pool import AsyncConnectionPool

        name = _application_name()
        # The first connection is made here, not by the pool's workers: a refused connection or a wrong password is
        # said at once, with the server's reason (the pool would only time out), and the schema is brought up to date.
        await migrated_async(self._url)
        with ledger_errors(self._url, "be opened"):
            pool: AsyncConnectionPool[AsyncConnection[TupleRow]] = AsyncConnectionPool(
                self._url,
                min_size=1,
                max_size=self._max_size,
                kwargs={"application_name": name, "connect_timeout": _CONNECT_TIMEOUT, "autocommit": True},
                open=False,
                name="lowtide-ledger",
            )
            await pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        self._guard = asyncio.get_running_loop().create_task(self._close_with_loop(pool), name="lowtide-ledger-pool")
        return pool

    async def _close_with_loop(self, pool: AsyncConnectionPool[AsyncConnection[TupleRow]]) -> None:
        """Wait until the loop's tasks are cancelled, then close `pool` if it is still this one's (`aclose` closes
        it otherwise)."""
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            if self._pool is pool:
                self._pool = None
                await pool.close()

    @contextlib.asynccontextmanager
    async def connection(self, doing: str) -> AsyncGenerator[AsyncConnection[TupleRow]]:
        """A connection of the pool for the length of the `with`; errors said as `LedgerError` (`doing`: what
        could not be done)."""
        asked = cancel_requests()
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    self._pool = await self._open()
        with ledger_errors(self._url, doing):
            async with self._pool.connection() as connection:
                # A task cancelled as the pool handed it this connection may not have been told (`lowtide.cancelling`):
                # it is told now, and the connection goes back.
                stop_if_cancelled(asked)
                yield connection

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        guard, self._guard = self._guard, None
        if guard is not None and guard is not asyncio.current_task():
            guard.cancel()
        if pool is not None:
            await pool.close()
