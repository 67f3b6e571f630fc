"""`MemoryLedger`: the ledger in this process's memory, for tests and throwaway programs.

The same `LedgerStore` as the SQLite `Ledger`, with the same semantics (the SQL of `sqlite/schema.py` is the spec):
results are appended, a request's state is derived from its latest result for the batch it is in (`view_state`), a
request `submitting` in a batch whose API id is recorded is `waiting-on-batch`, and every guarded change
(`take_over`, `give_up_intent`, `resume_intent`, `adopt`, `claim_batch`) checks and writes under one lock, so that of
two callers only one wins. What would break a constraint of the SQLite schema (a batch id used twice, a member that is
not a request, an API batch id held by two batches) raises `LedgerError` with nothing written.

Nothing outlives the object: a program that stops loses what it held, and no other process sees it. Stored JSON
(parameters, answers, errors, a run's inputs) is kept as text, as the SQLite store keeps it, so a record read back
is a copy the caller may change.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from lowtide.errors import LedgerError
from lowtide.ledger.defaults import StoreDefaults
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.memory.batches import UNRESOLVED, MemoryBatches
from lowtide.ledger.memory.copy import load_into, rows_of
from lowtide.ledger.memory.journal import MemoryJournal
from lowtide.ledger.memory.outbox import MemoryOutbox
from lowtide.ledger.memory.runs import MemoryRunStore
from lowtide.ledger.memory.spending import MemorySpending
from lowtide.ledger.memory.tables import MemoryQuotaStore, MemoryTables, StoredBatch, StoredRequest
from lowtide.ledger.memory.unkeyed import adopt_unkeyed, unkeyed_keys
from lowtide.ledger.memory.webhooks import MemoryWebhooks
from lowtide.ledger.records import (
    ADOPTED,
    DISOWNED,
    FOREIGN,
    BatchCreated,
    BatchIntent,
    BatchState,
    KeyState,
    NewRequest,
    OutcomeRow,
    PendingRequest,
    RequestRecord,
    RequestState,
    foreign_batch_id,
    stored_json,
)
from lowtide.ledger.scan_views import ScanViews

__all__ = ["MemoryLedger"]

_UNANSWERED = (RequestState.PENDING, RequestState.SUBMITTING, RequestState.WAITING)
_ADOPTABLE = (BatchState.WAITING, BatchState.ENDED)
"""Where an adopted batch stands until its results are stored (a `disown` is possible until then)."""


class MemoryLedger(MemoryBatches, MemoryWebhooks, MemoryOutbox, StoreDefaults):
    """A ledger in this process's memory; safe to share between threads (one lock), never between processes."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        """Held for every read and change, by the run store and the quota store too."""
        MemoryWebhooks.__init__(self)
        MemoryOutbox.__init__(self)
        self.tables = MemoryTables()
        self._quota_store = MemoryQuotaStore(self.lock)
        self._run_store = MemoryRunStore(self.lock, self.tables)
        self._journal = MemoryJournal(self.lock)
        self._spending = MemorySpending(self.lock, self.tables)
        self._identity = secrets.token_hex(6)
        self._unkeyed: set[str] = set()
        """The rebuilt requests whose keys are not known yet (`records.UNKEYED`)."""

    def __repr__(self) -> str:
        return f"<MemoryLedger at {id(self):#x}>"

    @property
    def location(self) -> str:
        return "memory"

    def identity(self) -> str:
        """Random, made with the object: two MemoryLedgers are two ledgers."""
        return self._identity

    @property
    def run_store(self) -> MemoryRunStore:
        return self._run_store

    @property
    def agent_journal(self) -> MemoryJournal:
        return self._journal

    @property
    def spending(self) -> MemorySpending:
        return self._spending

    @property
    def quota_store(self) -> MemoryQuotaStore:
        return self._quota_store

    @property
    def views(self) -> ScanViews:
        """Answered from the store's rows (`ScanViews`), its sums over every result from its totals."""
        with self.lock:
            totals = dict(self.tables.totals)
        return ScanViews(self, totals=lambda: totals)

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        with self.lock:
            rows = rows_of(self, table)
        yield rows

    def load(
        self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]], *, identity: str | None = None
    ) -> dict[str, int]:
        with self.lock:
            written = load_into(self, tables)
            if identity is not None:
                self._identity = identity
            self._unkeyed = unkeyed_keys(self.tables)
            return written

    def unkeyed(self) -> bool:
        with self.lock:
            return bool(self._unkeyed)

    def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        with self.lock:
            return adopt_unkeyed(self.tables, self._unkeyed, requests)

    # requests

    def claim(self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float) -> list[RequestRecord]:
        with self.lock:
            self.claim_new(requests, owner=owner, until=until, now=now)
            return [self.tables.record(self.tables.requests[r.key]) for r in requests]

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        inserted: dict[str, str] = {}
        known: dict[str, RequestRecord] = {}
        t = self.tables
        with self.lock:
            for r in requests:
                if r.key in inserted or r.key in known:
                    continue  # of a key given twice, the first counts
                there = t.requests.get(r.key)
                if there is not None:
                    known[r.key] = t.record(there)
                    continue
                inserted[r.key] = params = r.params if isinstance(r.params, str) else stored_json(r.params)
                if r.trace:
                    t.traces[r.key] = r.trace
                t.requests[r.key] = StoredRequest(
                    key=r.key,
                    custom_id=r.custom_id,
                    actor=r.actor,
                    model=r.model,
                    params=params,
                    state=RequestState.PENDING,
                    batch_id=None,
                    attempts=0,
                    max_attempts=r.max_attempts,
                    worst_case_usd=r.worst_case_usd,
                    created_at=now,
                    updated_at=now,
                    owner=owner,
                    owner_until=until,
                )
        return inserted, list(known.values())

    def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        taken: set[str] = set()
        with self.lock:
            for key, dead_owner in keys:
                r = self.tables.requests.get(key)
                if r is None or self.tables.view_state(r) is not RequestState.PENDING:
                    continue
                if not (
                    r.owner is None
                    or r.owner == owner
                    or (r.owner_until is not None and r.owner_until < now)
                    or (dead_owner is not None and r.owner == dead_owner)
                ):
                    continue
                r.owner, r.owner_until, r.updated_at = owner, until, now
                taken.add(key)
        return taken

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        with self.lock:
            for key in keys:
                r = self.tables.requests.get(key)
                if r is not None:
                    r.state, r.batch_id = RequestState.PENDING, None
                    r.owner, r.owner_until, r.updated_at = owner, until, now

    def committed_usd(self, actor: str) -> Decimal:
        """Summed as Decimals, exactly (the SQLite store sums in floating point: 0.1 + 0.2 is 0.30000000000000004
        there)."""
        spent = outstanding = Decimal(0)
        t = self.tables
        with self.lock:
            for r in t.requests.values():
                if r.actor != actor:
                    continue
                o = t.outcome(r)
                if o is not None and o.cost_usd is not None:
                    spent += o.cost_usd
                if r.worst_case_usd is not None and t.view_state(r) in _UNANSWERED:
                    outstanding += r.worst_case_usd
        return spent + outstanding

    def request(self, key: str) -> RequestRecord | None:
        with self.lock:
            r = self.tables.requests.get(key)
            return self.tables.record(r) if r is not None else None

    def requests(
        self,
        *,
        batch_id: str | None = None,
        actor: str | None = None,
        states: Iterable[RequestState] | None = None,
    ) -> list[RequestRecord]:
        wanted = {RequestState(s) for s in states} if states is not None else None
        t = self.tables
        with self.lock:
            found = [
                t.record(r)
                for r in t.requests.values()
                if (batch_id is None or r.batch_id == batch_id)
                and (actor is None or r.actor == actor)
                and (wanted is None or t.view_state(r) in wanted)
            ]
        return sorted(found, key=lambda record: (record.created_at, record.key))

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        with self.lock:
            return [self.tables.record(self.tables.requests[k]) for k in keys if k in self.tables.requests]

    def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        t = self.tables
        with self.lock:
            return [
                KeyState(k, t.view_state(r), r.batch_id, r.owner, r.owner_until)
                for k in keys
                if (r := t.requests.get(k)) is not None
            ]

    def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        with self.lock:
            traces = self.tables.traces
            return {key: traces[key] for key in keys if key in traces}

    # batches

    def record_intent(self, intent: BatchIntent) -> list[str]:
        batch_id, members = intent.batch_id, intent.members
        t = self.tables
        with self.lock:
            if batch_id in t.batches:
                raise _refused(f"the batch {batch_id} is already recorded")
            sent: dict[str, str] = {}
            for key, custom_id in members:
                if custom_id in sent:
                    raise _refused(f"the custom id {custom_id} is twice in the batch {batch_id}")
                if key not in t.requests:
                    raise _refused(f"the request {key} is not in the ledger")
                sent[custom_id] = key
            t.batches[batch_id] = StoredBatch(
                id=batch_id,
                provider=intent.provider,
                endpoint=intent.endpoint,
                provider_batch_id=None,
                state=BatchState.INTENT,
                request_count=len(members),
                request_bytes=intent.request_bytes,
                intent_at=intent.now,
                owner=intent.owner,
                owner_until=intent.until,
                trace=intent.trace or None,
            )
            t.members[batch_id] = sent
            for key in sent.values():
                t.batches_of_key.setdefault(key, []).append(batch_id)
            for key in dict.fromkeys(sent.values()):
                r = t.requests[key]
                r.state, r.batch_id, r.attempts = RequestState.SUBMITTING, batch_id, r.attempts + 1
                r.owner, r.owner_until, r.updated_at = None, None, intent.now
            return intent.keys

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        """Nothing: one process, whose engines batch the calls they claimed."""
        return []

    def record_submitted(self, created: BatchCreated) -> None:
        with self.lock:
            b = self.tables.batches.get(created.batch_id)
            if b is None:
                return
            self._give_provider_id(b, created.provider_batch_id)
            b.state, b.phase, b.request_id = BatchState.WAITING, created.phase, created.request_id
            b.submitted_at = b.submitted_at if b.submitted_at is not None else created.now

    def record_unknown(self, batch_id: str, *, note: str) -> None:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is not None:
                b.state, b.note = BatchState.UNKNOWN, note

    def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        with self.lock:
            b = self._unresolved(batch_id, intent_at)
            if b is None:
                return None
            b.state, b.note = BatchState.FAILED, note
            self._back_to_pending(batch_id, now, owner=(owner, until))
            return list(self.tables.members.get(batch_id, {}).values())

    def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        with self.lock:
            b = self._unresolved(batch_id, intent_at)
            if b is None:
                return False
            b.state, b.intent_at, b.owner, b.owner_until, b.note = BatchState.INTENT, now, owner, until, None
            return True

    def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is not None:
                b.state, b.note = BatchState.FAILED, note
            self._back_to_pending(batch_id, now, owner=None)

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is None:
                return
            b.phase, b.counts, b.ended_at = phase, dict(counts) if counts is not None else None, ended_at
            if b.state in (BatchState.WAITING, BatchState.ENDED):
                b.state = BatchState.ENDED if phase == "ended" else BatchState.WAITING

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        with self.lock:
            for o in outcomes:
                self.tables.append(
                    batch_id,
                    o.key,
                    RequestState(o.state),
                    response=o.response
                    if o.response is None or isinstance(o.response, str)
                    else stored_json(o.response),
                    error=stored_json(o.error) if o.error is not None else None,
                    cost_usd=o.cost_usd,
                    live_cost_usd=o.live_cost_usd,
                    at=now,
                )
        return len(outcomes)

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is not None:
                b.state, b.collected_at, b.owner, b.owner_until = BatchState(state), now, None, None

    def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        with self.lock:
            if provider_batch_id in self.tables.by_provider_id:
                return False
            b = self._unresolved(batch_id, None)
            if b is None:
                return False  # resolved meanwhile (adopted by another caller, or sent again)
            self._give_provider_id(b, provider_batch_id)
            b.state, b.submitted_at, b.note = BatchState.WAITING, now, ADOPTED
            return True

    def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        with self.lock:
            b = self.tables.batches.get(batch_id)
            if b is None or b.provider_batch_id != provider_batch_id or b.state not in _ADOPTABLE:
                return False
            del self.tables.by_provider_id[provider_batch_id]
            b.provider_batch_id, b.state, b.note = None, BatchState.UNKNOWN, DISOWNED
            b.phase = b.counts = b.submitted_at = b.ended_at = None
            foreign = StoredBatch(
                foreign_batch_id(provider_batch_id), b.provider, b.endpoint, None, BatchState.FAILED, 0, 0, now,
                None, None, note=FOREIGN,
            )  # fmt: skip
            if foreign.id in self.tables.batches:
                raise _refused(f"the batch id {foreign.id} is taken")
            self.tables.batches[foreign.id] = foreign
            self._give_provider_id(foreign, provider_batch_id)
            return True

    # under the lock

    def _unresolved(self, batch_id: str, intent_at: float | None) -> StoredBatch | None:
        """The batch if it is still an unresolved intent (and still the attempt seen at `intent_at`, if given)."""
        b = self.tables.batches.get(batch_id)
        if b is None or b.provider_batch_id is not None or b.state not in UNRESOLVED:
            return None
        if intent_at is not None and b.intent_at != intent_at:
            return None
        return b

    def _back_to_pending(self, batch_id: str, now: float, *, owner: tuple[str, float] | None) -> None:
        """The members still `submitting` in the batch go back to pending, their attempt not counted; owned by
        `owner` (None: their owner is left as it is)."""
        for key in dict.fromkeys(self.tables.members.get(batch_id, {}).values()):
            r = self.tables.requests.get(key)
            if r is None or r.batch_id != batch_id or r.state != RequestState.SUBMITTING:
                continue
            r.state, r.batch_id, r.attempts, r.updated_at = RequestState.PENDING, None, max(r.attempts - 1, 0), now
            if owner is not None:
                r.owner, r.owner_until = owner

    def _give_provider_id(self, b: StoredBatch, provider_batch_id: str) -> None:
        holder = self.tables.by_provider_id.get(provider_batch_id)
        if holder is not None and holder != b.id:
            raise _refused(f"the API's batch {provider_batch_id} is already held by {holder}")
        if b.provider_batch_id is not None and b.provider_batch_id != provider_batch_id:
            del self.tables.by_provider_id[b.provider_batch_id]
        b.provider_batch_id = provider_batch_id
        self.tables.by_provider_id[provider_batch_id] = b.id


def _refused(reason: str) -> LedgerError:
    return LedgerError(f"The ledger memory could not be written: {reason}.")


_IMPLEMENTS: type[LedgerStore] = MemoryLedger
"""The type checker's proof that `MemoryLedger` is a `LedgerStore`."""
