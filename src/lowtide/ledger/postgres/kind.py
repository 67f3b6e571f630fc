"""The PostgreSQL store as a kind of ledger: `postgresql://user@host/database` (or `postgres://`; lowtide's own
`?lowtide_outage_seconds=` checked here), its password never shown; registered through the `lowtide.ledgers` entry
points. psycopg (the `postgres` extra) is imported only when a ledger or its live quota is opened."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation
from lowtide.ledger.postgres.url import outage_given

if TYPE_CHECKING:
    from lowtide.ledger.postgres.ledger import PostgresLedger
    from lowtide.ledger.postgres.quotas import PostgresQuotaStore

__all__ = ["PostgresKind", "register"]


class PostgresKind(LedgerKind):
    """A ledger in a PostgreSQL database, shared by processes on any number of hosts."""

    scheme = "postgresql"
    aliases = ("postgres",)
    example = "postgresql://user@host/database"

    def target(self, text: str, rest: str | None) -> str:
        """The URL as written, its `//` given back where a `Path` folded it into one `/`; refused if its
        `lowtide_outage_seconds` is no number of seconds."""
        try:
            outage_given(text)
        except ValueError as exc:
            raise NotALocation(str(exc)) from None
        return re.sub(r"^([^:/]+:)/(?!/)", r"\1//", text)

    def open(self, target: str, *, read_only: bool) -> PostgresLedger:
        from lowtide.ledger.postgres.ledger import PostgresLedger

        return PostgresLedger(target)

    def quota_store(self, target: str) -> PostgresQuotaStore:
        from lowtide.ledger.postgres.quotas import PostgresQuotaStore

        return PostgresQuotaStore(target)


def register(registry: LedgerRegistry) -> None:
    registry.register(PostgresKind())
