"""A kind of ledger of another package, for the scenarios: `shelf:NAME`, the ledger kept in the file `NAME.ledger`
on the shelf `$LOWTIDE_SHELF` (a folder), read by lowtide's commands once its distribution is installed, its entry
point in the `lowtide.ledgers` group. It imports nothing of lowtide but the registry's face (`lowtide.ledger.kinds`)
and a store to keep its ledgers in (lowtide's SQLite one)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation
from lowtide.ledger.sqlite import Ledger

SHELF_ENV = "LOWTIDE_SHELF"


class ShelfTakenError(Exception):
    """The shelf's own error, not a `LedgerError`: a ledger whose file `NAME.taken` says someone took it off the
    shelf (its kind's `failure` says so to a user)."""

    def __init__(self, name: str, by: str) -> None:
        super().__init__(name, by)
        self.name = name
        self.by = by


class ShelfKind(LedgerKind):
    scheme = "shelf"
    example = "shelf:NAME (a ledger on the shelf $LOWTIDE_SHELF)"

    def target(self, text: str, rest: str | None) -> str:
        name = rest or ""
        if not re.fullmatch(r"[a-z0-9-]+", name):
            raise NotALocation("names no ledger on the shelf: write shelf:NAME (lower-case letters, digits, dashes).")
        shelf = os.environ.get(SHELF_ENV)
        if not shelf:
            raise NotALocation(f"needs a shelf: set ${SHELF_ENV} to its folder.")
        return str(Path(shelf) / f"{name}.ledger")

    def place(self, target: str) -> str:
        return str(Path(target).resolve())

    def open(self, target: str, *, read_only: bool) -> Ledger:
        taken = Path(target).with_suffix(".taken")
        if taken.is_file():
            raise ShelfTakenError(Path(target).stem, taken.read_text(encoding="utf-8").strip())
        return Ledger(Path(target))

    def shown(self, target: str) -> str:
        return f"shelf:{Path(target).stem}"

    def missing(self, target: str) -> str | None:
        return None if Path(target).is_file() else self.shown(target)

    def failure(self, error: BaseException) -> str | None:
        if not isinstance(error, ShelfTakenError):
            return None
        return f"The ledger shelf:{error.name} was taken off the shelf by {error.by}; ask them to put it back."


def register(registry: LedgerRegistry) -> None:
    registry.register(ShelfKind())
