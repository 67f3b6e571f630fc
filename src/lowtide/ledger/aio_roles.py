"""The ledger's roles as the event loop calls them (`roles`' roles, awaited): what the engine, the actor's batch path
and bulk runs ask of a store from coroutines, so that a store on another machine (PostgreSQL) never blocks the loop
for a round trip. Each method means what the sync role's method of the same name means."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Protocol

from lowtide.ledger.collected import AsyncCollectedResults
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.records import (
    BatchClaim,
    BatchCreated,
    BatchIntent,
    BatchRecord,
    BatchState,
    KeyState,
    NewRequest,
    OutcomeRow,
    PendingRequest,
    RequestRecord,
)
from lowtide.ledger.roles import BatchNotices
from lowtide.ledger.run_ledger import AsyncRunLedger
from lowtide.ledger.spending import AsyncSpendLedger
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

__all__ = [
    "AsyncBatches",
    "AsyncClaims",
    "AsyncOutbox",
    "AsyncReconciles",
    "AsyncResults",
    "AsyncRuns",
    "AsyncSpends",
    "AsyncWebhooks",
]


class AsyncClaims(Protocol):
    """`Claims`, awaited: the same methods, called from the event loop."""

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        """As `LedgerStore.keep_alive` (once per engine, when it is made)."""
        ...

    async def let_go(self, owner: str) -> None: ...

    async def claim(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> list[RequestRecord]: ...

    async def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]: ...

    async def take_over(
        self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None
    ) -> bool: ...

    async def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]: ...

    async def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None: ...

    async def committed_usd(self, actor: str) -> Decimal: ...

    async def unkeyed(self) -> bool: ...

    async def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool: ...


class AsyncBatches(Protocol):
    """`Batches`, awaited: the same methods, called from the event loop."""

    @property
    def notices(self) -> BatchNotices | None: ...

    async def record_intent(self, intent: BatchIntent) -> list[str]: ...

    async def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]: ...

    async def record_submitted(self, created: BatchCreated) -> None: ...

    async def record_unknown(self, batch_id: str, *, note: str) -> None: ...

    async def record_refused(self, batch_id: str, *, note: str, now: float) -> None: ...

    async def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None: ...

    async def record_create_step(self, batch_id: str, step: str, value: str) -> None: ...

    async def create_steps(self, batch_id: str) -> dict[str, str]: ...

    async def claim_batch(self, claim: BatchClaim) -> bool: ...

    async def release_batch(self, batch_id: str, *, owner: str) -> None: ...

    async def batch(self, batch_id: str) -> BatchRecord | None: ...

    async def members(self, batch_id: str) -> dict[str, str]: ...

    async def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]: ...


class AsyncReconciles(Protocol):
    """`Reconciles`, awaited: the same methods, called from the event loop."""

    async def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]: ...

    async def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None: ...

    async def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None: ...

    async def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool: ...

    async def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool: ...

    async def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool: ...


class AsyncResults(AsyncCollectedResults, Protocol):
    """`Results`, awaited: the same methods, called from the event loop."""

    async def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int: ...

    async def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None: ...

    async def request(self, key: str) -> RequestRecord | None: ...

    async def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]: ...

    async def states_of(self, keys: Sequence[str]) -> list[KeyState]: ...

    async def traces_of(self, keys: Sequence[str]) -> dict[str, str]: ...


class AsyncRuns(Protocol):
    """`Runs`, awaited: the same methods, called from the event loop."""

    @property
    def run_store(self) -> AsyncRunLedger: ...


class AsyncSpends(Protocol):
    """`Spends`, awaited: what a call asks of its owner's caps from the event loop."""

    @property
    def spending(self) -> AsyncSpendLedger: ...


class AsyncWebhooks(Protocol):
    """`Webhooks`, awaited: the same methods, called from the event loop (a receiver, a poller as it starts)."""

    async def record_webhook(self, delivery: WebhookDelivery) -> Receipt: ...

    async def webhook_seen(self, provider: str, provider_batch_id: str) -> bool: ...


class AsyncOutbox(Protocol):
    """`Outbox`, awaited: the same methods, called from the event loop (a notifier, its sweep)."""

    async def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool: ...

    async def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]: ...

    async def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None: ...
