"""Connections to a PostgreSQL ledger: a pool of async psycopg connections opened from a `postgresql://` URL, the
schema migrated on the first one, and every driver error turned into a `LedgerError` that never holds the password.

psycopg is an optional dependency (`pip install 'lowtide[postgres]'`): without it, a PostgreSQL URL is refused with
that instruction, and nothing else in lowtide imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import socket
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING

from lowtide.errors import ConfigurationError, LedgerError
from lowtide.ledger.postgres.url import redacted, scrub

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow
    from psycopg_pool import AsyncConnectionPool

__all__ = ["HOST_ID_ENV", "PostgresPool", "host_id"]

HOST_ID_ENV = "LOWTIDE_HOST_ID"
_CONNECT_TIMEOUT = 10


def host_id() -> str:
    """What this process calls its host: `$LOWTIDE_HOST_ID`, else the machine's name. Shown to the server as the
    connections' `application_name`, so that an operator sees who holds what (`pg_stat_activity`)."""
    return os.environ.get(HOST_ID_ENV) or socket.gethostname()


@contextlib.contextmanager
def ledger_errors(url: str, doing: str) -> Generator[None]:
    """Turn psycopg's errors (and pool timeouts) into `LedgerError`, saying `doing` and the URL, password removed."""
    from psycopg import Error
    from psycopg_pool import PoolTimeout

    try:
        yield
    except (Error, PoolTimeout, OSError) as exc:
        detail = scrub(str(exc).strip() or type(exc).__name__, url)
        raise LedgerError(f"The PostgreSQL ledger at {redacted(url)} could not {doing}: {detail}") from None


class PostgresPool:
    """A pool for one URL, opened in the running event loop on first use (and again after `aclose`). Its
    connections are in autocommit mode: a transaction is begun by the code that needs one, and only there."""

    def __init__(self, url: str, *, max_size: int = 4) -> None:
        if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
            raise ConfigurationError(
                "A PostgreSQL ledger needs psycopg: pip install 'lowtide[postgres]'.", field="ledger"
            )
        self._url = url
        self._max_size = max_size
        self._pool: AsyncConnectionPool[AsyncConnection[TupleRow]] | None = None
        self._opening = asyncio.Lock()

    @property
    def location(self) -> str:
        """The URL, password redacted: what may be shown or stored."""
        return redacted(self._url)

    async def _open(self) -> AsyncConnectionPool[AsyncConnection[TupleRow]]:
        from psycopg import AsyncConnection
        from psycopg_pool import AsyncConnectionPool

        from lowtide.ledger.postgres.schema import migrate

        name = f"lowtide {host_id()}"[:63]
        # The first connection is made here, not by the pool's workers: a refused connection or a wrong password is
        # said at once, with the server's reason (the pool would only time out), and the schema is brought up to date.
        with ledger_errors(self._url, "be opened"):
            first = await AsyncConnection.connect(self._url, application_name=name, connect_timeout=_CONNECT_TIMEOUT)
            try:
                await migrate(first)
            finally:
                await first.close()
            pool: AsyncConnectionPool[AsyncConnection[TupleRow]] = AsyncConnectionPool(
                self._url,
                min_size=1,
                max_size=self._max_size,
                kwargs={"application_name": name, "connect_timeout": _CONNECT_TIMEOUT, "autocommit": True},
                open=False,
                name="lowtide-ledger",
            )
            await pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        return pool

    @contextlib.asynccontextmanager
    async def connection(self, doing: str) -> AsyncGenerator[AsyncConnection[TupleRow]]:
        """A connection of the pool for the length of the `with`; errors said as `LedgerError` (`doing`: what
        could not be done)."""
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    self._pool = await self._open()
        with ledger_errors(self._url, doing):
            async with self._pool.connection() as connection:
                yield connection

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
