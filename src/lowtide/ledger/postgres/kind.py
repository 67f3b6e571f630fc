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

    def open_unchanged(self, target: str) -> PostgresLedger:
        """Opened as usual, once its schema is known to be this lowtide's: opening one an older lowtide wrote would
        bring it up to date, which is a write, so it is refused saying how to do that first."""
        from lowtide.errors import ConfigurationError
        from lowtide.ledger.postgres.migration import version_found
        from lowtide.ledger.postgres.outage import said
        from lowtide.ledger.postgres.pool import connect
        from lowtide.ledger.postgres.schema import SCHEMA_VERSION
        from lowtide.ledger.postgres.steps import run_on
        from lowtide.ledger.postgres.url import redacted

        try:
            with connect(target) as connection:
                found = run_on(connection, version_found())
        except Exception as exc:
            raise said(exc, target, "be read") from None
        if 0 < found < SCHEMA_VERSION:
            raise ConfigurationError(
                f"The ledger {redacted(target)} has schema version {found}, older than this lowtide's"
                f" ({SCHEMA_VERSION}). Copying it would bring it up to date, which writes to it, and a copy never"
                " writes to its source: run any lowtide command on it once (lowtide collect --ledger URL, say), then"
                " copy it.",
                field="ledger",
            )
        return self.open(target, read_only=True)

    def quota_store(self, target: str) -> PostgresQuotaStore:
        from lowtide.ledger.postgres.quotas import PostgresQuotaStore

        return PostgresQuotaStore(target)


def register(registry: LedgerRegistry) -> None:
    registry.register(PostgresKind())
