"""The keys behind the custom ids a lowtide ledger sends: `<key>_<identity>`, the ledger's identity 12 hex digits
(`BatchCodec.custom_id_for`), and a ledger file's identity read without writing."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

__all__ = ["key_of", "keys_created", "ledger_identity"]

_IDENTITY = re.compile(r"_[0-9a-f]{12}$")


def key_of(custom_id: str) -> str:
    """The key a custom id was made from (the custom id itself when it carries no ledger's identity)."""
    return _IDENTITY.sub("", custom_id)


def keys_created(created: Mapping[str, int]) -> Counter[str]:
    """How many times each key was created, from the emulator's `created_custom_ids`: a key two ledgers (two
    identities) sent counts twice, as a key one ledger sent twice does."""
    keys: Counter[str] = Counter()
    for custom_id, times in created.items():
        keys[key_of(str(custom_id))] += int(times)
    return keys


def ledger_identity(ledger: str | Path) -> str:
    """The identity of the SQLite ledger at `ledger`, read-only (it must exist)."""
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5.0)
    try:
        (identity,) = db.execute("SELECT id FROM identity").fetchone()
    finally:
        db.close()
    return str(identity)
