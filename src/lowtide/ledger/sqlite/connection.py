"""`SqliteFile`: a ledger's SQLite file opened for lowtide: private, in WAL mode, migrated, one connection shared by
the process's threads, its transactions (`BEGIN IMMEDIATE`) and the checkpoints of its WAL off the writers' path.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from lowtide.errors import ConfigurationError, LedgerError
from lowtide.ledger.interface import LedgerVersionError
from lowtide.ledger.location import default_ledger_path
from lowtide.ledger.sqlite.checkpoint import INLINE_PAGES, Checkpointer
from lowtide.ledger.sqlite.schema import SCHEMA_VERSION, migrate

T = TypeVar("T")

log = logging.getLogger(__name__)

CHUNK = 1000
"""Rows per statement batch (`executemany`) and per `IN (...)` list."""
_CACHE_KIB = 8192
"""SQLite's page cache per connection (its default is 2 MiB). A transaction whose dirty pages outgrow the cache spills
them to the WAL and writes them again at commit: at 100,000 requests in one batch, 8 MiB instead of 2 made 30% fewer
writes and 63% fewer reads (`strace -c`: 207,000 and 69,500 calls against 296,000 and 186,000), for 6 MiB of memory."""


class SqliteFile:
    """The connection to one SQLite ledger file (WAL), its transactions and its checkpoints.

    `read_only`: for a process that only reads (`lowtide status` on a ledger it cannot write): nothing is created,
    migrated or written. The file is opened with SQLite's `mode=ro`, which still makes the `-shm` file readers of a
    WAL share; where even that cannot be made (a read-only directory or file system), with `immutable=1`, which reads
    the main file alone (writes still in a `-wal` left beside it are not seen, and a warning says so).
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        self.path = Path(path).expanduser() if path is not None else default_ledger_path()
        self.read_only = read_only
        self._db = _read_only(self.path) if read_only else _writable(self.path)
        self._lock = threading.RLock()
        self._db.row_factory = sqlite3.Row
        try:
            if not read_only:
                _wal(self._db)
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            if read_only:
                _check_version(self._db, self.path)
            else:
                migrate(self._db)
                # Commits never checkpoint inline: a thread of the ledger's own does (see `checkpoint`).
                self._db.execute("PRAGMA wal_autocheckpoint=0")
            (self._identity,) = self._db.execute("SELECT id FROM identity").fetchone()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            lead = "is not a lowtide ledger, or it is damaged"
            raise LedgerError(damaged_message(self.path, exc, lead=lead)) from exc
        except BaseException:
            self._db.close()
            raise
        self.checkpointer = Checkpointer(self.path, on_failure=self._checkpoint_inline)
        """What checkpoints the WAL, off the writers' path."""

    @property
    def location(self) -> str:
        return str(self.path)

    def identity(self) -> str:
        """The ledger's own id: random, made with the ledger (schema 7), never changed."""
        return str(self._identity)

    def close(self) -> None:
        """Stop the checkpoint thread and close the connection (again: nothing)."""
        self.checkpointer.close()
        with self._lock:
            self._db.close()

    def _checkpoint_inline(self, _: Exception) -> None:
        with self._lock:
            self._db.execute(f"PRAGMA wal_autocheckpoint={INLINE_PAGES}")

    @contextmanager
    def _transaction(self) -> Generator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise self._failed(exc, "written") from exc
        self.checkpointer.written()

    @contextmanager
    def _reading(self) -> Generator[sqlite3.Connection]:
        """The connection, alone, for reads: an error of the database (a damaged page, a lock held too long) is the
        ledger's `LedgerError`, never a crash of lowtide's."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise self._failed(exc, "read") from exc

    def _failed(self, exc: sqlite3.Error, doing: str) -> LedgerError:
        if is_damage(exc):
            return LedgerError(damaged_message(self.path, exc))
        return LedgerError(f"The ledger {self.path} could not be {doing}: {exc}.")

    # For the stores built on this ledger's file (bulk runs: lowtide.ledger.runs).

    def forget_kinds(self) -> None:
        """A request's actor and model may have changed (a live answer stored under its key): what is kept of the
        batches' actors and models no longer holds (`BatchRows`)."""

    @contextmanager
    def transaction(self) -> Generator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction on the ledger's connection."""
        with self._transaction() as db:
            yield db

    def select(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._reading() as db:
            return db.execute(sql, args).fetchall()


_DAMAGE_CODES = (11, 26)
"""SQLITE_CORRUPT and SQLITE_NOTADB: the file's pages are not what SQLite wrote (`sqlite_errorcode`'s low byte)."""


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` says the ledger's file is damaged (not a lock, a full disk or a read-only place)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and isinstance(code, int) and code & 0xFF in _DAMAGE_CODES


def damaged_message(path: Path | str, exc: BaseException, *, lead: str = "is damaged") -> str:
    """What to do with a damaged ledger file, in one line: rebuild it from the APIs, and not start a new one."""
    return (
        f"The ledger {path} {lead} ({exc}). Do not start a new ledger and run your programs again: a new ledger has"
        " an identity of its own, so it would send (and pay for) again every request this one had sent. Rebuild it"
        f" from the providers' APIs instead: lowtide ledger rebuild --ledger {path} --actors ACTOR_FILE (it moves"
        " the damaged file aside; lowtide ledger rebuild --help says more)."
    )


def _writable(path: Path) -> sqlite3.Connection:
    """A connection to the ledger file at `path`, made (private) if it does not exist."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Prompts and answers live here: the file is the user's alone. SQLite gives its -wal and -shm files the
        # main file's permissions, so the main file is made private before SQLite opens it.
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    except OSError as exc:
        raise LedgerError(
            f"The ledger cannot be opened at {path}: {exc.strerror or exc}. Choose a place that can be"
            " written (the actor's `ledger`, LOWTIDE_LEDGER, or --ledger)."
        ) from None
    for private in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
        if private.exists():
            os.chmod(private, 0o600)
    return sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)


def schema_version(path: Path) -> int:
    """The schema version of the ledger file at `path`, read without writing to it (0: no ledger there)."""
    db = _read_only(path)
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
    finally:
        db.close()
    return int(version)


def snapshot(path: Path, into: Path, *, writable: bool) -> None:
    """Copy the ledger file at `path` (its WAL's writes included) into the new file `into` by SQLite's online backup,
    changing nothing `path` holds. `writable`: read through a plain connection, whose close checkpoints and removes the
    `-wal` and `-shm` files as any lowtide process's last close does (a read-only one would leave them behind); else
    through a read-only one."""
    source = sqlite3.connect(path, timeout=30.0) if writable else _read_only(path)
    try:
        copy = sqlite3.connect(into)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()


def _read_only(path: Path) -> sqlite3.Connection:
    """A connection that reads the ledger at `path` and writes nothing: `mode=ro`, else (no `-shm` can be made
    beside it) `immutable=1`."""
    uri = path.absolute().as_uri()
    for mode in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the -shm is made (or not) at the first read
        except sqlite3.DatabaseError as exc:
            db.close()
            if is_damage(exc):
                raise LedgerError(damaged_message(path, exc)) from exc
            if mode == "immutable=1" or not isinstance(exc, sqlite3.OperationalError):
                raise LedgerError(f"The ledger {path} cannot be read: {exc}.") from None
            continue
        if mode == "immutable=1":
            wal = path.with_name(path.name + "-wal")
            if wal.is_file() and wal.stat().st_size > 0:
                log.warning(
                    "The ledger %s is read from its main file alone: its -wal holds writes not yet copied into it,"
                    " which cannot be read from a place where nothing can be written. What is shown may be older"
                    " than what the ledger holds.",
                    path,
                )
        return db
    raise AssertionError("unreachable")  # pragma: no cover


def _check_version(db: sqlite3.Connection, path: Path) -> None:
    """A ledger opened read-only cannot be migrated: it must hold this lowtide's schema already."""
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise LedgerVersionError(
            f"The ledger has schema version {version}, newer than this lowtide understands ({SCHEMA_VERSION}); "
            "upgrade lowtide.",
            field="ledger",
        )
    if version == 0:
        raise ConfigurationError(f"{path} holds no lowtide ledger.", field="ledger")
    if version < SCHEMA_VERSION:
        raise ConfigurationError(
            f"The ledger {path} has schema version {version}, older than this lowtide's ({SCHEMA_VERSION}), and it is"
            " opened read-only here, so it cannot be brought up to date: run any lowtide command that writes to it"
            " (lowtide collect, say) once where it can be written.",
            field="ledger",
        )


def _wal(db: sqlite3.Connection, *, patience: float = 30.0) -> None:
    """Put the file in WAL mode. Switching needs a moment alone with the file, and SQLite may answer "locked"
    at once, without waiting, while another process opens the same new ledger: so wait and ask again."""
    deadline = time.monotonic() + patience
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:  # pragma: no cover - a race between two first opens of a file
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
