"""`async_ledger`: a store as the event loop calls it (`AsyncLedgerStore`).

A store that has an async face of its own (PostgreSQL: psycopg's async connections) gives it. A local store (SQLite,
memory) is wrapped in `InlineAsyncLedger`, which calls its sync methods inline: a local write takes microseconds, so
a thread would cost more than it saves, and awaiting a coroutine that never suspends costs only the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from lowtide.ledger.interface import AsyncLedgerStore, BatchNotices, LedgerStore
from lowtide.ledger.outbox_records import Notice
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
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.spend_records import Admission, AuditRecord, SpendEntry
from lowtide.ledger.spending import SpendLedger
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

if TYPE_CHECKING:
    from lowtide.ledger.runs import ItemOutcome, LiveAnswer

__all__ = ["InlineAsyncLedger", "InlineAsyncRunLedger", "InlineSpending", "async_ledger"]


@runtime_checkable
class _NativelyAsync(Protocol):
    def asynchronous(self) -> AsyncLedgerStore:
        """The store's own async face, for the running event loop."""
        ...


def async_ledger(store: LedgerStore) -> AsyncLedgerStore:
    """`store` as the running event loop calls it: its own async face, or its sync methods awaited inline."""
    if isinstance(store, _NativelyAsync):
        return store.asynchronous()
    return InlineAsyncLedger(store)


class InlineAsyncLedger:
    """A local `LedgerStore` awaited: each method calls the store's own, inline (no thread, no suspension)."""

    __slots__ = ("sync",)

    def __init__(self, store: LedgerStore) -> None:
        self.sync = store

    @property
    def location(self) -> str:
        return self.sync.location

    async def identity(self) -> str:
        return self.sync.identity()

    @property
    def notices(self) -> BatchNotices | None:
        return self.sync.notices

    @property
    def inline(self) -> LedgerStore:
        """The store: it answers at once."""
        return self.sync

    @property
    def run_store(self) -> InlineAsyncRunLedger:
        return InlineAsyncRunLedger(self.sync.run_store)

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        self.sync.keep_alive(owner, lease_seconds=lease_seconds, now=now)

    async def let_go(self, owner: str) -> None:
        self.sync.let_go(owner)

    async def claim(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> list[RequestRecord]:
        return self.sync.claim(requests, owner=owner, until=until, now=now)

    async def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        return self.sync.claim_new(requests, owner=owner, until=until, now=now)

    async def take_over(self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None) -> bool:
        return self.sync.take_over(key, owner=owner, until=until, now=now, dead_owner=dead_owner)

    async def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        return self.sync.take_over_many(keys, owner=owner, until=until, now=now)

    async def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        self.sync.requeue(keys, owner=owner, until=until, now=now)

    async def committed_usd(self, actor: str) -> Decimal:
        return self.sync.committed_usd(actor)

    async def request(self, key: str) -> RequestRecord | None:
        return self.sync.request(key)

    async def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        return self.sync.requests_for(keys)

    async def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        return self.sync.states_of(keys)

    async def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        return self.sync.traces_of(keys)

    @property
    def spending(self) -> InlineSpending:
        return InlineSpending(self.sync.spending)

    async def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        return self.sync.record_webhook(delivery)

    async def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        return self.sync.webhook_seen(provider, provider_batch_id)

    async def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        return self.sync.add_notice(notice, owner=owner, until=until)

    async def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        return self.sync.due_notices(owner=owner, now=now, until=until, limit=limit)

    async def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        self.sync.notice_tried(event_id, owner=owner, now=now, tries=tries, delivered=delivered, next_at=next_at)

    async def record_intent(self, intent: BatchIntent) -> list[str]:
        return self.sync.record_intent(intent)

    async def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        return self.sync.take_pending(scope, owner=owner, until=until, now=now, limit=limit, max_bytes=max_bytes)

    async def record_submitted(self, created: BatchCreated) -> None:
        self.sync.record_submitted(created)

    async def record_unknown(self, batch_id: str, *, note: str) -> None:
        self.sync.record_unknown(batch_id, note=note)

    async def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        return self.sync.give_up_intent(batch_id, note=note, owner=owner, until=until, now=now, intent_at=intent_at)

    async def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        return self.sync.resume_intent(batch_id, intent_at=intent_at, owner=owner, until=until, now=now)

    async def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        self.sync.record_refused(batch_id, note=note, now=now)

    async def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        self.sync.record_status(batch_id, phase=phase, counts=counts, ended_at=ended_at)

    async def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        return self.sync.record_outcomes(batch_id, outcomes, now=now)

    async def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        self.sync.record_collected(batch_id, state=state, now=now)

    async def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        return self.sync.adopt(batch_id, provider_batch_id=provider_batch_id, now=now)

    async def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        return self.sync.disown(batch_id, provider_batch_id=provider_batch_id, now=now)

    async def claim_batch(self, claim: BatchClaim) -> bool:
        return self.sync.claim_batch(claim)

    async def release_batch(self, batch_id: str, *, owner: str) -> None:
        self.sync.release_batch(batch_id, owner=owner)

    async def batch(self, batch_id: str) -> BatchRecord | None:
        return self.sync.batch(batch_id)

    async def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        self.sync.record_create_step(batch_id, step, value)

    async def create_steps(self, batch_id: str) -> dict[str, str]:
        return self.sync.create_steps(batch_id)

    async def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        return self.sync.unresolved(provider=provider, endpoint=endpoint)

    async def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        return self.sync.batch_holding(custom_id, among)

    async def members(self, batch_id: str) -> dict[str, str]:
        return self.sync.members(batch_id)

    async def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        return self.sync.members_and_attempts(batch_id)

    async def unkeyed(self) -> bool:
        return self.sync.unkeyed()

    async def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        return self.sync.adopt_unkeyed(requests)

    async def stored_finals(self, batch_id: str) -> set[str]:
        return self.sync.stored_finals(batch_id)

    async def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        return self.sync.results_since(batch_id, after)

    async def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        return self.sync.answers_of(batch_id, keys)

    async def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        return self.sync.members_among(batch_id, keys)


class InlineAsyncRunLedger:
    """A local `RunLedger` awaited: each method calls the store's own, inline."""

    __slots__ = ("sync",)

    def __init__(self, runs: RunLedger) -> None:
        self.sync = runs

    async def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        self.sync.decide(run_id, decisions, now=now)

    async def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        self.sync.record_live(run_id, answers, now=now)

    async def outstanding_batches(self, run_id: str) -> list[str]:
        return self.sync.outstanding_batches(run_id)

    async def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        return self.sync.batches(run_id)

    async def outcomes(
        self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None
    ) -> list[ItemOutcome]:
        return self.sync.outcomes(run_id, start=start, stop=stop, only=only)


_IMPLEMENTS: type[AsyncLedgerStore] = InlineAsyncLedger
"""The type checker's proof that `InlineAsyncLedger` is an `AsyncLedgerStore`."""


class InlineSpending:
    """A local store's `SpendLedger` awaited, inline."""

    __slots__ = ("sync",)

    def __init__(self, spending: SpendLedger) -> None:
        self.sync = spending

    async def reserve(self, entry: SpendEntry) -> Admission:
        return self.sync.reserve(entry)

    async def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        return self.sync.reserve_all(entries)

    async def release(self, key: str, *, at: float, host: str) -> None:
        self.sync.release(key, at=at, host=host)

    async def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        self.sync.release_all(keys, at=at, host=host)

    async def settle(self, key: str, cost_usd: Decimal) -> None:
        self.sync.settle(key, cost_usd)

    async def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        self.sync.cancel_all(batch, keys, at=at, host=host)

    async def record_audit(self, record: AuditRecord) -> None:
        self.sync.record_audit(record)
