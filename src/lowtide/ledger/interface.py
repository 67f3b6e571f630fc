"""`LedgerStore`: what lowtide asks of a ledger, whichever store keeps it (SQLite, PostgreSQL, memory, a plugin's).

`LedgerStore` is every role of `roles` (claims, batches, reconciles, results, runs, journals, spends, views, quotas,
copies, webhooks, the outbox) at
once; code that needs one role is typed against that role. The engine, bulk runs, parking, agent runs and the CLI call
these methods and nothing else of a store: no SQL outside one. A batch's members are waiting on it through one row, not
one write each. Results are appended in arrival order; a request's state is derived from what is stored for it (its
latest result for the batch it is in). `Ledger` (`ledger.sqlite`), `PostgresLedger` (`ledger.postgres`) and
`MemoryLedger` (`ledger.memory`, for tests) implement it, checked by the type checker, with what they share from
`defaults.StoreDefaults`; `features/ledger_store.feature` holds every store to the same scenarios. A store is chosen by
the scheme of its location (`kinds.LedgerKind`); docs/ledger.md, "Writing a store", says how to write one.

`AsyncLedgerStore` is the same store as the event loop calls it (`aio_roles`): the methods the engine, the actor's
batch path and bulk runs call from coroutines, awaited, so that a store on another machine (PostgreSQL) never blocks
the loop for a round trip. `lowtide.ledger.inline.async_ledger` gives a store's: PostgreSQL's own (psycopg's async
connections), or for a local store (SQLite, memory, a plugin's) its sync methods called inline, with no thread. The
CLI, parking and `ledger copy` keep calling the sync `LedgerStore`."""

from __future__ import annotations

from typing import Protocol

from lowtide.errors import ConfigurationError
from lowtide.ledger.aio_roles import (
    AsyncBatches,
    AsyncClaims,
    AsyncOutbox,
    AsyncReconciles,
    AsyncResults,
    AsyncRuns,
    AsyncSpends,
    AsyncWebhooks,
)
from lowtide.ledger.roles import (
    Batches,
    BatchNotices,
    Claims,
    Copies,
    Journals,
    Outbox,
    Quotas,
    Reconciles,
    Results,
    Runs,
    Spends,
    Views,
    Webhooks,
)
from lowtide.ledger.run_ledger import AsyncRunLedger, RunLedger

__all__ = ["AsyncLedgerStore", "AsyncRunLedger", "BatchNotices", "LedgerStore", "LedgerVersionError", "RunLedger"]


class LedgerVersionError(ConfigurationError):
    """The ledger was written by a newer lowtide: it refuses to open rather than be misread (every store)."""


class LedgerStore(
    Claims, Batches, Reconciles, Results, Runs, Journals, Spends, Views, Quotas, Copies, Webhooks, Outbox, Protocol
):
    """Every role of a store (`roles`), in one durable store: what a store implements, and what a caller that needs
    several roles at once (the engine, the CLI's ledger commands) is typed against."""

    def close(self) -> None:
        """Release what the store holds open: connections, threads (again: nothing)."""
        ...


class AsyncLedgerStore(
    AsyncClaims,
    AsyncBatches,
    AsyncReconciles,
    AsyncResults,
    AsyncRuns,
    AsyncSpends,
    AsyncWebhooks,
    AsyncOutbox,
    Protocol,
):
    """The ledger's hot path, awaited (`aio_roles`): what the engine, the actor's batch path and bulk runs ask of a
    store from the event loop. Each method means what `LedgerStore`'s of the same name means."""

    @property
    def location(self) -> str: ...

    async def identity(self) -> str: ...

    @property
    def inline(self) -> LedgerStore | None:
        """The store itself when it answers at once, in this process (a file, memory): a caller may read it without
        awaiting. None for a store across the network, whose reads are gathered (`batching.lookups`)."""
        ...
