"""`Ledger`: the ledger in one SQLite file (WAL), shared safely by several processes and threads.

Every state change is one short transaction (`BEGIN IMMEDIATE`), and bulk changes (thousands of requests joining
a batch, thousands of results arriving) are written in chunks with `executemany`, not one commit per row. Results
are appended (`results`), never updated in place. Nothing secret is stored: requests are kept as the provider's
request bodies, batches by the API's base URL. The file and its transactions are `connection.py`'s; requests,
batches and results are `requests.py`'s and `batches.py`'s; bulk runs `runs.py`'s, the live quota `quotas.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lowtide.errors import ConfigurationError
from lowtide.ledger.defaults import StoreDefaults
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import COPIED, NewRequest
from lowtide.ledger.sqlite.batches import BatchRows
from lowtide.ledger.sqlite.connection import CHUNK
from lowtide.ledger.sqlite.journal import SqliteJournal
from lowtide.ledger.sqlite.outbox import OutboxRows
from lowtide.ledger.sqlite.quotas import LedgerQuotaStore
from lowtide.ledger.sqlite.runs import RunStore
from lowtide.ledger.sqlite.schema import NEW_FORM, REQUEST_BATCH, statements
from lowtide.ledger.sqlite.spending import SqliteSpending
from lowtide.ledger.sqlite.totals import add_totals
from lowtide.ledger.sqlite.unkeyed import adopt_unkeyed, holds_unkeyed
from lowtide.ledger.sqlite.views import SqliteViews
from lowtide.ledger.sqlite.webhooks import WebhookRows

__all__ = ["Ledger"]


class Ledger(BatchRows, WebhookRows, OutboxRows, StoreDefaults):
    """One SQLite ledger file; safe to share between processes, and between threads of one process."""

    @property
    def run_store(self) -> RunStore:
        return RunStore(self)

    @property
    def agent_journal(self) -> SqliteJournal:
        return SqliteJournal(self)

    @property
    def spending(self) -> SqliteSpending:
        return SqliteSpending(self)

    @property
    def quota_store(self) -> LedgerQuotaStore:
        return LedgerQuotaStore(self)

    @property
    def views(self) -> SqliteViews:
        return SqliteViews(self)

    # moving a ledger

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of `table` (a name of `records.COPIED`), its columns as `COPIED` lists them, in chunks."""
        query = _EXPORTED.get(table, f"SELECT {', '.join(COPIED[table])} FROM {table} ORDER BY rowid")
        with self._reading():
            cursor = self._db.cursor()
            cursor.row_factory = None
            cursor.execute(query)
            while chunk := cursor.fetchmany(CHUNK):
                yield [tuple(row) for row in chunk]

    def load(
        self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]], *, identity: str | None = None
    ) -> dict[str, int]:
        """Write another ledger's rows in one transaction, into a ledger that holds nothing yet (taking `identity`,
        when given, in the same transaction)."""
        written: dict[str, int] = {}
        with self._transaction() as db:
            held = [t for t in COPIED if db.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]]
            if held:
                raise ConfigurationError(
                    f"The ledger {self.path} is not empty (it holds {', '.join(held)}): a copy goes into a new ledger,"
                    " and nothing was written.",
                    field="ledger",
                )
            for table, chunks in tables:
                columns = COPIED[table]
                insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
                written[table] = 0
                for chunk in chunks:
                    db.executemany(insert, chunk)
                    written[table] += len(chunk)
            for statement in statements(NEW_FORM):
                db.execute(statement)
            add_totals(db, 0)  # derived from the results copied, never copied themselves
            if identity is not None:
                db.execute("UPDATE identity SET id = ?", (identity,))
        if identity is not None:
            self._identity = identity
        self.forget_kinds()  # (what a collection kept of the results it had stored is not all there is now)
        return written

    # rebuilt requests whose keys are not known

    def unkeyed(self) -> bool:
        with self._reading() as db:
            return holds_unkeyed(db)

    def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        with self._transaction() as db:
            return adopt_unkeyed(db, requests)


_EXPORTED = {
    "agent_journal": f"SELECT {', '.join(COPIED['agent_journal'])} FROM agent_journal ORDER BY run_id, position",
    "notice_outbox": f"SELECT {', '.join(COPIED['notice_outbox'])} FROM notice_outbox ORDER BY event_id",
    "requests": "SELECT r.key, r.custom_id, r.actor, r.model, r.params, r.params_bytes,"
    " CASE WHEN b.id IS NULL THEN r.state ELSE 'submitting' END, b.id, r.attempts + (b.id IS NOT NULL), r.max_attempts,"
    " r.worst_case_usd, r.created_at, CASE WHEN b.id IS NULL THEN r.updated_at ELSE b.intent_at END,"
    " CASE WHEN b.id IS NULL THEN r.owner END, CASE WHEN b.id IS NULL THEN r.owner_until END"
    f" FROM requests r {REQUEST_BATCH} ORDER BY r.rowid",
    "spend_caps": f"SELECT {', '.join(COPIED['spend_caps'])} FROM spend_caps ORDER BY scope, name, period",
    "spend_entries": f"SELECT {', '.join(COPIED['spend_entries'])} FROM spend_entries ORDER BY created_at, key",
}
"""Tables whose rows a copy takes in another form than this store keeps them: a request as schema 5 kept it (the form
every store copies), its batch and the attempt it is making read from its memberships (`schema.NEW_FORM` is the way
back); the notices' outbox and the spend tables, tables without rowids, by their keys."""

_IMPLEMENTS: type[LedgerStore] = Ledger
"""The type checker's proof that `Ledger` is a `LedgerStore`."""
