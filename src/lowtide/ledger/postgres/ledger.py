"""`PostgresLedger`: the ledger in one PostgreSQL database, shared by lowtide processes on any number of hosts.

The same tables and the same meaning as the SQLite ledger (`lowtide.ledger.sqlite`): every state change is one short
transaction, bulk changes go as arrays in one statement per chunk (`unnest`), results are appended, and a request's
state is derived from its latest result (`request_view`). What differs is what many hosts need:

- **Races are settled by the server**, not by a file lock: a key claimed on two hosts at once is inserted by one
  (`ON CONFLICT DO NOTHING ... RETURNING`) and known to the other; a take-over or a batch's lease is one guarded
  `UPDATE`, which PostgreSQL re-checks on the row's newest version when another transaction changed it meanwhile, so
  exactly one contender wins.
- **Owners live by lease**: each process's heartbeat renews its row in `owners` (`keep_alive`); a record's
  `owner_until` is its owner's lease, so the work of a process that stopped renewing it (killed, or its host gone)
  is taken over once the lease runs out, by exactly one other process, on any host.
- **Changes are announced** on `NOTIFY lowtide_batches` (results stored, a batch's state changed), in the same
  transaction as the change: a process waiting on a batch another process polls is woken by the notice
  (`notices`), not by reading the database in a loop.

Each operation is written once, in `claims` (requests), `batches` (batches, intents, leases), `results` and
`copying` (moving a ledger), as the statements it runs (`steps`): this class drives them on plain connections for
sync callers (the CLI, parking, `ledger copy`), and `asynchronous()` gives the running event loop's
`AsyncPostgresLedger` (`aio`), which drives the same operations on psycopg's async connections.

Nothing secret is stored: the URL's password is never written, shown or logged (`location` is the redacted URL).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from functools import partial
from typing import Any

from lowtide.ledger.defaults import StoreDefaults
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.postgres import batches, claims, copying, outbox, results, unkeyed, webhooks
from lowtide.ledger.postgres.aio import AsyncPostgresLedger
from lowtide.ledger.postgres.journal import PostgresJournal
from lowtide.ledger.postgres.notices import Heartbeat, Listener
from lowtide.ledger.postgres.pool import SyncPool
from lowtide.ledger.postgres.quotas import PostgresQuotaStore
from lowtide.ledger.postgres.runs import PostgresRunStore
from lowtide.ledger.postgres.schema import NOTICE_CHANNEL
from lowtide.ledger.postgres.spending import PostgresSpending
from lowtide.ledger.postgres.steps import Op, run, run_again, run_hopeful
from lowtide.ledger.postgres.totals import FinalsRead
from lowtide.ledger.postgres.url import redacted
from lowtide.ledger.postgres.views import PostgresViews
from lowtide.ledger.records import (
    BatchClaim,
    BatchCreated,
    BatchIntent,
    BatchRecord,
    BatchState,
    KeyAnswer,
    KeyState,
    NewRequest,
    OutcomeRow,
    PendingRequest,
    RequestRecord,
    RequestState,
)
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

__all__ = ["PostgresLedger"]


class PostgresLedger(StoreDefaults):
    """One PostgreSQL ledger; safe to share between threads of a process, and between processes on any hosts."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool = SyncPool(url)
        self._heartbeat = Heartbeat(self._pool)
        self._listener: Listener | None = None
        self._listener_lock = threading.Lock()
        self._quotas: PostgresQuotaStore | None = None
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncPostgresLedger] = (
            weakref.WeakKeyDictionary()
        )
        """Each event loop's async face (its pool of async connections belongs to that loop)."""
        self._identity: str | None = None
        self._finals = FinalsRead()
        """What `stored_finals` read of the batches being collected, for the sums to trust (`totals`)."""

    @property
    def location(self) -> str:
        return redacted(self.url)

    def identity(self) -> str:
        if self._identity is None:  # made once with the ledger, never changed: read once
            self._identity = run(self._pool, "read the ledger's identity", claims.identity, transaction=False)
        return self._identity

    @property
    def run_store(self) -> PostgresRunStore:
        return PostgresRunStore(self._pool)

    @property
    def agent_journal(self) -> PostgresJournal:
        return PostgresJournal(self._pool)

    @property
    def spending(self) -> PostgresSpending:
        return PostgresSpending(self._pool)

    @property
    def quota_store(self) -> PostgresQuotaStore:
        if self._quotas is None:
            self._quotas = PostgresQuotaStore(self.url, outage=self._pool.outage)
        return self._quotas

    @property
    def views(self) -> PostgresViews:
        """Answered in the server's own queries (`postgres.views`)."""
        return PostgresViews(self, self._pool)

    def asynchronous(self) -> AsyncPostgresLedger:
        """This ledger as the running event loop calls it: the same operations on async connections of a pool of
        that loop's (opened on first use, closed when the loop's last engine lets go)."""
        loop = asyncio.get_running_loop()
        with self._listener_lock:
            face = self._loops.get(loop)
            if face is None:
                face = self._loops[loop] = AsyncPostgresLedger(
                    self.url, sync=self._pool, heartbeat=self._heartbeat, notices=lambda: self.notices
                )
            return face

    def close(self) -> None:
        """End this process's leases (its work is free for others at once), stop listening, close the pool."""
        self._heartbeat.close()
        with self._listener_lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        self._pool.close()

    # owners

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        self._heartbeat.keep(owner, lease_seconds=lease_seconds, now=now)

    def let_go(self, owner: str) -> None:
        self._heartbeat.let_go(owner)

    @property
    def notices(self) -> Listener:
        """Announcements of batches that changed, from every process on the database (`LISTEN`, one connection)."""
        with self._listener_lock:
            if self._listener is None:
                self._listener = Listener(self.url, NOTICE_CHANNEL)
            return self._listener

    # the outbox

    def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        return run(self._pool, "keep a notice", partial(outbox.add_notice, notice, owner, until))

    def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        return run(self._pool, "claim due notices", partial(outbox.due_notices, owner, now, until, limit))

    def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        op = partial(outbox.notice_tried, event_id, owner, now, tries, delivered, next_at)
        run(self._pool, "record a notice's try", op)

    # webhooks

    def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        make = partial(webhooks.record_webhook, delivery, uuid.uuid4().hex)
        return run(self._pool, "record a webhook", make)

    def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        seen = partial(webhooks.webhook_seen, provider, provider_batch_id)
        return run(self._pool, "read the webhooks", seen, transaction=False)

    # requests

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        def make(hoping: bool) -> Op[tuple[dict[str, str], list[RequestRecord]]]:
            return claims.claim_new(requests, owner=owner, until=until, now=now, hoping=hoping)

        return run_hopeful(self._pool, "record the calls", make, hoping=claims.hoped(requests))

    def take_over(self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None) -> bool:
        op = partial(claims.take_over, key, owner=owner, until=until, now=now, dead_owner=dead_owner)
        return run(self._pool, "take over a request", op)

    def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        return run(
            self._pool, "take over requests", partial(claims.take_over_many, keys, owner=owner, until=until, now=now)
        )

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        run(self._pool, "queue requests again", partial(claims.requeue, keys, owner=owner, until=until, now=now))

    def committed_usd(self, actor: str) -> Decimal:
        return run(self._pool, "read what an actor committed", partial(claims.committed_usd, actor), transaction=False)

    def request(self, key: str) -> RequestRecord | None:
        found = self.requests_for([key])
        return found[0] if found else None

    def requests(
        self,
        *,
        batch_id: str | None = None,
        actor: str | None = None,
        states: Iterable[RequestState] | None = None,
    ) -> list[RequestRecord]:
        op = partial(claims.requests, batch_id=batch_id, actor=actor, states=states)
        return run(self._pool, "read requests", op, transaction=False)

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        return run(self._pool, "read requests", partial(claims.requests_by_key, keys), transaction=False)

    def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        return run(self._pool, "read requests' states", partial(claims.states_by_key, keys), transaction=False)

    def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        return run(self._pool, "read trace contexts", partial(claims.traces_of, keys), transaction=False)

    # batches

    def record_intent(self, intent: BatchIntent) -> list[str]:
        op = partial(batches.record_intent, intent, location=self.location)

        # Two processes' intents may meet in a circle of row locks (see `batches.record_intent`): the one PostgreSQL
        # ends is rolled back whole, and recorded again.
        return run_again(self._pool, "record a batch before creating it", op)

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        op = claims.gathering(scope, owner=owner, until=until, now=now, limit=limit, max_bytes=max_bytes)
        return run(self._pool, "gather the calls of other processes", op)

    def record_submitted(self, created: BatchCreated) -> None:
        op = partial(batches.record_submitted, created)
        run(self._pool, "record a created batch", op)

    def record_unknown(self, batch_id: str, *, note: str) -> None:
        run(
            self._pool, "record a create whose outcome is unknown", partial(batches.record_unknown, batch_id, note=note)
        )

    def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        op = partial(
            batches.give_up_intent, batch_id, note=note, owner=owner, until=until, now=now, intent_at=intent_at
        )
        return run(self._pool, "give up a create", op)

    def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        op = partial(batches.resume_intent, batch_id, intent_at=intent_at, owner=owner, until=until, now=now)
        return run(self._pool, "resume a create", op)

    def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        run(self._pool, "record a refused create", partial(batches.record_refused, batch_id, note=note, now=now))

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        op = partial(batches.record_status, batch_id, phase=phase, counts=counts, ended_at=ended_at)
        run(self._pool, "record a batch's status", op)

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        vouched = self._finals.vouch(batch_id, outcomes)

        op = results.storing(batch_id, outcomes, now=now, vouched=vouched)
        stores = run(self._pool, "store a batch's results", op)
        if vouched is not None:
            self._finals.stored(batch_id, vouched, stores)
        return len(outcomes)

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        run(self._pool, "record a collected batch", partial(batches.record_collected, batch_id, state=state, now=now))

    def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        op = partial(batches.adopt, batch_id, provider_batch_id=provider_batch_id, now=now)
        return run(self._pool, "adopt a batch", op)

    def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        op = partial(batches.disown, batch_id, provider_batch_id=provider_batch_id, now=now)
        return run(self._pool, "disown a batch", op)

    def claim_batch(self, claim: BatchClaim) -> bool:
        op = partial(batches.claim_batch, claim)
        return run(self._pool, "take a batch's lease", op)

    def release_batch(self, batch_id: str, *, owner: str) -> None:
        run(self._pool, "release a batch's lease", partial(batches.release_batch, batch_id, owner=owner))

    def batch(self, batch_id: str) -> BatchRecord | None:
        return run(self._pool, "read a batch", partial(batches.batch, batch_id), transaction=False)

    def batches(self, *, states: Iterable[BatchState] | None = None) -> list[BatchRecord]:
        return run(self._pool, "read batches", partial(batches.batches, states=states), transaction=False)

    def batch_durations(
        self, provider: str, *, last: int, endpoint: str | None = None, requests: tuple[int, int] | None = None
    ) -> list[float]:
        op = partial(batches.batch_durations, provider, last=last, endpoint=endpoint, requests=requests)
        return run(self._pool, "read batch durations", op, transaction=False)

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        run(self._pool, "record a step of a create", partial(batches.record_create_step, batch_id, step, value))

    def create_steps(self, batch_id: str) -> dict[str, str]:
        return run(self._pool, "read the steps of a create", partial(batches.create_steps, batch_id), transaction=False)

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        op = partial(batches.unresolved, provider=provider, endpoint=endpoint)
        return run(self._pool, "read unresolved creates", op, transaction=False)

    def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        op = partial(batches.batch_holding, custom_id, among)
        return run(self._pool, "read a batch's members", op, transaction=False)

    def members(self, batch_id: str) -> dict[str, str]:
        return run(self._pool, "read a batch's members", partial(batches.members, batch_id), transaction=False)

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        op = partial(batches.members_and_attempts, batch_id)
        return run(self._pool, "read a batch's members", op, transaction=False)

    def stored_finals(self, batch_id: str) -> set[str]:
        finals, stores = run(
            self._pool, "read a batch's results", partial(results.stored_finals, batch_id), transaction=False
        )
        self._finals.read(batch_id, finals, stores)
        return finals

    def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        op = partial(results.results_since, batch_id, after)
        return run(self._pool, "read a batch's new results", op, transaction=False)

    def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        return run(self._pool, "read a batch's answers", partial(results.answers_of, batch_id, keys), transaction=False)

    def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        return run(
            self._pool, "read a batch's members", partial(results.members_among, batch_id, keys), transaction=False
        )

    # moving a ledger

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        return copying.export_rows(self._pool, table)

    def load(
        self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]], *, identity: str | None = None
    ) -> dict[str, int]:
        written = copying.load(self._pool, self.location, tables, identity=identity)
        if identity is not None:
            self._identity = identity
        return written

    # rebuilt requests whose keys are not known

    def unkeyed(self) -> bool:
        return run(self._pool, "read the ledger's rebuilt requests", unkeyed.unkeyed, transaction=False)

    def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        return run(self._pool, "be written", partial(unkeyed.adopt_unkeyed, requests))


_IMPLEMENTS: type[LedgerStore] = PostgresLedger
"""The type checker's proof that `PostgresLedger` is a `LedgerStore`."""
