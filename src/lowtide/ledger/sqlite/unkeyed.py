"""A SQLite ledger's rebuilt requests whose keys are not known (`records.UNKEYED`): whether it holds any (one probe of
the key's index, no scan), and their takeover by the claims whose custom ids are theirs (`LedgerStore.adopt_unkeyed`):
the request, its memberships, its results and its trace moved to the claim's key in one transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from lowtide.ledger.records import UNKEYED, NewRequest

__all__ = ["adopt_unkeyed", "holds_unkeyed"]

# The keys that start with `UNKEYED` ("rebuilt:"), as a range of the key's index: ';' follows ':'.
_RANGE = (UNKEYED, UNKEYED[:-1] + chr(ord(UNKEYED[-1]) + 1))
_ANY = "SELECT EXISTS (SELECT 1 FROM requests WHERE key >= ? AND key < ?)"


def holds_unkeyed(db: sqlite3.Connection) -> bool:
    """Whether any request's key is one a rebuild gave a request whose own key is not known."""
    return bool(db.execute(_ANY, _RANGE).fetchone()[0])


def adopt_unkeyed(db: sqlite3.Connection, requests: Sequence[NewRequest]) -> bool:
    """In the caller's transaction: each of `requests` whose key is unknown takes over the unkeyed request of its
    custom id, if there is one; whether any unkeyed request is left."""
    # The request's key changes with its rows that name it: the foreign keys are checked at the commit, not between.
    db.execute("PRAGMA defer_foreign_keys = ON")
    for r in requests:
        held = UNKEYED + r.custom_id
        if db.execute("SELECT 1 FROM requests WHERE key = ?", (held,)).fetchone() is None:
            continue
        if db.execute("SELECT 1 FROM requests WHERE key = ?", (r.key,)).fetchone() is not None:
            continue
        moved = (r.key, held)
        # Its results first, found through its memberships (results are indexed by batch, then key).
        db.execute(
            "UPDATE results SET key = ? WHERE key = ?"
            " AND batch_id IN (SELECT batch_id FROM batch_members WHERE key = ?)",
            (*moved, held),
        )
        for table in ("batch_members", "request_traces", "run_items", "requests"):
            db.execute(f"UPDATE {table} SET key = ? WHERE key = ?", moved)
    return holds_unkeyed(db)
