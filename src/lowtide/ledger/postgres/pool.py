"""Connections to a PostgreSQL ledger: pools of psycopg connections opened from a `postgresql://` URL (async, for an
event loop's ledger and the live quota; plain, for the sync ledger's callers and threads), the schema migrated on the
first connection, and work on a connection tried again through an outage of the server (`outage`): each connection
checked as it is taken, a pool whose server went away replaced by a new one, every driver error turned into a
`LedgerError` that never holds the password.

psycopg is an optional dependency (`pip install 'lowtide[postgres]'`): without it, a PostgreSQL URL is refused with
that instruction, and nothing else in lowtide imports it.

A pool is replaced, not mended: after a restart or a failover every connection it holds is gone, and psycopg_pool
makes new ones only after its own backoff (1 s, then 2, 4, 8, ...: a server back after 20 s was used after 28). The
next attempt opens a new pool instead, with a first connection of its own (which says at once why it failed), so
that work goes on within `outage.LONGEST_WAIT` of the server's return. One attempt at a time opens it; the others,
waiting meanwhile, share its failure instead of trying again themselves. The connection check is made here, not by
psycopg_pool's `check` callback: a pool tries its next connection after a failed check itself, a second later, then
two, four, inside the checkout (after a restart, one checkout from four dead connections took 7 s; here 0.15 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

from lowtide.core.cancelling import cancel_requests, stop_if_cancelled
from lowtide.core.hosts import HOST_ID_ENV, host_id
from lowtide.errors import ConfigurationError
from lowtide.ledger.postgres.migration import migration
from lowtide.ledger.postgres.outage import Outage, said, transient
from lowtide.ledger.postgres.steps import run_on, run_on_async
from lowtide.ledger.postgres.url import connection_url, outage_seconds, redacted

if TYPE_CHECKING:
    from psycopg import AsyncConnection, Connection
    from psycopg.rows import TupleRow
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

__all__ = ["CHECK_IDLE_SECONDS", "HOST_ID_ENV", "PostgresPool", "SyncPool", "host_id", "ledger_errors", "need_psycopg"]

T = TypeVar("T")

_CONNECT_TIMEOUT = 10
CHECK_IDLE_SECONDS = 5.0
"""A connection idle in the pool longer than this is checked (an empty query: one round trip) before it is used. In a
burst the pool's connections come back within milliseconds and are not: checked at every checkout, a one-statement
read took 120 to 250 us more of the client's CPU (a quarter more) and a round trip more of wall time; one the server
ended meanwhile fails its operation with a transient error, made again at once on a new pool (`outage`)."""


@contextlib.contextmanager
def ledger_errors(url: str, doing: str) -> Generator[None]:
    """Turn psycopg's errors (and pool timeouts) into `LedgerError`, saying `doing` and the URL, password removed."""
    from psycopg import Error
    from psycopg_pool import PoolTimeout

    try:
        yield
    except (Error, PoolTimeout, OSError) as exc:
        raise said(exc, url, doing) from None


def need_psycopg() -> None:
    """Raise a `ConfigurationError` saying how to install psycopg, when it is missing."""
    if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
        raise ConfigurationError("A PostgreSQL ledger needs psycopg: pip install 'lowtide[postgres]'.", field="ledger")


def outage_of(url: str) -> Outage:
    """How the ledger at `url` waits out an outage of its server (a wrong setting: a `ConfigurationError`)."""
    try:
        return Outage(url, outage_seconds(url))
    except ValueError as exc:
        raise ConfigurationError(f"The PostgreSQL ledger {redacted(url)} {exc}", field="ledger") from None


def _application_name() -> str:
    """The connections' `application_name`: an operator sees which host holds what (`pg_stat_activity`)."""
    return f"lowtide {host_id()}"[:63]


def _options() -> dict[str, Any]:
    return {"application_name": _application_name(), "connect_timeout": _CONNECT_TIMEOUT, "autocommit": True}


def connect(url: str) -> Connection[TupleRow]:
    """One plain connection of no pool (the listener's), named for this host, in autocommit; errors left to the
    caller. `url` as given: lowtide's own parameter is taken out here."""
    from psycopg import Connection

    return Connection.connect(connection_url(url), **_options())


def migrated(url: str) -> None:
    """Connect once and bring the schema up to date: a refused connection or a wrong password is said at once, with
    the server's reason (a pool would only time out). Errors left to the caller (`Outage.call`)."""
    with connect(url) as first:
        run_on(first, migration())


async def migrated_async(url: str) -> None:
    """`migrated`, the loop going on while the server answers."""
    from psycopg import AsyncConnection

    first = await AsyncConnection.connect(connection_url(url), **_options())
    async with first:
        await run_on_async(first, migration())


class _Opening:
    """The last failure to open a pool: an attempt that waited (for the pool's lock) while another's open failed is
    told that failure instead of connecting again (a hundred calls, one connection attempt)."""

    def __init__(self) -> None:
        self.failed: tuple[float, BaseException] | None = None

    def failed_since(self, asked: float) -> BaseException | None:
        return self.failed[1] if self.failed is not None and self.failed[0] >= asked else None


class SyncPool:
    """A pool of plain connections for one URL, opened (and the schema migrated) when made, waiting out an outage.
    Connections are in autocommit mode: a transaction is begun by the code that needs one, and only there."""

    def __init__(self, url: str, *, max_size: int = 4) -> None:
        need_psycopg()
        self.url = url
        self.outage = outage_of(url)
        self._max_size = max_size
        self._pool: ConnectionPool[Connection[TupleRow]] | None = None
        self._lock = threading.Lock()
        self._opening = _Opening()
        self._used: weakref.WeakKeyDictionary[Connection[TupleRow], float] = weakref.WeakKeyDictionary()
        """When each connection last went back to the pool: one back a moment ago is not checked again."""
        self.outage.call("be opened", lambda _: self._current())

    def using(self, doing: str, work: Callable[[Connection[TupleRow]], T], *, wait_out: bool = True) -> T:
        """`work` on a connection of the pool, done again on another after a transient error while an outage of the
        server lasts (without `wait_out`: once more at most, at once, on a new connection); errors said as
        `LedgerError` (`doing`: what could not be done)."""

        def attempt(patience: float) -> T:
            with self._held(*self._checkout(patience)) as db:
                return work(db)

        return self.outage.call(doing, attempt, wait_out=wait_out)

    @contextlib.contextmanager
    def connection(self, doing: str) -> Generator[Connection[TupleRow]]:
        """A connection of the pool (waited for through an outage) for the length of the `with`, whose work is done
        once: what streams rows (`copying`) cannot be made again. Errors said as `LedgerError`."""
        with ledger_errors(self.url, doing), self._held(*self.outage.call(doing, self._checkout)) as db:
            yield db

    @contextlib.contextmanager
    def transaction(self, doing: str) -> Generator[Connection[TupleRow]]:
        """One transaction on a connection of the pool: committed when the `with` ends, rolled back if it raises."""
        with self.connection(doing) as connection, connection.transaction():
            yield connection

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _checkout(self, timeout: float) -> tuple[ConnectionPool[Connection[TupleRow]], Connection[TupleRow]]:
        """A connection of the current pool (opened first if need be), checked if it has been idle."""
        from psycopg_pool import ConnectionPool

        pool = self._current()
        try:
            db = pool.getconn(timeout)
        except Exception as exc:
            self._failed(pool, exc)
            raise
        if _idle(self._used.get(db)):
            try:
                ConnectionPool.check_connection(db)
            except Exception as exc:
                self._failed(pool, exc)
                pool.putconn(db)
                raise
        return pool, db

    @contextlib.contextmanager
    def _held(
        self, pool: ConnectionPool[Connection[TupleRow]], db: Connection[TupleRow]
    ) -> Generator[Connection[TupleRow]]:
        """`db`, of `pool`, for the length of the `with`: given back after it, `pool` replaced should it raise a
        transient error."""
        try:
            yield db
        except Exception as exc:
            self._failed(pool, exc)
            raise
        finally:
            self._used[db] = time.monotonic()
            pool.putconn(db)

    def _current(self) -> ConnectionPool[Connection[TupleRow]]:
        pool = self._pool
        if pool is not None:
            return pool
        asked = time.monotonic()
        with self._lock:
            if self._pool is None:
                failed = self._opening.failed_since(asked)
                if failed is not None:
                    raise failed
                try:
                    self._pool = self._open()
                except Exception as exc:
                    self._opening.failed = (time.monotonic(), exc)
                    raise
            return self._pool

    def _open(self) -> ConnectionPool[Connection[TupleRow]]:
        from psycopg_pool import ConnectionPool

        migrated(self.url)
        pool: ConnectionPool[Connection[TupleRow]] = ConnectionPool(
            connection_url(self.url), min_size=1, max_size=self._max_size, kwargs=_options(), open=False,
            name="lowtide-ledger",
        )  # fmt: skip
        try:
            pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        except BaseException:
            pool.close()
            raise
        return pool

    def _failed(self, pool: ConnectionPool[Connection[TupleRow]], exc: Exception) -> None:
        """After a transient error, `pool` (if it is still the current one) is closed: the next attempt opens
        another."""
        if not transient(exc):
            return
        with self._lock:
            if self._pool is not pool:
                return
            self._pool = None
        pool.close()


def _idle(used: float | None) -> bool:
    """Whether a connection last given back at `used` (None: never, a new one) is checked before it is used."""
    return used is None or time.monotonic() - used > CHECK_IDLE_SECONDS


class PostgresPool:
    """A pool for one URL, opened in the running event loop on first use (and again after `aclose`, or after an
    outage of the server). Its connections are in autocommit mode: a transaction is begun by the code that needs one,
    and only there.

    A pool left open is closed when its event loop's tasks are cancelled (the end of `asyncio.run`): psycopg_pool's
    async workers catch a cancellation that lands while they run a task of theirs and go back to waiting for the
    next, so a loop that only cancelled them would wait for them forever and the program would never exit. Closed,
    they are told to stop and do. So is a pool replaced after an outage that is still closing then.
    """

    def __init__(self, url: str, *, max_size: int = 4, outage: Outage | None = None) -> None:
        need_psycopg()
        self._url = url
        self.outage = outage or outage_of(url)
        """How its work waits out an outage: the ledger's, shared by its faces (one outage, said once)."""
        self._max_size = max_size
        self._pool: AsyncConnectionPool[AsyncConnection[TupleRow]] | None = None
        self._lock = asyncio.Lock()
        self._opening = _Opening()
        self._retired: set[AsyncConnectionPool[AsyncConnection[TupleRow]]] = set()
        """Pools replaced after an outage, while they close."""
        self._guard: asyncio.Task[None] | None = None
        self._used: weakref.WeakKeyDictionary[AsyncConnection[TupleRow], float] = weakref.WeakKeyDictionary()

    @property
    def location(self) -> str:
        """The URL, password redacted: what may be shown or stored."""
        return redacted(self._url)

    async def using(
        self, doing: str, work: Callable[[AsyncConnection[TupleRow]], Awaitable[T]], *, wait_out: bool = True
    ) -> T:
        """`work` on a connection of the pool, done again on another after a transient error while an outage of the
        server lasts (without `wait_out`: once more at most, at once, on a new connection); errors said as
        `LedgerError` (`doing`: what could not be done)."""

        async def attempt(patience: float) -> T:
            async with self._held(*await self._checkout(patience)) as db:
                return await work(db)

        return await self.outage.call_async(doing, attempt, wait_out=wait_out)

    @contextlib.asynccontextmanager
    async def connection(self, doing: str) -> AsyncGenerator[AsyncConnection[TupleRow]]:
        """A connection of the pool (waited for through an outage) for the length of the `async with`, whose work
        is done once; errors said as `LedgerError`."""
        lent = await self.outage.call_async(doing, self._checkout)
        with ledger_errors(self._url, doing):
            async with self._held(*lent) as db:
                yield db

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        guard, self._guard = self._guard, None
        if guard is not None and guard is not asyncio.current_task():
            guard.cancel()
        if pool is not None:
            await pool.close()

    async def _checkout(
        self, patience: float
    ) -> tuple[AsyncConnectionPool[AsyncConnection[TupleRow]], AsyncConnection[TupleRow]]:
        """A connection of the current pool (opened first if need be), checked if it has been idle."""
        asked = cancel_requests()
        pool = await self._current()
        try:
            db = await pool.getconn(patience)
        except Exception as exc:
            await self._failed(pool, exc)
            raise
        try:
            # A task cancelled as the pool handed it this connection may not have been told (`lowtide.core.cancelling`):
            # it is told now, and the connection goes back.
            stop_if_cancelled(asked)
            if _idle(self._used.get(db)):
                await pool.check_connection(db)
        except BaseException as exc:
            if isinstance(exc, Exception):
                await self._failed(pool, exc)
            await pool.putconn(db)
            raise
        return pool, db

    @contextlib.asynccontextmanager
    async def _held(
        self, pool: AsyncConnectionPool[AsyncConnection[TupleRow]], db: AsyncConnection[TupleRow]
    ) -> AsyncGenerator[AsyncConnection[TupleRow]]:
        """`db`, of `pool`, for the length of the `async with`: given back after it, `pool` replaced should it raise
        a transient error."""
        try:
            yield db
        except Exception as exc:
            await self._failed(pool, exc)
            raise
        finally:
            self._used[db] = time.monotonic()
            await pool.putconn(db)

    async def _current(self) -> AsyncConnectionPool[AsyncConnection[TupleRow]]:
        pool = self._pool
        if pool is not None:
            return pool
        asked = time.monotonic()
        async with self._lock:
            if self._pool is None:
                failed = self._opening.failed_since(asked)
                if failed is not None:
                    raise failed
                try:
                    self._pool = await self._open()
                except Exception as exc:
                    self._opening.failed = (time.monotonic(), exc)
                    raise
            return self._pool

    async def _open(self) -> AsyncConnectionPool[AsyncConnection[TupleRow]]:
        from psycopg_pool import AsyncConnectionPool

        # The first connection is made here, not by the pool's workers: a refused connection or a wrong password is
        # said at once, with the server's reason (the pool would only time out), and the schema is brought up to date.
        await migrated_async(self._url)
        pool: AsyncConnectionPool[AsyncConnection[TupleRow]] = AsyncConnectionPool(
            connection_url(self._url), min_size=1, max_size=self._max_size, kwargs=_options(), open=False,
            name="lowtide-ledger",
        )  # fmt: skip
        try:
            await pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        except BaseException:
            await pool.close()
            raise
        if self._guard is None:
            self._guard = asyncio.get_running_loop().create_task(self._close_with_loop(), name="lowtide-ledger-pool")
        return pool

    async def _failed(self, pool: AsyncConnectionPool[AsyncConnection[TupleRow]], exc: Exception) -> None:
        """After a transient error, `pool` (if it is still the current one) is closed: the next attempt opens
        another."""
        if not transient(exc) or self._pool is not pool:
            return
        self._pool = None
        self._retired.add(pool)
        try:
            await pool.close()
        finally:
            self._retired.discard(pool)

    async def _close_with_loop(self) -> None:
        """Wait until the loop's tasks are cancelled, then close the pool of the moment, and any being replaced
        (`aclose` closes it otherwise)."""
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            if self._guard is asyncio.current_task():  # not cancelled by `aclose`, which closes what it holds
                self._guard = None
                pool, self._pool = self._pool, None
                for closing in [*self._retired, *([pool] if pool is not None else [])]:
                    await closing.close()
