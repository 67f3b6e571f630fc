"""What keeps a PostgreSQL ledger's processes in touch: each one's heartbeat (`Heartbeat`: the leases of the owners
it runs, renewed by a thread of its own), and the announcements of batches that changed (`Listener`: one `LISTEN`
connection per process, whose notices wake the coroutines waiting on those batches, in whatever event loop).

Both run in threads, not in an event loop: a lease must be renewed while the loop is busy (a long `gather`, results
being stored), and a notice must reach every loop of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from lowtide.errors import LedgerError
from lowtide.ledger.postgres.pool import SyncPool, connect, host_id, ledger_errors

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

__all__ = ["Heartbeat", "Listener"]

log = logging.getLogger("lowtide.ledger")

_RECONNECT_SECONDS = 1.0


class Heartbeat:
    """The leases of this process's owners in `owners`, renewed every third of the lease by one thread."""

    def __init__(self, pool: SyncPool) -> None:
        self._pool = pool
        self._owners: dict[str, tuple[float, Callable[[], float]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def keep(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        """Renew `owner`'s lease now and from then on, while the process lives, on the clock `now` reads."""
        self._renew({owner: (lease_seconds, now)}, started=True)
        with self._lock:
            self._owners[owner] = (lease_seconds, now)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lowtide-heartbeat", daemon=True)
                self._thread.start()

    def let_go(self, owner: str) -> None:
        """Stop renewing `owner`'s lease and end it: its work is free for any other process at once."""
        with self._lock:
            self._owners.pop(owner, None)
        self._end([owner])

    def close(self) -> None:
        """End every lease this process holds, and stop the thread."""
        self._stop.set()
        with self._lock:
            owners, self._owners = list(self._owners), {}
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)
        try:
            self._end(owners)
        except LedgerError as exc:  # the database is gone: the leases run out by themselves
            log.warning("Could not end this process's leases: %s", exc)

    def _run(self) -> None:
        while True:
            with self._lock:
                owners = dict(self._owners)
            period = min((lease for lease, _ in owners.values()), default=30.0) / 3
            if self._stop.wait(period):
                return
            with self._lock:
                owners = {owner: held for owner, held in self._owners.items() if owner in owners}
            try:
                self._renew(owners, started=False)
            except LedgerError as exc:  # the next beat tries again; a lease that runs out meanwhile is taken over
                log.warning("Could not renew this process's leases: %s", exc)

    def _renew(self, owners: dict[str, tuple[float, Callable[[], float]]], *, started: bool) -> None:
        if not owners:
            return
        rows = [(owner, now() + lease, now()) for owner, (lease, now) in owners.items()]
        with self._pool.transaction("renew this process's leases") as db:
            for owner, until, at in rows:
                if started:
                    db.execute(
                        "INSERT INTO owners (owner, host, pid, started_at, lease_until) VALUES (%s, %s, %s, %s, %s)"
                        " ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until",
                        (owner, host_id(), os.getpid(), at, until),
                    )
                else:
                    db.execute("UPDATE owners SET lease_until = %s WHERE owner = %s", (until, owner))

    def _end(self, owners: list[str]) -> None:
        if owners:
            with self._pool.transaction("end this process's leases") as db:
                db.execute("UPDATE owners SET lease_until = 0 WHERE owner = ANY(%s)", (owners,))


class Listener:
    """One connection listening on `channel`; each notice (a batch's ledger id) wakes the coroutines watching that
    batch. Should the connection drop, it is made again, and every watcher is woken (it may have missed a notice)."""

    def __init__(self, url: str, channel: str) -> None:
        self._url = url
        self._channel = channel
        self._watchers: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lowtide-listener", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def watch(self, batch_id: str) -> asyncio.Event:
        """An event set at the next notice about `batch_id` (for the running event loop); `unwatch` it after."""
        event = asyncio.Event()
        with self._lock:
            self._watchers.setdefault(batch_id, set()).add((asyncio.get_running_loop(), event))
        return event

    def unwatch(self, batch_id: str, event: asyncio.Event) -> None:
        with self._lock:
            watchers = self._watchers.get(batch_id)
            if watchers is not None:
                watchers.difference_update({w for w in watchers if w[1] is event})
                if not watchers:
                    del self._watchers[batch_id]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _wake(self, batch_id: str | None) -> None:
        with self._lock:
            if batch_id is None:
                woken = [w for watchers in self._watchers.values() for w in watchers]
            else:
                woken = list(self._watchers.get(batch_id, ()))
        for loop, event in woken:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits there any more
                loop.call_soon_threadsafe(event.set)

    def _run(self) -> None:
        from psycopg import sql

        while not self._stop.is_set():
            try:
                with ledger_errors(self._url, "be listened to"), connect(self._url) as db:
                    db.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                    self._ready.set()
                    self._wake(None)  # anything announced while no one listened: every watcher looks again
                    self._listen(db)
            except LedgerError as exc:
                self._ready.set()
                log.warning("Lost the ledger's notices (%s); listening again in %s s.", exc, _RECONNECT_SECONDS)
                self._stop.wait(_RECONNECT_SECONDS)

    def _listen(self, db: Connection[TupleRow]) -> None:  # until stopped, or the connection fails
        while not self._stop.is_set():
            for notice in db.notifies(timeout=0.2):
                self._wake(notice.payload)
