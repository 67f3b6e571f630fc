"""`AsyncPostgresLedger`: a PostgreSQL ledger as an event loop calls it (`AsyncLedgerStore`).

The same operations as `PostgresLedger` (`claims`, `batches`, `results`), driven on psycopg's `AsyncConnection`s from
a `psycopg_pool.AsyncConnectionPool` of the loop's own (`pool.PostgresPool`): while the server answers, or a row
another process has locked is waited for, the loop runs everything else. The pool opens on first use and closes
when the last engine of the loop that keeps an owner alive lets go (a later call opens it again).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from functools import partial
from typing import TypeVar

from lowtide.errors import LedgerError
from lowtide.ledger.defaults import AsyncStoreDefaults
from lowtide.ledger.interface import AsyncLedgerStore, BatchNotices
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.postgres import batches, claims, outbox, results, unkeyed, webhooks
from lowtide.ledger.postgres.notices import Heartbeat, end_leases
from lowtide.ledger.postgres.pool import PostgresPool, SyncPool
from lowtide.ledger.postgres.runs import AsyncPostgresRunStore
from lowtide.ledger.postgres.spending import AsyncPostgresSpending
from lowtide.ledger.postgres.steps import (
    Op,
    run,
    run_again,
    run_again_async,
    run_async,
    run_hopeful,
    run_hopeful_async,
)
from lowtide.ledger.postgres.totals import FinalsRead
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
)
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

__all__ = ["AsyncPostgresLedger"]

T = TypeVar("T")

log = logging.getLogger("lowtide.ledger")


class AsyncPostgresLedger(AsyncStoreDefaults):
    """One PostgreSQL ledger in one event loop; made by `PostgresLedger.asynchronous()`."""

    def __init__(self, url: str, *, sync: SyncPool, heartbeat: Heartbeat, notices: Callable[[], BatchNotices]) -> None:
        self._pool = PostgresPool(url, outage=sync.outage)
        self._sync = sync
        self._heartbeat = heartbeat
        self._notices = notices
        self._owners: set[str] = set()
        self._guards: dict[str, asyncio.Task[None]] = {}
        """A task per owner that ends its lease when its event loop closes (its tasks cancelled) while it is kept."""
        self._identity: str | None = None
        self._unkeyed: bool | None = None
        """Whether the ledger holds rebuilt requests whose keys are not known, as read with its identity and not yet
        asked for (`unkeyed`)."""
        self._finals = FinalsRead()
        """What `stored_finals` read of the batches being collected, for the sums to trust (`totals`)."""

    @property
    def location(self) -> str:
        return self._pool.location

    async def identity(self) -> str:
        if self._identity is None:  # made once with the ledger, never changed: read once
            # With whether it holds rebuilt requests whose keys are not known, which an engine's first claims ask
            # next: one round trip for both.
            self._identity, self._unkeyed = await self._run(
                "read the ledger's identity", unkeyed.identity_and_unkeyed, transaction=False
            )
        return self._identity

    async def unkeyed(self) -> bool:
        """Read with the identity by an engine's first claims (once: the next engine reads it again, as it may have
        changed since)."""
        read, self._unkeyed = self._unkeyed, None
        if read is not None:
            return read
        return await self._run("read the ledger's rebuilt requests", unkeyed.unkeyed, transaction=False)

    async def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        return await self._run("be written", partial(unkeyed.adopt_unkeyed, requests))

    @property
    def notices(self) -> BatchNotices:
        return self._notices()

    @property
    def inline(self) -> None:
        """None: the database is across the network."""
        return None

    @property
    def run_store(self) -> AsyncPostgresRunStore:
        return AsyncPostgresRunStore(self._pool)

    @property
    def spending(self) -> AsyncPostgresSpending:
        return AsyncPostgresSpending(self._pool)

    async def _run(
        self, doing: str, make: Callable[[], Op[T]], *, transaction: bool = True, wait_out: bool = True
    ) -> T:
        if _cancelling():
            return run(self._sync, doing, make, transaction=transaction, wait_out=False)
        return await run_async(self._pool, doing, make, transaction=transaction, wait_out=wait_out)

    # owners

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        """The heartbeat's thread makes `owner`'s row: the loop does not wait for it."""
        self._owners.add(owner)
        self._heartbeat.keep(owner, lease_seconds=lease_seconds, now=now, wait=False)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to outlive: its engine's `aclose` ends the lease
            return
        if owner not in self._guards:
            self._guards[owner] = loop.create_task(self._end_with_loop(owner), name="lowtide-owner-lease")

    async def _end_with_loop(self, owner: str) -> None:
        """Wait until the loop's tasks are cancelled (the loop closing, the program stopping) and end `owner`'s lease
        then, unless its engine let go first: a lease never outlives the loop that held it (the heartbeat's thread
        would renew it for as long as the process lives)."""
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            if self._guards.get(owner) is asyncio.current_task():
                del self._guards[owner]
                self._heartbeat.forget(owner)
                self._owners.discard(owner)
                # On a plain connection: the loop's pool is being cancelled with everything else.
                run(self._sync, "end this process's leases", partial(end_leases, [owner]), wait_out=False)

    async def let_go(self, owner: str) -> None:
        guard = self._guards.pop(owner, None)
        if guard is not None and guard is not asyncio.current_task():
            guard.cancel()
        self._heartbeat.forget(owner)
        self._owners.discard(owner)
        try:  # not through an outage: a lease not ended runs out by itself, and a program that stops need not wait
            await self._run("end this process's leases", partial(end_leases, [owner]), wait_out=False)
        except LedgerError as exc:
            log.warning("Could not end this process's leases: %s", exc)
        finally:
            if not self._owners:
                await self._pool.aclose()  # the loop's last engine has closed: so do its connections

    # requests

    async def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        def make(hoping: bool) -> Op[tuple[dict[str, str], list[RequestRecord]]]:
            return claims.claim_new(requests, owner=owner, until=until, now=now, hoping=hoping)

        if _cancelling():
            return run_hopeful(self._sync, "record the calls", make, hoping=claims.hoped(requests), wait_out=False)
        return await run_hopeful_async(self._pool, "record the calls", make, hoping=claims.hoped(requests))

    async def take_over(self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None) -> bool:
        op = partial(claims.take_over, key, owner=owner, until=until, now=now, dead_owner=dead_owner)
        return await self._run("take over a request", op)

    async def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        return await self._run(
            "take over requests", partial(claims.take_over_many, keys, owner=owner, until=until, now=now)
        )

    async def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        await self._run("queue requests again", partial(claims.requeue, keys, owner=owner, until=until, now=now))

    async def committed_usd(self, actor: str) -> Decimal:
        return await self._run("read what an actor committed", partial(claims.committed_usd, actor), transaction=False)

    async def request(self, key: str) -> RequestRecord | None:
        found = await self.requests_for([key])
        return found[0] if found else None

    async def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        return await self._run("read requests", partial(claims.requests_by_key, keys), transaction=False)

    async def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        return await self._run("read requests' states", partial(claims.states_by_key, keys), transaction=False)

    async def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        return await self._run("read trace contexts", partial(claims.traces_of, keys), transaction=False)

    # batches

    async def record_intent(self, intent: BatchIntent) -> list[str]:
        op = partial(batches.record_intent, intent, location=self.location)

        # Two processes' intents may meet in a circle of row locks (see `batches.record_intent`): the one PostgreSQL
        # ends is rolled back whole, and recorded again.
        if _cancelling():
            return run_again(self._sync, "record a batch before creating it", op, wait_out=False)
        return await run_again_async(self._pool, "record a batch before creating it", op)

    async def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        op = claims.gathering(scope, owner=owner, until=until, now=now, limit=limit, max_bytes=max_bytes)
        return await self._run("gather the calls of other processes", op)

    async def record_submitted(self, created: BatchCreated) -> None:
        op = partial(batches.record_submitted, created)
        await self._run("record a created batch", op)

    async def record_unknown(self, batch_id: str, *, note: str) -> None:
        await self._run(
            "record a create whose outcome is unknown", partial(batches.record_unknown, batch_id, note=note)
        )

    async def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        op = partial(
            batches.give_up_intent, batch_id, note=note, owner=owner, until=until, now=now, intent_at=intent_at
        )
        return await self._run("give up a create", op)

    async def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        op = partial(batches.resume_intent, batch_id, intent_at=intent_at, owner=owner, until=until, now=now)
        return await self._run("resume a create", op)

    async def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        await self._run("record a refused create", partial(batches.record_refused, batch_id, note=note, now=now))

    async def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        op = partial(batches.record_status, batch_id, phase=phase, counts=counts, ended_at=ended_at)
        await self._run("record a batch's status", op)

    async def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        vouched = self._finals.vouch(batch_id, outcomes)

        op = results.storing(batch_id, outcomes, now=now, vouched=vouched)
        stores = await self._run("store a batch's results", op)
        if vouched is not None:
            self._finals.stored(batch_id, vouched, stores)
        return len(outcomes)

    async def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        await self._run("record a collected batch", partial(batches.record_collected, batch_id, state=state, now=now))

    async def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        return await self._run(
            "adopt a batch", partial(batches.adopt, batch_id, provider_batch_id=provider_batch_id, now=now)
        )

    async def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        op = partial(batches.disown, batch_id, provider_batch_id=provider_batch_id, now=now)
        return await self._run("disown a batch", op)

    async def claim_batch(self, claim: BatchClaim) -> bool:
        op = partial(batches.claim_batch, claim)
        return await self._run("take a batch's lease", op)

    async def release_batch(self, batch_id: str, *, owner: str) -> None:
        await self._run("release a batch's lease", partial(batches.release_batch, batch_id, owner=owner))

    # the outbox

    async def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        return await self._run("keep a notice", partial(outbox.add_notice, notice, owner, until))

    async def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        return await self._run("claim due notices", partial(outbox.due_notices, owner, now, until, limit))

    async def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        op = partial(outbox.notice_tried, event_id, owner, now, tries, delivered, next_at)
        await self._run("record a notice's try", op)

    # webhooks

    async def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        make = partial(webhooks.record_webhook, delivery, uuid.uuid4().hex)
        return await self._run("record a webhook", make)

    async def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        seen = partial(webhooks.webhook_seen, provider, provider_batch_id)
        return await self._run("read the webhooks", seen, transaction=False)

    async def batch(self, batch_id: str) -> BatchRecord | None:
        return await self._run("read a batch", partial(batches.batch, batch_id), transaction=False)

    async def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        await self._run("record a step of a create", partial(batches.record_create_step, batch_id, step, value))

    async def create_steps(self, batch_id: str) -> dict[str, str]:
        return await self._run("read the steps of a create", partial(batches.create_steps, batch_id), transaction=False)

    async def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        op = partial(batches.unresolved, provider=provider, endpoint=endpoint)
        return await self._run("read unresolved creates", op, transaction=False)

    async def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        op = partial(batches.batch_holding, custom_id, among)
        return await self._run("read a batch's members", op, transaction=False)

    async def members(self, batch_id: str) -> dict[str, str]:
        return await self._run("read a batch's members", partial(batches.members, batch_id), transaction=False)

    async def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        op = partial(batches.members_and_attempts, batch_id)
        return await self._run("read a batch's members", op, transaction=False)

    async def stored_finals(self, batch_id: str) -> set[str]:
        finals, stores = await self._run(
            "read a batch's results", partial(results.stored_finals, batch_id), transaction=False
        )
        self._finals.read(batch_id, finals, stores)
        return finals

    async def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        op = partial(results.results_since, batch_id, after)
        return await self._run("read a batch's new results", op, transaction=False)

    async def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        op = partial(results.answers_of, batch_id, keys)
        return await self._run("read a batch's answers", op, transaction=False)

    async def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        op = partial(results.members_among, batch_id, keys)
        return await self._run("read a batch's members", op, transaction=False)


_IMPLEMENTS: type[AsyncLedgerStore] = AsyncPostgresLedger
"""The type checker's proof that `AsyncPostgresLedger` is an `AsyncLedgerStore`."""


def _cancelling() -> bool:
    """Whether the running task is being cancelled (its loop closing, the program stopping): it cleans up (a poller
    releases its batch), and the pool's own tasks may be cancelled already, so its writes go on a plain connection,
    tried once: a write that blocks the closing loop does not wait out an outage of the server (a lease left behind
    runs out by itself)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
