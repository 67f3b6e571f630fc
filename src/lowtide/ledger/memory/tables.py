"""What a `MemoryLedger` holds: the rows of the SQLite schema's tables as Python objects, and `request_view`
(`MemoryTables.view_state`, `MemoryTables.record`) over them. Read and written under the ledger's one lock only.

Results are appended: only each (batch, key)'s latest is kept, since no query reads an older one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeVar

from lowtide.ledger.answer_form import stored_answer
from lowtide.ledger.quota_records import ScopeState
from lowtide.ledger.records import BatchRecord, BatchState, KeyAnswer, RequestRecord, RequestState, key_answer
from lowtide.ledger.views import FAILED_STATES, TimePoint, TotalsKey, plus

__all__ = ["MemoryQuotaStore", "MemoryTables", "StoredBatch", "StoredRequest", "StoredResult", "batch_record"]

T = TypeVar("T")


@dataclass(slots=True)
class StoredRequest:
    """A row of `requests`: its own state column, which `view_state` reads through its latest result."""

    key: str
    custom_id: str
    actor: str
    model: str
    params: str
    state: RequestState
    batch_id: str | None
    attempts: int
    max_attempts: int
    worst_case_usd: Decimal | None
    created_at: float
    updated_at: float
    owner: str | None
    owner_until: float | None


@dataclass(frozen=True, slots=True)
class StoredResult:
    """A row of `results`, appended in arrival order (`seq`)."""

    seq: int
    batch_id: str | None
    key: str
    state: RequestState
    response: str | None
    error: str | None
    cost_usd: Decimal | None
    live_cost_usd: Decimal | None
    at: float


@dataclass(slots=True)
class StoredBatch:
    id: str
    provider: str
    endpoint: str
    provider_batch_id: str | None
    state: BatchState
    request_count: int
    request_bytes: int
    intent_at: float
    owner: str | None
    owner_until: float | None
    phase: str | None = None
    submitted_at: float | None = None
    ended_at: float | None = None
    collected_at: float | None = None
    counts: dict[str, int] | None = None
    request_id: str | None = None
    note: str | None = None
    create_steps: dict[str, str] = field(default_factory=dict[str, str])
    trace: str | None = None


class MemoryTables:
    """What a `MemoryLedger` holds; read and written under its lock only (its run store shares both)."""

    def __init__(self) -> None:
        self.requests: dict[str, StoredRequest] = {}
        self.batches: dict[str, StoredBatch] = {}
        self.by_provider_id: dict[str, str] = {}
        """The API's batch id -> lowtide's (the SQLite column is UNIQUE)."""
        self.members: dict[str, dict[str, str]] = {}
        """batch id -> custom_id -> key, over every attempt (`batch_members`)."""
        self.batches_of_key: dict[str, list[str]] = {}
        """key -> the batches it was sent in, one entry per member row."""
        self.latest: dict[tuple[str | None, str], StoredResult] = {}
        """(batch id, key) -> its latest result: the only one any query reads (older ones are never read)."""
        self.traces: dict[str, str] = {}
        """key -> the trace context stored with its claim (`request_traces`)."""
        self.totals: dict[TotalsKey, TimePoint] = {}
        """Final results counted and priced per (minute, batch id or '', actor, model), every one appended (the SQLite
        schema's `result_totals`)."""
        self.seq = 0

    def append(
        self,
        batch_id: str | None,
        key: str,
        state: RequestState,
        *,
        response: str | None,
        error: str | None,
        cost_usd: Decimal | None,
        live_cost_usd: Decimal | None,
        at: float,
    ) -> None:
        previous = self.latest.get((batch_id, key))
        if batch_id is not None and previous is not None and previous.state.final and state.final:
            return  # stored again (a collection replayed after a crash): the same answer, kept and counted once
        self.seq += 1
        self.latest[(batch_id, key)] = StoredResult(
            self.seq, batch_id, key, state, response, error, cost_usd, live_cost_usd, at
        )
        if state is not RequestState.PENDING:
            request = self.requests.get(key)
            minute = (at // 60) * 60
            counted = TimePoint(
                minute, 1, int(state.value in FAILED_STATES), cost_usd or Decimal(0), live_cost_usd or Decimal(0)
            )
            where = (minute, batch_id or "", request.actor if request else "?", request.model if request else "?")
            found = self.totals.get(where)
            self.totals[where] = plus(found, counted) if found is not None else counted

    def outcome(self, r: StoredRequest) -> StoredResult | None:
        """The request's latest result for the batch it is in (none when it is in no batch: its live answer)."""
        return self.latest.get((r.batch_id, r.key))

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        """`members`, and key -> (attempts made, attempts allowed) for the requests now in `batch_id`."""
        members = dict(self.members.get(batch_id, {}))
        attempts: dict[str, tuple[int, int]] = {}
        for key in members.values():
            r = self.requests.get(key)
            if r is not None and r.batch_id == batch_id:
                attempts[key] = (r.attempts, r.max_attempts)
        return members, attempts

    def stored_finals(self, batch_id: str) -> set[str]:
        """The keys of `batch_id`'s members whose latest result from it is final."""
        latest = self.latest
        return {
            key
            for key in self.members.get(batch_id, {}).values()
            if (result := latest.get((batch_id, key))) is not None and result.state.final
        }

    def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        """`LedgerStore.results_since`: the latest result of each member of `batch_id` stored after `after` (the
        only ones kept), in the order stored."""
        if after is None:
            return [], self.seq
        latest = self.latest
        found = sorted(
            (result.seq, key)
            for key in self.members.get(batch_id, {}).values()
            if (result := latest.get((batch_id, key))) is not None and result.seq > after
        )
        return [key for _, key in found], found[-1][0] if found else after

    def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        """`LedgerStore.answers_of`: the latest result from `batch_id` of each of `keys` that has one."""
        latest = self.latest
        return [
            key_answer(key, result.state.value, result.response, result.error)
            for key in keys
            if (result := latest.get((batch_id, key))) is not None
        ]

    def view_state(self, r: StoredRequest) -> RequestState:
        """`request_view`'s state: the latest result's, else the row's, `submitting` in a batch the API has reading
        as `waiting-on-batch`."""
        outcome = self.outcome(r)
        if outcome is not None:
            return outcome.state
        if r.state == RequestState.SUBMITTING and r.batch_id is not None:
            batch = self.batches.get(r.batch_id)
            if batch is not None and batch.provider_batch_id is not None:
                return RequestState.WAITING
        return r.state

    def record(self, r: StoredRequest) -> RequestRecord:
        o = self.outcome(r)
        return RequestRecord(
            key=r.key,
            custom_id=r.custom_id,
            actor=r.actor,
            model=r.model,
            params=json.loads(r.params),
            params_bytes=len(r.params),
            state=self.view_state(r),
            batch_id=r.batch_id,
            attempts=r.attempts,
            max_attempts=r.max_attempts,
            response=stored_answer(o.response) if o is not None and o.response else None,
            error=json.loads(o.error) if o is not None and o.error else None,
            cost_usd=o.cost_usd if o is not None else None,
            live_cost_usd=o.live_cost_usd if o is not None else None,
            created_at=r.created_at,
            updated_at=o.at if o is not None else r.updated_at,
            owner=r.owner,
            owner_until=r.owner_until,
        )


class MemoryQuotaStore:
    """The live quota scopes of the actors sharing one `MemoryLedger`; each change runs under the ledger's lock."""

    shared: str | None = None

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._states: dict[str, ScopeState] = {}

    def states(self) -> list[tuple[str, ScopeState]]:
        with self._lock:
            return list(self._states.items())

    def load(self, scope: str, state: ScopeState) -> None:
        with self._lock:
            self._states[scope] = state

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T:
        with self._lock:
            state = self._states.get(scope)
            if state is None:
                state = self._states[scope] = ScopeState()
            return change(state)


def batch_record(b: StoredBatch) -> BatchRecord:
    return BatchRecord(
        id=b.id,
        provider=b.provider,
        endpoint=b.endpoint,
        provider_batch_id=b.provider_batch_id,
        state=b.state,
        phase=b.phase,
        request_count=b.request_count,
        request_bytes=b.request_bytes,
        intent_at=b.intent_at,
        submitted_at=b.submitted_at,
        ended_at=b.ended_at,
        collected_at=b.collected_at,
        counts=dict(b.counts) if b.counts is not None else None,
        request_id=b.request_id,
        owner=b.owner,
        owner_until=b.owner_until,
        note=b.note,
        trace=b.trace,
    )
