"""WAL checkpoints in a thread of their own, so that no commit waits for one.

In WAL mode every commit appends to the `-wal` file, and a checkpoint copies those pages back into the database
file and syncs it. By default SQLite makes whichever commit pushes the WAL past 1,000 pages do that work inline:
in lowtide that commit is a batch's results being stored while thousands of callers wait, on the event loop.

A `Checkpointer` takes that work off the writer: the ledger's connection stops checkpointing
(`wal_autocheckpoint=0`) and tells the checkpointer after each write transaction; a daemon thread with a
connection of its own runs a `PASSIVE` checkpoint (which never blocks readers or writers) once the writes pause
(`idle` seconds without one), or `at_most` seconds after the first write it has not yet checkpointed, whichever
comes first. A pause is where a batch waits on the API, so the copying happens while nobody waits for it, each
page once however many times a burst rewrote it, and SQLite does it without the GIL. The WAL holds at most a few
seconds of writes. Should the thread fail, the ledger's connection goes back to checkpointing inline, so the WAL
never grows without bound. Closing the ledger's last connection checkpoints what is left and removes the WAL, as
SQLite always does.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["Checkpointer"]

log = logging.getLogger(__name__)

# Pages SQLite's own automatic checkpoint waits for (its default): the fallback after a failure.
INLINE_PAGES = 1000
# How long the thread's connection waits for a lock (a WAL being recovered by another process): a checkpoint that
# cannot run now runs at the next pause, so it need not wait long, and a closing ledger waits for it at most this.
_CONNECT_TIMEOUT = 5.0


class Checkpointer:
    """Checkpoints the WAL of `path` shortly after writes, in a daemon thread started on the first write."""

    def __init__(
        self, path: Path, *, idle: float = 0.5, at_most: float = 5.0, on_failure: Callable[[Exception], None]
    ) -> None:
        self.path = path
        self.idle = idle
        """Seconds without a write after which the WAL is checkpointed."""
        self.at_most = at_most
        """Seconds a write waits at most for its checkpoint while writes keep coming."""
        self.checkpoints = 0
        """Checkpoints run so far (for tests and diagnostics)."""
        self._on_failure = on_failure
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed = False
        self._start_lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def written(self) -> None:
        """A write transaction committed: checkpoint soon."""
        if self._thread is None:
            with self._start_lock:
                if self._thread is None and not self._stop.is_set() and not self._failed:
                    self._thread = threading.Thread(
                        target=self._run, name=f"lowtide-checkpoint:{self.path.name}", daemon=True
                    )
                    self._thread.start()
        self._wake.set()

    def close(self) -> None:
        """Stop the thread (after a checkpoint under way finishes); the ledger's own close does the last one."""
        self._stop.set()
        self._wake.set()
        with self._start_lock:
            thread = self._thread
        if thread is not None:
            # A checkpoint under way finishes in moments (PASSIVE never waits for others); a wait for a lock is
            # bounded by the connection's timeout. Never block an exit on it for longer than that.
            thread.join(_CONNECT_TIMEOUT + 1.0)
            if thread.is_alive():  # pragma: no cover - a file system that stopped answering
                log.warning("The checkpoint thread of %s did not stop; the ledger closes without it.", self.path)

    def _run(self) -> None:
        db: sqlite3.Connection | None = None
        try:
            db = self._connect()
            while self._pause():
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.checkpoints += 1
        except Exception as exc:
            self._failed = True
            log.warning("WAL checkpoints of %s go back inline: the checkpoint thread failed (%s).", self.path, exc)
            try:
                self._on_failure(exc)
            except Exception:  # pragma: no cover - the ledger's own connection failing too: its next use says so
                log.exception("Could not switch %s back to inline WAL checkpoints.", self.path)
        finally:
            if db is not None:
                db.close()

    def _pause(self) -> bool:
        """Wait for a write, then for the writes to pause (or `at_most`); False once the ledger closes."""
        self._wake.wait()
        first = time.monotonic()
        while not self._stop.is_set():
            self._wake.clear()
            waited = time.monotonic() - first
            quiet = not self._wake.wait(max(0.0, min(self.idle, self.at_most - waited)))
            if quiet or time.monotonic() - first >= self.at_most:
                return not self._stop.is_set()
        return False

    def _connect(self) -> sqlite3.Connection:
        # `mode=rw`: a ledger file that has gone away is an error here, not a new empty database.
        return sqlite3.connect(
            f"{self.path.absolute().as_uri()}?mode=rw", uri=True, timeout=_CONNECT_TIMEOUT, isolation_level=None
        )
