"""The ledger store a contract scenario runs against (`ledger_store.feature`), by the name its Examples give:
`memory` (a `MemoryLedger`), `sqlite` (a `Ledger` in a file of the scenario's own), `folder` (the store of another
package, features/plugins/lowtide_folder_ledger.py, in a folder of the scenario's own) or `postgres` (the scenario's
database, `context.postgres_url`, which `environment.py` makes for a scenario tagged `@postgres`)."""

from __future__ import annotations

from pathlib import Path

from _support import plugins_importable, world
from step_context import Context

from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import LedgerStore, open_ledger

STORES = ("memory", "sqlite", "folder", "postgres")


def open_store(context: Context, kind: str, *, fresh: bool = False) -> LedgerStore:
    """A new, empty store of `kind`, closed after the scenario (`fresh`: another one beside the scenario's)."""
    store: LedgerStore
    if kind == "memory":
        store = MemoryLedger()
    elif kind == "sqlite":
        store = Ledger(world(context).path("other.sqlite3" if fresh else "contract.sqlite3"))
    elif kind == "folder":
        store = _folder_ledger(world(context).path("other-folder" if fresh else "contract-folder"))
    elif kind == "postgres":
        store = open_ledger(context.new_postgres_database() if fresh else context.postgres_url)
    else:
        raise AssertionError(f"no store {kind!r}: one of {', '.join(STORES)}")
    world(context).cleanups.append(store.close)
    return store


def reopened(context: Context, store: LedgerStore) -> LedgerStore:
    """`store` opened again as a new object (a file, a database), as another process would; memory is itself."""
    again: LedgerStore
    if isinstance(store, MemoryLedger):
        return store
    if isinstance(store, Ledger):
        again = Ledger(store.path)
    elif store.location.startswith("folder:"):
        again = _folder_ledger(Path(store.location.removeprefix("folder:")))
    else:
        from lowtide.ledger.postgres.ledger import PostgresLedger

        again = PostgresLedger(context.postgres_url)
    world(context).cleanups.append(again.close)
    return again


def _folder_ledger(folder: Path) -> LedgerStore:
    plugins_importable()
    from lowtide_folder_ledger import FolderLedger

    return FolderLedger(folder)
