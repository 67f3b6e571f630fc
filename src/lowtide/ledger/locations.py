"""The live quota store a ledger setting gives: the PostgreSQL database a `postgresql://` URL names (without opening
the rest of the ledger: live calls need only the quota), else the SQLite ledger's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lowtide.ledger.postgres.url import configured_url
from lowtide.ledger.store import LedgerStore
from lowtide.live.quota_state import QuotaStore

__all__ = ["shared_quota_store"]


def shared_quota_store(location: LedgerStore | str | Path | None, open_ledger: Callable[[], LedgerStore]) -> QuotaStore:
    """The store of the live quota shared through the ledger at `location` (None: `$LOWTIDE_LEDGER` or the default
    file): the PostgreSQL database a URL names, else the SQLite ledger `open_ledger` opens."""
    url = configured_url(location)
    if url is not None:
        from lowtide.ledger.postgres.quotas import PostgresQuotaStore  # psycopg is imported only for such a URL

        return PostgresQuotaStore(url)
    return open_ledger().quota_store
