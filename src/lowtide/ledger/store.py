"""The ledger as lowtide uses it: the process's one open ledger per place (`open_ledger`), closed when the program
exits, and the names the rest of lowtide imports from here.

`records` and `runs` hold what the ledger holds (states, records, stored JSON), `interface` what a store offers
(`LedgerStore`), `location` where a ledger setting says it lives (the one reading of `--ledger`, `$LOWTIDE_LEDGER`
and an actor's `ledger:`), `kinds` the kinds of store by scheme; each store is a folder of its own (`sqlite`,
`postgres`, `memory`) that registers its kind, and nothing here imports one.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path

from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.location import LEDGER_ENV, LedgerLocation, default_ledger_path, ledger_location
from lowtide.ledger.records import (
    BatchClaim,
    BatchCreated,
    BatchIntent,
    BatchRecord,
    BatchState,
    NewRequest,
    OutcomeRow,
    RequestRecord,
    RequestState,
    answer_json,
    stored_json,
)
from lowtide.ledger.run_ledger import RunLedger

__all__ = [
    "LEDGER_ENV",
    "BatchClaim",
    "BatchCreated",
    "BatchIntent",
    "BatchRecord",
    "BatchState",
    "LedgerLocation",
    "LedgerStore",
    "NewRequest",
    "OutcomeRow",
    "RequestRecord",
    "RequestState",
    "RunLedger",
    "answer_json",
    "close_ledgers",
    "default_ledger_path",
    "ledger_location",
    "missing_ledger",
    "open_ledger",
    "stored_json",
]

_open: dict[tuple[LedgerLocation, bool], LedgerStore] = {}
_open_lock = threading.Lock()
_closing_at_exit = False


def missing_ledger(path: str | Path | None) -> str | None:
    """Where the ledger `path` names should be, shown, when none is there yet (a SQLite file not made); None when
    there is one, or when only opening it can tell (a database's). Nothing is opened or made."""
    location = ledger_location(path)
    return location.kind.missing(location.target)


def open_ledger(
    path: str | Path | LedgerLocation | None = None, *, read_only: bool = False, own: bool = False
) -> LedgerStore:
    """The process's one ledger for `path` (default location when None: `$LOWTIDE_LEDGER`, else the user's state
    directory), opened on first use by the kind of store its scheme names (`location.ledger_location`): the SQLite
    file a path or `sqlite:` names, the PostgreSQL database of a `postgresql://` URL, the process's memory ledger
    (`memory:`), a plugin's; anything else is a `ConfigurationError`. `read_only`: a store that can (SQLite) is opened
    so that nothing is written to it, nor beside it where that cannot be (`SqliteFile`); the others are opened as they
    always are. `own`: a store of the caller's alone (another SQLite connection, another PostgreSQL pool), never the
    process's one nor kept for it, which the caller closes: for work that must not wait behind the process's other
    uses of the ledger (the dashboard's counts).

    Every ledger opened here is closed when the program exits (`atexit`), while the interpreter is whole: a SQLite
    file's checkpoint thread stopped and its last connection closed, which checkpoints the WAL and removes the `-wal`
    and `-shm` files. Left to the interpreter's final collection instead, a connection closes at no set time, in no
    set order with its thread.
    """
    if path is None:
        location = _default_location()
    else:
        location = path if isinstance(path, LedgerLocation) else ledger_location(path)
        location = LedgerLocation(location.kind, location.kind.place(location.target))
    kind = location.kind
    read_only = read_only and kind.opens_read_only
    if own:
        return kind.open(location.target, read_only=read_only)
    global _closing_at_exit
    with _open_lock:
        ledger = _open.get((location, read_only))
        if ledger is None:
            ledger = _open[(location, read_only)] = kind.open(location.target, read_only=read_only)
        if not _closing_at_exit:
            atexit.register(close_ledgers)
            _closing_at_exit = True
        return ledger


_defaults: dict[tuple[str | None, str | None, str | None, str], LedgerLocation] = {}
"""The default ledger's place, by what names it (`$LOWTIDE_LEDGER`, `$XDG_STATE_HOME`, `$HOME`, and the working
directory a relative path is resolved in)."""


def _default_location() -> LedgerLocation:
    """The default ledger's location, placed: resolved once for what names it, not again for each of the thousands of
    calls that open it (a durable agent's every `start`)."""
    environ = os.environ
    named = (environ.get(LEDGER_ENV), environ.get("XDG_STATE_HOME"), environ.get("HOME"), os.getcwd())
    location = _defaults.get(named)
    if location is None:
        found = ledger_location(None)
        location = _defaults[named] = LedgerLocation(found.kind, found.kind.place(found.target))
    return location


def close_ledgers() -> None:
    """Close every ledger `open_ledger` opened in this process (tests, and programs that switch ledgers)."""
    with _open_lock:
        for ledger in _open.values():
            ledger.close()
        _open.clear()
