"""A fourth kind of ledger store, of another package, for the scenarios: `folder:PATH`, a ledger kept in a folder
on disk, shared by every process of the host that opens the folder, registered through the `lowtide.ledgers` entry
points as a third party's store would be. It imports nothing of lowtide but the public faces a store is written
against: the kinds registry (`lowtide.ledger.kinds`), the role protocols (`lowtide.ledger.roles`), what every store
inherits (`lowtide.ledger.defaults`), the agent journal's records (`lowtide.ledger.journal`), the webhooks'
(`lowtide.ledger.webhook_records`) and the outbox's (`lowtide.ledger.outbox_records`), and, for the rows' logic, the
in-memory tables it keeps on disk.

How it keeps the guarantees: every read takes the folder's lock shared, every change takes it exclusively (`flock`
on `PATH/lock`, so across processes; a thread lock within one), reads the tables again only when another process
replaced them since (the file's inode and time say so), makes the change, and replaces `PATH/tables.pickle`
atomically (`os.replace`) before the lock is let go. So a key is claimed once across processes, a guarded change
(`take_over`, `adopt`, `claim_batch`) has one winner, and a process killed mid-change leaves the tables as they were.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

from lowtide.ledger.defaults import StoreDefaults
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal import EntryAt, EntryChange, RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry
from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.quota_records import ScopeState
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
from lowtide.ledger.runs import ItemOutcome, ItemRow, ItemsApart, LiveAnswer, NewItem, RunRecord
from lowtide.ledger.scan_views import ScanViews
from lowtide.ledger.spend_records import Admission, AuditRecord, CapPeriod, CapScope, SpendCap, SpendEntry, SpendLine
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

T = TypeVar("T")

TABLES = "tables.pickle"


class FolderLedger(StoreDefaults):
    """One ledger in a folder; safe to share between the threads of a process and the processes of a host."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._file = folder / TABLES
        self._threads = threading.RLock()
        self._lock_file = open(folder / "lock", "a+b")  # noqa: SIM115 - held open for the store's life, for flock
        self._held: MemoryLedger | None = None
        self._seen: tuple[int, int] | None = None
        """(inode, mtime in ns) of the tables file `_held` was read from or written to."""
        with self.writing():
            pass  # a new folder gets its tables, and with them its identity, at once: every process then reads it

    def __repr__(self) -> str:
        return f"<FolderLedger at {self.folder}>"

    # the folder's lock, and its tables read again only when another process replaced them

    @contextmanager
    def reading(self) -> Iterator[MemoryLedger]:
        with self._threads:
            fcntl.flock(self._lock_file, fcntl.LOCK_SH)
            try:
                yield self._fresh()
            finally:
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)

    @contextmanager
    def writing(self) -> Iterator[MemoryLedger]:
        with self._threads:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX)
            try:
                ledger = self._fresh()
                yield ledger
                self._save(ledger)
            finally:
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self._file.stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_mtime_ns)

    def _fresh(self) -> MemoryLedger:
        stamp = self._stamp()
        if self._held is not None and stamp == self._seen:
            return self._held
        ledger = MemoryLedger()
        if stamp is not None:
            _restore(ledger, pickle.loads(self._file.read_bytes()))
        self._held, self._seen = ledger, stamp
        return ledger

    def _save(self, ledger: MemoryLedger) -> None:
        # A change that raised is not saved (the `yield` above raised past this): the tables stay as they were.
        temporary = self.folder / f"{TABLES}.{os.getpid()}.{threading.get_ident()}"
        temporary.write_bytes(pickle.dumps(_state(ledger), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, self._file)
        self._seen = self._stamp()

    # which ledger, and what the store holds open

    @property
    def location(self) -> str:
        return f"folder:{self.folder}"

    def identity(self) -> str:
        with self.reading() as ledger:
            return ledger.identity()

    def close(self) -> None:
        self._lock_file.close()

    # runs, views, quotas: each a face over the same tables, under the same lock

    @property
    def run_store(self) -> FolderRuns:
        return FolderRuns(self)

    @property
    def quota_store(self) -> FolderQuotas:
        return FolderQuotas(self)

    @property
    def agent_journal(self) -> FolderJournal:
        return FolderJournal(self)

    @property
    def spending(self) -> FolderSpending:
        return FolderSpending(self)

    @property
    def views(self) -> ScanViews:
        with self.reading() as ledger:
            totals = dict(ledger.tables.totals)
        return ScanViews(self, totals=lambda: totals)

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        with self.reading() as ledger:
            rows = [row for chunk in ledger.export_rows(table) for row in chunk]
        yield rows

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        with self.writing() as ledger:
            return ledger.claim_new(requests, owner=owner, until=until, now=now)

    def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        with self.writing() as ledger:
            return ledger.take_over_many(keys, owner=owner, until=until, now=now)

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        with self.writing() as ledger:
            return ledger.requeue(keys, owner=owner, until=until, now=now)

    def committed_usd(self, actor: str) -> Decimal:
        with self.reading() as ledger:
            return ledger.committed_usd(actor)

    def unkeyed(self) -> bool:
        with self.reading() as ledger:
            return ledger.unkeyed()

    def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        with self.writing() as ledger:
            return ledger.adopt_unkeyed(requests)

    def record_intent(self, intent: BatchIntent) -> list[str]:
        with self.writing() as ledger:
            return ledger.record_intent(intent)

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        with self.writing() as ledger:
            return ledger.take_pending(scope, owner=owner, until=until, now=now, limit=limit, max_bytes=max_bytes)

    def record_submitted(self, created: BatchCreated) -> None:
        with self.writing() as ledger:
            return ledger.record_submitted(created)

    def record_unknown(self, batch_id: str, *, note: str) -> None:
        with self.writing() as ledger:
            return ledger.record_unknown(batch_id, note=note)

    def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        with self.writing() as ledger:
            return ledger.record_refused(batch_id, note=note, now=now)

    def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        with self.writing() as ledger:
            return ledger.record_webhook(delivery)

    def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        with self.reading() as ledger:
            return ledger.webhook_seen(provider, provider_batch_id)

    def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        with self.writing() as ledger:
            return ledger.add_notice(notice, owner=owner, until=until)

    def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        with self.writing() as ledger:
            return ledger.due_notices(owner=owner, now=now, until=until, limit=limit)

    def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        with self.writing() as ledger:
            ledger.notice_tried(event_id, owner=owner, now=now, tries=tries, delivered=delivered, next_at=next_at)

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        with self.writing() as ledger:
            return ledger.record_status(batch_id, phase=phase, counts=counts, ended_at=ended_at)

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        with self.writing() as ledger:
            return ledger.record_create_step(batch_id, step, value)

    def create_steps(self, batch_id: str) -> dict[str, str]:
        with self.reading() as ledger:
            return ledger.create_steps(batch_id)

    def claim_batch(self, claim: BatchClaim) -> bool:
        with self.writing() as ledger:
            return ledger.claim_batch(claim)

    def release_batch(self, batch_id: str, *, owner: str) -> None:
        with self.writing() as ledger:
            return ledger.release_batch(batch_id, owner=owner)

    def batch(self, batch_id: str) -> BatchRecord | None:
        with self.reading() as ledger:
            return ledger.batch(batch_id)

    def batches(self, *, states: Iterable[BatchState] | None = None) -> list[BatchRecord]:
        with self.reading() as ledger:
            return ledger.batches(states=states)

    def batch_durations(
        self, provider: str, *, last: int, endpoint: str | None = None, requests: tuple[int, int] | None = None
    ) -> list[float]:
        with self.reading() as ledger:
            return ledger.batch_durations(provider, last=last, endpoint=endpoint, requests=requests)

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        with self.reading() as ledger:
            return ledger.members_and_attempts(batch_id)

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        with self.reading() as ledger:
            return ledger.unresolved(provider=provider, endpoint=endpoint)

    def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        with self.reading() as ledger:
            return ledger.batch_holding(custom_id, among)

    def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        with self.writing() as ledger:
            return ledger.give_up_intent(batch_id, note=note, owner=owner, until=until, now=now, intent_at=intent_at)

    def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        with self.writing() as ledger:
            return ledger.resume_intent(batch_id, intent_at=intent_at, owner=owner, until=until, now=now)

    def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        with self.writing() as ledger:
            return ledger.adopt(batch_id, provider_batch_id=provider_batch_id, now=now)

    def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        with self.writing() as ledger:
            return ledger.disown(batch_id, provider_batch_id=provider_batch_id, now=now)

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        with self.writing() as ledger:
            return ledger.record_outcomes(batch_id, outcomes, now=now)

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        with self.writing() as ledger:
            return ledger.record_collected(batch_id, state=state, now=now)

    def request(self, key: str) -> RequestRecord | None:
        with self.reading() as ledger:
            return ledger.request(key)

    def requests(
        self,
        *,
        batch_id: str | None = None,
        actor: str | None = None,
        states: Iterable[RequestState] | None = None,
    ) -> list[RequestRecord]:
        with self.reading() as ledger:
            return ledger.requests(batch_id=batch_id, actor=actor, states=states)

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        with self.reading() as ledger:
            return ledger.requests_for(keys)

    def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        with self.reading() as ledger:
            return ledger.states_of(keys)

    def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        with self.reading() as ledger:
            return ledger.traces_of(keys)

    def load(
        self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]], *, identity: str | None = None
    ) -> dict[str, int]:
        with self.writing() as ledger:
            return ledger.load(tables, identity=identity)

    def stored_finals(self, batch_id: str) -> set[str]:
        with self.reading() as ledger:
            return ledger.stored_finals(batch_id)

    def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        with self.reading() as ledger:
            return ledger.results_since(batch_id, after)

    def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        with self.reading() as ledger:
            return ledger.answers_of(batch_id, keys)

    def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        with self.reading() as ledger:
            return ledger.members_among(batch_id, keys)


class FolderRuns:
    """The bulk runs of a `FolderLedger` (`RunLedger`)."""

    def __init__(self, store: FolderLedger) -> None:
        self._store = store

    def run(self, run_id: str) -> RunRecord | None:
        with self._store.reading() as ledger:
            return ledger.run_store.run(run_id)

    def runs(self) -> list[RunRecord]:
        with self._store.reading() as ledger:
            return ledger.run_store.runs()

    def create(
        self,
        run_id: str,
        *,
        actor: str,
        configuration: dict[str, Any],
        options: dict[str, Any],
        fingerprint: str,
        items: Sequence[NewItem],
        now: float,
    ) -> bool:
        with self._store.writing() as ledger:
            return ledger.run_store.create(
                run_id,
                actor=actor,
                configuration=configuration,
                options=options,
                fingerprint=fingerprint,
                items=items,
                now=now,
            )

    def update_options(self, run_id: str, options: dict[str, Any], *, now: float) -> None:
        with self._store.writing() as ledger:
            return ledger.run_store.update_options(run_id, options, now=now)

    def items(self, run_id: str, *, with_jobs: bool = True, start: int = 0, stop: int | None = None) -> list[ItemRow]:
        with self._store.reading() as ledger:
            return ledger.run_store.items(run_id, with_jobs=with_jobs, start=start, stop=stop)

    def items_apart(self, run_id: str, *, start: int, stop: int) -> ItemsApart:
        with self._store.reading() as ledger:
            return ledger.run_store.items_apart(run_id, start=start, stop=stop)

    def outcomes(self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None) -> list[ItemOutcome]:
        with self._store.reading() as ledger:
            return ledger.run_store.outcomes(run_id, start=start, stop=stop, only=only)

    def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        with self._store.writing() as ledger:
            return ledger.run_store.decide(run_id, decisions, now=now)

    def new_attempts(self, run_id: str, keys: Iterable[tuple[int, str]], *, now: float) -> None:
        with self._store.writing() as ledger:
            return ledger.run_store.new_attempts(run_id, keys, now=now)

    def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        with self._store.writing() as ledger:
            return ledger.run_store.record_live(run_id, answers, now=now)

    def outstanding_batches(self, run_id: str) -> list[str]:
        with self._store.reading() as ledger:
            return ledger.run_store.outstanding_batches(run_id)

    def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        with self._store.reading() as ledger:
            return ledger.run_store.batches(run_id)

    def live_cost(self, run_id: str) -> Decimal:
        with self._store.reading() as ledger:
            return ledger.run_store.live_cost(run_id)


class FolderJournal:
    """The agent runs of a `FolderLedger`: each read and change the memory store's, under the folder's lock."""

    def __init__(self, store: FolderLedger) -> None:
        self._store = store

    def open_run(self, run: AgentRun) -> tuple[AgentRun, bool]:
        with self._store.writing() as ledger:
            return ledger.agent_journal.open_run(run)

    def agent_run(self, run_id: str) -> AgentRun | None:
        with self._store.reading() as ledger:
            return ledger.agent_journal.agent_run(run_id)

    def agent_runs(self, states: Iterable[AgentState] | None = None) -> list[AgentRun]:
        with self._store.reading() as ledger:
            return ledger.agent_journal.agent_runs(states)

    def change_run(self, run_id: str, change: RunChange) -> AgentRun | None:
        with self._store.writing() as ledger:
            return ledger.agent_journal.change_run(run_id, change)

    def change_runs(self, changes: Mapping[str, RunChange]) -> dict[str, AgentRun | None]:
        with self._store.writing() as ledger:
            return ledger.agent_journal.change_runs(changes)

    def entries(self, run_id: str) -> list[JournalEntry]:
        with self._store.reading() as ledger:
            return ledger.agent_journal.entries(run_id)

    def entries_of(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        with self._store.reading() as ledger:
            return ledger.agent_journal.entries_of(run_ids)

    def put_entry(self, entry: JournalEntry) -> JournalEntry:
        with self._store.writing() as ledger:
            return ledger.agent_journal.put_entry(entry)

    def change_entry(self, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
        with self._store.writing() as ledger:
            return ledger.agent_journal.change_entry(run_id, position, change)

    def write_entries(
        self, intents: Sequence[JournalEntry], changes: Sequence[EntryAt]
    ) -> tuple[list[JournalEntry], list[JournalEntry | None]]:
        with self._store.writing() as ledger:
            return ledger.agent_journal.write_entries(intents, changes)

    def runs_of(self, run_ids: Sequence[str]) -> dict[str, AgentRun]:
        with self._store.reading() as ledger:
            return ledger.agent_journal.runs_of(run_ids)


class FolderSpending:
    """The spend by owner of a `FolderLedger`: each read and change the memory store's, under the folder's lock."""

    def __init__(self, store: FolderLedger) -> None:
        self._store = store

    def set_cap(self, cap: SpendCap) -> None:
        with self._store.writing() as ledger:
            ledger.spending.set_cap(cap)

    def remove_cap(self, scope: CapScope, name: str, period: CapPeriod) -> bool:
        with self._store.writing() as ledger:
            return ledger.spending.remove_cap(scope, name, period)

    def caps(self) -> list[SpendCap]:
        with self._store.reading() as ledger:
            return ledger.spending.caps()

    def reserve(self, entry: SpendEntry) -> Admission:
        with self._store.writing() as ledger:
            return ledger.spending.reserve(entry)

    def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        with self._store.writing() as ledger:
            return ledger.spending.reserve_all(entries)

    def release(self, key: str, *, at: float, host: str) -> None:
        with self._store.writing() as ledger:
            ledger.spending.release(key, at=at, host=host)

    def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        with self._store.writing() as ledger:
            ledger.spending.release_all(keys, at=at, host=host)

    def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        with self._store.writing() as ledger:
            ledger.spending.cancel_all(batch, keys, at=at, host=host)

    def settle(self, key: str, cost_usd: Decimal) -> None:
        with self._store.writing() as ledger:
            ledger.spending.settle(key, cost_usd)

    def record_audit(self, record: AuditRecord) -> None:
        with self._store.writing() as ledger:
            ledger.spending.record_audit(record)

    def spend_lines(self, since: float | None = None) -> list[SpendLine]:
        with self._store.reading() as ledger:
            return ledger.spending.spend_lines(since)

    def audit(self, since: float | None = None) -> list[AuditRecord]:
        with self._store.reading() as ledger:
            return ledger.spending.audit(since)


class FolderQuotas:
    """The live quota scopes of a `FolderLedger`, shared by every process of the host that opens the folder."""

    def __init__(self, store: FolderLedger) -> None:
        self._store = store

    @property
    def shared(self) -> str:
        return self._store.location

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T:
        with self._store.writing() as ledger:
            return await ledger.quota_store.update(scope, change)


def _state(ledger: MemoryLedger) -> dict[str, Any]:
    """What the folder keeps of the tables: every row, the run store's and the quotas', and the ledger's identity."""
    runs = ledger.run_store
    return {
        "tables": vars(ledger.tables),
        "runs": (runs._runs, runs._items),
        "quotas": ledger.quota_store._states,
        "agents": (ledger.agent_journal.runs, ledger.agent_journal.journal),
        "spend": _spend_state(ledger),
        "identity": ledger._identity,
        "unkeyed": ledger._unkeyed,
    }


def _spend_state(ledger: MemoryLedger) -> tuple[Any, ...]:
    spend = ledger.spending
    return (spend._caps, spend._entries, spend._released, spend._audit, spend._settled)


def _restore(ledger: MemoryLedger, state: dict[str, Any]) -> None:
    vars(ledger.tables).update(state["tables"])
    ledger.run_store._runs, ledger.run_store._items = state["runs"]
    ledger.quota_store._states = state["quotas"]
    ledger.agent_journal.runs, ledger.agent_journal.journal = state.get("agents", ({}, {}))
    spend = ledger.spending
    spend._caps, spend._entries, spend._released, spend._audit, spend._settled = state.get(
        "spend", ({}, {}, set(), [], {})
    )
    ledger._identity = state["identity"]
    ledger._unkeyed = state["unkeyed"]


_CHECKED: type[LedgerStore] = FolderLedger
"""The type checker holds the store to every role of `LedgerStore`."""


class FolderKind(LedgerKind):
    scheme = "folder"
    example = "folder:PATH (a ledger kept in a folder)"

    def target(self, text: str, rest: str | None) -> str:
        path = (rest or "").strip()
        if not path or "\x00" in path:
            raise NotALocation("names no folder: write folder:PATH.")
        return path

    def place(self, target: str) -> str:
        return str(Path(target).resolve())

    def open(self, target: str, *, read_only: bool) -> FolderLedger:
        return FolderLedger(Path(target))

    def shown(self, target: str) -> str:
        return f"folder:{target}"

    def missing(self, target: str) -> str | None:
        return None if (Path(target) / TABLES).is_file() else self.shown(target)


def register(registry: LedgerRegistry) -> None:
    registry.register(FolderKind())
