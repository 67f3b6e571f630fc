"""Which store a ledger setting names: a SQLite file (a path) or a PostgreSQL database (a `postgresql://` URL), and
the live quota store each gives.

A PostgreSQL ledger keeps the shared live quota so far; what needs the rest of the ledger (batch mode, bulk runs,
parking, the ledger commands) refuses its URL with one clear `ConfigurationError` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lowtide.errors import ConfigurationError
from lowtide.ledger.postgres.url import configured_url, redacted
from lowtide.ledger.store import LedgerStore
from lowtide.live.quota_state import QuotaStore

__all__ = ["refuse_postgres", "shared_quota_store"]


def shared_quota_store(location: LedgerStore | str | Path | None, open_ledger: Callable[[], LedgerStore]) -> QuotaStore:
    """The store of the live quota shared through the ledger at `location` (None: `$LOWTIDE_LEDGER` or the default
    file): the PostgreSQL database a URL names, else the SQLite ledger `open_ledger` opens."""
    url = configured_url(location)
    if url is not None:
        from lowtide.ledger.postgres.quotas import PostgresQuotaStore  # psycopg is imported only for such a URL

        return PostgresQuotaStore(url)
    return open_ledger().quota_store


def refuse_postgres(location: LedgerStore | str | Path | None, needs: str, *, advice: str = "") -> None:
    """Raise when `location` names a PostgreSQL database: `needs` (what was asked) needs a SQLite ledger so far;
    `advice` ends the message."""
    url = configured_url(location)
    if url is not None:
        raise ConfigurationError(
            f"The ledger {redacted(url)} is a PostgreSQL database, which so far keeps only the live quota that live"
            f" calls share; {needs} needs a SQLite ledger. Name a file for the ledger (the actor's `ledger`,"
            f" LOWTIDE_LEDGER or --ledger).{advice}",
            field="ledger",
        )
