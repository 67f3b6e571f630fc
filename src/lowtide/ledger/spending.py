"""`SpendLedger`: spend by owner as a ledger keeps it, whichever store (`roles.Spends`): the caps on teams and
projects, each request's owner and worst case reserved against them in one transaction, the audit of creates and
cancels, and spend by team, project, actor, model and day. `AsyncSpendLedger` is the part a call awaits.

A request's spend is derived, never written twice: while the ledger holds no answer for its key, its worst case is
reserved (unless released: its call failed before anything was recorded); once it holds one, the answer's cost is
spent (a failure's none), so that a reservation is settled by the very transaction that stores the answer. A request
answered outside the ledger's requests (a live call) is settled by `settle`, its cost written on its entry."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Protocol

from lowtide.ledger.spend_records import (
    Admission,
    AuditRecord,
    CapPeriod,
    CapScope,
    SpendCap,
    SpendEntry,
    SpendLine,
)

__all__ = ["AsyncSpendLedger", "SpendLedger"]


class SpendLedger(Protocol):
    """Spend by owner in one ledger, shared by every process (and, on PostgreSQL, every host) using it."""

    def set_cap(self, cap: SpendCap) -> None:
        """Set (or change) the cap of `cap`'s scope, name and period."""
        ...

    def remove_cap(self, scope: CapScope, name: str, period: CapPeriod) -> bool:
        """Remove a cap: whether there was one."""
        ...

    def caps(self) -> list[SpendCap]:
        """Every cap, by scope, name and period."""
        ...

    def reserve(self, entry: SpendEntry) -> Admission:
        """Judge `entry`'s worst case against its owner's caps (`spend_records.judge_all`) and, admitted, record it, in
        one transaction that holds those caps (locked in `owners_caps`' order) until it ends, so that two processes
        or hosts admitting at once are judged one after the other; the audit record of either outcome in the same
        transaction. A key recorded before keeps its first owner and adds nothing."""
        ...

    def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        """`reserve` for several requests at once (a `run_many` call, a bulk run's batch), all or none, in one
        transaction: the entries whose keys are recorded already add nothing and keep their first owner; the rest are
        judged together (`spend_records.judge_all`) and, admitted, recorded each with its audit record; refused, none
        is recorded and one audit record says so (`spend_records.audits_of`)."""
        ...

    def release(self, key: str, *, at: float, host: str) -> None:
        """Let go of `key`'s reservation (its call failed before the ledger recorded the request), audited."""
        ...

    def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        """`release` of several keys in one transaction (a batch whose requests were never recorded)."""
        ...

    def settle(self, key: str, cost_usd: Decimal) -> None:
        """`key`, a request answered outside the ledger's requests (a live call), cost `cost_usd`: spent from now on,
        its reservation settled (a key released, or never admitted, is left alone)."""
        ...

    def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        """Let go of the reservations of `keys`, the unanswered requests of the cancelled `batch`, in one transaction
        with its audit (`spend_records.cancel_audits`): what the API still answers after the cancel is spent when its
        answer is stored, as any answer's cost."""
        ...

    def record_audit(self, record: AuditRecord) -> None:
        """Record an action not made through `reserve`."""
        ...

    def spend_lines(self, since: float | None = None) -> list[SpendLine]:
        """Spend by day, team, project, actor and model of the requests admitted since `since` (None: ever)."""
        ...

    def audit(self, since: float | None = None) -> list[AuditRecord]:
        """The audit records since `since` (None: ever), oldest first."""
        ...


class AsyncSpendLedger(Protocol):
    """What a call awaits of its `SpendLedger` from the event loop; each means what the sync method means."""

    async def reserve(self, entry: SpendEntry) -> Admission: ...

    async def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission: ...

    async def release(self, key: str, *, at: float, host: str) -> None: ...

    async def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None: ...

    async def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None: ...

    async def settle(self, key: str, cost_usd: Decimal) -> None: ...

    async def record_audit(self, record: AuditRecord) -> None: ...
