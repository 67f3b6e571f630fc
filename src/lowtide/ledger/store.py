"""The ledger as lowtide uses it: the process's one open ledger per file (`open_ledger`), closed when the program
exits, and the names the rest of lowtide imports from here.

`records` holds what the ledger holds (states, records, stored JSON), `sqlite` the SQLite store (`Ledger`),
`postgres` the PostgreSQL store (`PostgresLedger`, chosen by a `postgresql://` URL), `memory` one in the process's
memory for tests (`MemoryLedger`, or `memory:`), `location` where a ledger setting says it lives (the one reading of
`--ledger`, `$LOWTIDE_LEDGER` and an actor's `ledger:`) and where it lives by default.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from lowtide.ledger.interface import LedgerStore, RunLedger
from lowtide.ledger.location import LEDGER_ENV, LedgerLocation, default_ledger_path, ledger_location
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.records import (
    BatchRecord,
    BatchState,
    NewRequest,
    OutcomeRow,
    RequestRecord,
    RequestState,
    answer_json,
    stored_json,
)
from lowtide.ledger.sqlite import Ledger

__all__ = [
    "LEDGER_ENV",
    "BatchRecord",
    "BatchState",
    "Ledger",
    "LedgerLocation",
    "LedgerStore",
    "MemoryLedger",
    "NewRequest",
    "OutcomeRow",
    "RequestRecord",
    "RequestState",
    "RunLedger",
    "answer_json",
    "close_ledgers",
    "default_ledger_path",
    "ledger_location",
    "open_ledger",
    "stored_json",
]

_open: dict[tuple[LedgerLocation, bool], LedgerStore] = {}
_open_lock = threading.Lock()
_closing_at_exit = False


def open_ledger(path: str | Path | None = None, *, read_only: bool = False) -> LedgerStore:
    """The process's one ledger for `path` (default location when None: `$LOWTIDE_LEDGER`, else the user's state
    directory), opened on first use: the SQLite file it names (a path, or `sqlite:`), the PostgreSQL database a
    `postgresql://` URL names, or the process's memory ledger (`memory:`); anything else is a `ConfigurationError`
    (`location.ledger_location`). `read_only`: a SQLite file is opened so that nothing is written to it, nor beside it
    where that cannot be (`SqliteFile`); the other stores are opened as they always are.

    Every ledger opened here is closed when the program exits (`atexit`), while the interpreter is whole: its
    checkpoint thread stopped and its last connection closed, which checkpoints the WAL and removes the `-wal` and
    `-shm` files. Left to the interpreter's final collection instead, a connection closes at no set time, in no set
    order with its thread.
    """
    location = ledger_location(path)
    if location.scheme == "sqlite":
        location = LedgerLocation("sqlite", str(location.path.resolve()))
    read_only = read_only and location.scheme == "sqlite"
    global _closing_at_exit
    with _open_lock:
        ledger = _open.get((location, read_only))
        if ledger is None:
            ledger = _open[(location, read_only)] = _opened(location, read_only=read_only)
        if not _closing_at_exit:
            atexit.register(close_ledgers)
            _closing_at_exit = True
        return ledger


def _opened(location: LedgerLocation, *, read_only: bool) -> LedgerStore:
    """The store for `location`, by its scheme (`location.SCHEMES`)."""
    match location.scheme:
        case "sqlite":
            return Ledger(location.path, read_only=read_only)
        case "memory":
            return MemoryLedger()
        case "postgresql":
            from lowtide.ledger.postgres.ledger import PostgresLedger  # psycopg is imported only for such a URL

            return PostgresLedger(location.target)


def close_ledgers() -> None:
    """Close every ledger `open_ledger` opened in this process (tests, and programs that switch ledgers)."""
    with _open_lock:
        for ledger in _open.values():
            ledger.close()
        _open.clear()
