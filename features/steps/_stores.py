"""The ledger store a contract scenario runs against (`ledger_store.feature`), by the name its Examples give:
`memory` (a `MemoryLedger`), `sqlite` (a `Ledger` in a file of the scenario's own) or `postgres` (the scenario's
database, `context.postgres_url`, which `environment.py` makes for a scenario tagged `@postgres`)."""

from __future__ import annotations

from typing import Any

from _support import world

from lowtide.ledger.store import Ledger, LedgerStore, MemoryLedger, open_ledger

STORES = ("memory", "sqlite", "postgres")


def open_store(context: Any, kind: str) -> LedgerStore:
    """A new, empty store of `kind`, closed after the scenario."""
    store: LedgerStore
    if kind == "memory":
        store = MemoryLedger()
    elif kind == "sqlite":
        store = Ledger(world(context).path("contract.sqlite3"))
    elif kind == "postgres":
        store = open_ledger(context.postgres_url)
    else:
        raise AssertionError(f"no store {kind!r}: one of {', '.join(STORES)}")
    world(context).cleanups.append(store.close)
    return store
