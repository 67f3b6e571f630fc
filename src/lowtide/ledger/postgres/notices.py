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
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from lowtide.errors import LedgerError
from lowtide.ledger.postgres.outage import backoff
from lowtide.ledger.postgres.pool import SyncPool, connect, host_id, ledger_errors
from lowtide.ledger.postgres.steps import Op, Sql, run

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

__all__ = ["Heartbeat", "Listener", "end_leases", "renew_leases"]

log = logging.getLogger("lowtide.ledger")


class Heartbeat:
    """The leases of this process's owners in `owners`, renewed every third of the lease by one thread."""

    def __init__(self, pool: SyncPool) -> None:
        self._pool = pool
        self._owners: dict[str, tuple[float, Callable[[], float]]] = {}
        self._fresh: set[str] = set()
        """Owners kept without waiting (`keep(..., wait=False)`), whose rows the thread makes on its next beat."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._poke = threading.Event()
        self._thread: threading.Thread | None = None

    def keep(self, owner: str, *, lease_seconds: float, now: Callable[[], float], wait: bool = True) -> None:
        """Renew `owner`'s lease now and from then on, while the process lives, on the clock `now` reads. Without
        `wait` (an event loop's caller), the thread makes its row at once, while the caller goes on: until then the
        rows `owner` claims carry their own lease (`owner_until`), as long."""
        if wait:
            self._renew({owner: (lease_seconds, now)}, started=True)
        with self._lock:
            self._owners[owner] = (lease_seconds, now)
            if not wait:
                self._fresh.add(owner)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lowtide-heartbeat", daemon=True)
                self._thread.start()
        if not wait:
            self._poke.set()

    def forget(self, owner: str) -> None:
        """Stop renewing `owner`'s lease (`end_leases` ends it)."""
        with self._lock:
            self._owners.pop(owner, None)
            self._fresh.discard(owner)

    def let_go(self, owner: str) -> None:
        """Stop renewing `owner`'s lease and end it: its work is free for any other process at once."""
        self.forget(owner)
        run(self._pool, "end this process's leases", partial(end_leases, [owner]))

    def close(self) -> None:
        """End every lease this process holds, and stop the thread."""
        self._stop.set()
        self._poke.set()
        with self._lock:
            owners, self._owners = list(self._owners), {}
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)
        try:  # once: a process that stops does not wait out an outage for leases that run out by themselves
            run(self._pool, "end this process's leases", partial(end_leases, owners), wait_out=False)
        except LedgerError as exc:  # the database is gone: the leases run out by themselves
            log.warning("Could not end this process's leases: %s", exc)

    def _run(self) -> None:
        failed = 0
        while True:
            with self._lock:
                period = min((lease for lease, _ in self._owners.values()), default=30.0) / 3
            # After a failed beat (the server restarting, failing over), the next comes soon, as the ledger's work
            # waits out an outage (`outage.backoff`): the leases are renewed as soon as the server is back. A beat is
            # tried once (and once more on a new connection), never held through the outage: `close` does not wait.
            self._poke.wait(backoff(failed) if failed else period)
            self._poke.clear()
            if self._stop.is_set():
                return
            with self._lock:
                owners = dict(self._owners)
                fresh, self._fresh = self._fresh, set()
            try:
                self._renew({o: held for o, held in owners.items() if o in fresh}, started=True, wait_out=False)
                self._renew({o: held for o, held in owners.items() if o not in fresh}, started=False, wait_out=False)
            except LedgerError as exc:  # tried again soon; a lease that runs out meanwhile is taken over
                with self._lock:
                    self._fresh |= {o for o in fresh if o in self._owners}
                if not failed:
                    log.warning(
                        "Could not renew this process's leases (%s); trying again until the server answers.", exc
                    )
                failed += 1
            else:
                failed = 0

    def _renew(
        self, owners: dict[str, tuple[float, Callable[[], float]]], *, started: bool, wait_out: bool = True
    ) -> None:
        if owners:
            rows = [(owner, now() + lease, now()) for owner, (lease, now) in owners.items()]
            op = partial(renew_leases, rows, started=started)
            run(self._pool, "renew this process's leases", op, wait_out=wait_out)


def renew_leases(rows: list[tuple[str, float, float]], *, started: bool) -> Op[None]:
    """(owner, lease until, now) for each: a started owner's row made (or renewed), others' renewed."""
    for owner, until, at in rows:
        if started:
            yield Sql(
                "INSERT INTO owners (owner, host, pid, started_at, lease_until) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until",
                (owner, host_id(), os.getpid(), at, until),
            )
        else:
            yield Sql("UPDATE owners SET lease_until = %s WHERE owner = %s", (until, owner))


def end_leases(owners: list[str]) -> Op[None]:
    """The owners' leases ended: their work is free for any process at once."""
    if owners:
        yield Sql("UPDATE owners SET lease_until = 0 WHERE owner = ANY(%s)", (owners,))


class Listener:
    """One connection listening on `channel`; each notice (a batch's ledger id) wakes the coroutines watching that
    batch. Should the connection drop (the server restarted, failed over), it is made again, as soon as the server
    answers, and every watcher is woken: notices sent meanwhile reached no one, so each reads the ledger again."""

    def __init__(self, url: str, channel: str) -> None:
        self._url = url
        self._channel = channel
        self._watchers: dict[str, dict[asyncio.Event, asyncio.AbstractEventLoop]] = {}
        """By batch, each watcher's event and its loop: tens of thousands of calls may wait on one batch, each
        unwatched in constant time."""
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
            self._watchers.setdefault(batch_id, {})[event] = asyncio.get_running_loop()
        return event

    def unwatch(self, batch_id: str, event: asyncio.Event) -> None:
        with self._lock:
            watchers = self._watchers.get(batch_id)
            if watchers is not None:
                watchers.pop(event, None)
                if not watchers:
                    del self._watchers[batch_id]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _wake(self, batch_id: str | None) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Event]] = {}
        with self._lock:
            watched = self._watchers.values() if batch_id is None else [self._watchers.get(batch_id, {})]
            for watchers in watched:
                for event, loop in watchers.items():
                    by_loop.setdefault(loop, []).append(event)
        for loop, events in by_loop.items():  # one wake-up of each loop, however many wait there
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits there any more
                loop.call_soon_threadsafe(_set_all, events)

    def _run(self) -> None:
        from psycopg import sql

        lost: float | None = None
        tries = 0
        while not self._stop.is_set():
            try:
                with ledger_errors(self._url, "be listened to"), connect(self._url) as db:
                    db.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                    self._ready.set()
                    if lost is not None:
                        log.warning("Listening to the ledger's notices again, after %.1f s; every watcher reads the "
                                    "ledger again.", time.monotonic() - lost)  # fmt: skip
                    lost, tries = None, 0
                    self._wake(None)  # anything announced while no one listened: every watcher looks again
                    self._listen(db)
            except LedgerError as exc:
                self._ready.set()
                if lost is None:  # said once an outage, not at each try
                    lost = time.monotonic()
                    log.warning("Lost the ledger's notices (%s); listening again once the server answers.", exc)
                self._stop.wait(backoff(tries))  # soon at first, then every 2 seconds at most
                tries += 1

    def _listen(self, db: Connection[TupleRow]) -> None:  # until stopped, or the connection fails
        while not self._stop.is_set():
            for notice in db.notifies(timeout=0.2):
                self._wake(notice.payload)


def _set_all(events: list[asyncio.Event]) -> None:
    for event in events:
        event.set()
