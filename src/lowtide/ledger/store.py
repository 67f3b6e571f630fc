"""The ledger as lowtide uses it: the process's one open ledger per file (`open_ledger`), closed when the program
exits, and the names the rest of lowtide imports from here.

`records` holds what the ledger holds (states, records, stored JSON), `sqlite` the SQLite store (`Ledger`),
`postgres` the PostgreSQL store (`PostgresLedger`, chosen by a `postgresql://` URL), `memory` one in the process's
memory for tests (`MemoryLedger`), `location` where it lives by default.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from lowtide.ledger.interface import LedgerStore, RunLedger
from lowtide.ledger.location import LEDGER_ENV, default_ledger_path
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.postgres.url import configured_url
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
    "open_ledger",
    "stored_json",
]

_open: dict[Path | str, LedgerStore] = {}
_open_lock = threading.Lock()
_closing_at_exit = False


def open_ledger(path: str | Path | None = None) -> LedgerStore:
    """The process's one ledger for `path` (default location when None: `$LOWTIDE_LEDGER`, else the user's state
    directory), opened on first use: the SQLite file it names, or the PostgreSQL database a `postgresql://` URL names.

    Every ledger opened here is closed when the program exits (`atexit`), while the interpreter is whole: its
    checkpoint thread stopped and its last connection closed, which checkpoints the WAL and removes the `-wal` and
    `-shm` files. Left to the interpreter's final collection instead, a connection closes at no set time, in no set
    order with its thread.
    """
    url = configured_url(path)
    resolved = url if url is not None else (Path(path).expanduser() if path is not None else default_ledger_path())
    if isinstance(resolved, Path):
        resolved = resolved.resolve()
    global _closing_at_exit
    with _open_lock:
        ledger = _open.get(resolved)
        if ledger is None:
            ledger = _open[resolved] = _opened(resolved)
        if not _closing_at_exit:
            atexit.register(close_ledgers)
            _closing_at_exit = True
        return ledger


def _opened(where: Path | str) -> LedgerStore:
    if isinstance(where, Path):
        return Ledger(where)
    from lowtide.ledger.postgres.ledger import PostgresLedger  # psycopg is imported only for such a URL

    return PostgresLedger(where)


def close_ledgers() -> None:
    """Close every ledger `open_ledger` opened in this process (tests, and programs that switch ledgers)."""
    with _open_lock:
        for ledger in _open.values():
            ledger.close()
        _open.clear()
