"""Moving a ledger from one store to another (`lowtide ledger copy`): every row, answers included, from a ledger to a
new one, which may be a different store (a SQLite file into a PostgreSQL database, or back)."""

from __future__ import annotations

from lowtide.errors import ConfigurationError
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import COPIED

__all__ = ["copy_ledger"]


def copy_ledger(source: LedgerStore, target: LedgerStore) -> dict[str, int]:
    """Copy everything `source` holds into `target`, which must hold nothing, in one transaction of the target's: a
    copy that fails leaves it empty. Returns how many rows of each table were copied.

    The ledger's identity is not copied: `target` keeps the one it was made with. The requests copied keep the custom
    ids they were sent with (rows of `requests` and `batch_members`), which is all their batches need; the requests
    `target` claims from now on carry its own identity, so that a copy and its source never make the same custom id.
    """
    # One ledger opened twice (read-only and not) is two objects; two in-memory ledgers share a location, not a ledger.
    same_place = source.location == target.location and source.identity() == target.identity()
    if source is target or same_place:
        raise ConfigurationError(f"{source.location} is both the ledger copied and the copy.", field="ledger")
    return target.load((table, source.export_rows(table)) for table in COPIED)
