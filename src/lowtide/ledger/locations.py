"""The live quota store a ledger setting gives: the one its kind of store opens alone (PostgreSQL's, without opening
the rest of the ledger: live calls need only the quota), else the opened ledger's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.location import ledger_location
from lowtide.ledger.quota_records import QuotaStore

__all__ = ["shared_quota_store"]


def shared_quota_store(location: LedgerStore | str | Path | None, open_ledger: Callable[[], LedgerStore]) -> QuotaStore:
    """The store of the live quota shared through the ledger at `location` (None: `$LOWTIDE_LEDGER` or the default
    file): the one its kind opens without the rest of the ledger, else the ledger's that `open_ledger` opens. A
    location lowtide cannot read is a `ConfigurationError` (`location.ledger_location`)."""
    if location is None or isinstance(location, str | Path):
        found = ledger_location(location)
        alone = found.kind.quota_store(found.target)
        if alone is not None:
            return alone
    return open_ledger().quota_store
