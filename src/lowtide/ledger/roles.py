"""The roles a ledger's store plays, each a narrow protocol: `Claims`, `Batches`, `Reconciles`, `Results`, `Runs`,
`Journals`, `Spends`, `Views`, `Quotas`, `Copies`, `Webhooks` and `Outbox`. Code that needs one role is typed against
it; `interface.LedgerStore` is all of them.

The methods are shaped for many rows at once (claims, intents, results and requeues take whole chunks) and for a store
on another machine: a write answers what the caller needs (the keys inserted, whether a guarded change won) instead of
being read back. `aio_roles` holds the same roles awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from lowtide.ledger.collected import CollectedResults
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
    RequestState,
)
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

if TYPE_CHECKING:
    from lowtide.ledger.journal import AgentJournal
    from lowtide.ledger.quota_records import QuotaStore
    from lowtide.ledger.spending import SpendLedger
    from lowtide.ledger.views import LedgerViews

__all__ = [
    "BatchNotices",
    "Batches",
    "Claims",
    "Copies",
    "Journals",
    "Named",
    "Outbox",
    "Quotas",
    "Reconciles",
    "Results",
    "Runs",
    "Spends",
    "Views",
    "Webhooks",
]


class BatchNotices(Protocol):
    """Announcements that a batch changed (results stored, its state moved), from every process using the store."""

    def watch(self, batch_id: str) -> asyncio.Event:
        """An event set at the next announcement about `batch_id`, for the running event loop; `unwatch` it after.
        Watch first, then read the store: an announcement between the two is not missed."""
        ...

    def unwatch(self, batch_id: str, event: asyncio.Event) -> None: ...


class Named(Protocol):
    """Which ledger a store is: where, as people are told, and its own id (what every role's caller may name)."""

    @property
    def location(self) -> str:
        """Where the store is, as people are told: a file's path, or a database's URL with its password hidden."""
        ...

    def identity(self) -> str:
        """The ledger's own id: random, made when the ledger was made, never changed (a copy has its own). Every
        custom id the ledger's requests are given carries it (`BatchCodec.custom_id_for`), so that no other ledger's
        batch can be taken for one of this one's."""
        ...


class Claims(Protocol):
    """Requests claimed under an owner's lease, never twice: a key the ledger knows is never inserted again,
    and a request whose owner died is taken over by exactly one process."""

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        """`owner` (an engine of this process) is alive: renew its lease now and from then on, on the clock `now`
        reads, while the process lives. A store whose processes tell each other's liveness otherwise (SQLite: one
        host, the pid) may do nothing."""
        ...

    def let_go(self, owner: str) -> None:
        """`owner` stops: end its lease, so that what it held is free for other processes at once."""
        ...

    def claim(self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float) -> list[RequestRecord]:
        """Insert the requests the ledger does not know (owned by `owner` until `until`); return every record."""
        ...

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        """`claim`, answered as (key -> params JSON as stored, for the keys inserted; records of the keys known)."""
        ...

    def take_over(self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None) -> bool:
        """Own a pending request whose owner's lease ran out, or whose owner is `dead_owner` (a process seen dead,
        still holding it); True when this call took it."""
        ...

    def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        """`take_over` of each (key, dead owner seen holding it, or None), in order, in one transaction; the keys
        taken. A resumed bulk run takes over a dead run's claims a chunk at a time, not a transaction each."""
        ...

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        """Put requests back to pending (for a retry in a later batch), owned by `owner`."""
        ...

    def committed_usd(self, actor: str) -> Decimal:
        """What `actor` has spent (stored costs) plus the worst case of its requests not yet answered."""
        ...

    def unkeyed(self) -> bool:
        """Whether the ledger holds rebuilt requests whose keys are not known (their custom ids were hashed): then
        claims go through `adopt_unkeyed` first. False for a ledger never rebuilt, and asked once per engine, so
        that its claims pay nothing for it."""
        ...

    def adopt_unkeyed(self, requests: Sequence[NewRequest]) -> bool:
        """Each of `requests` whose key the ledger does not know, and whose custom id is a rebuilt request's whose key
        is not known, takes that request over (its memberships, results and trace) under its own key, in one
        transaction; the claim then finds it known. Whether any such request is left."""
        ...


class Batches(Protocol):
    """A batch's life as its creator and its poller write it: the intent before `create`, the API's id after,
    its status, the steps of a create, and the lease one process polls it under; and the batch read back."""

    @property
    def notices(self) -> BatchNotices | None:
        """Announcements of batches that changed, where the store makes them (PostgreSQL's `NOTIFY`); None where
        a process waiting on another's work reads the store every `watch_interval` instead."""
        ...

    def record_intent(self, intent: BatchIntent) -> list[str]:
        """Before `create`: the batch and its members (key, custom_id), in one transaction. Only requests still
        pending and owned by `intent.owner` join it: returns their keys (a store that gathers calls across processes
        may have taken others into another process's batch meanwhile, `take_pending`). `intent.scope` is the members'
        (as `take_pending`'s; "" when unknown): such a store does not write an intent of a scope while another process
        gathers it, so that what that gathering takes it takes whole."""
        ...

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        """Coalescing across processes: take the pending requests of `scope` that other processes claimed (oldest
        first, at most `limit` of them and `max_bytes` of params), owned by `owner` from now on, to send in its
        next batch; their callers, wherever they are, wait for that batch. Rows another process is putting into a
        batch of its own are skipped, not waited for. A store whose processes each batch their own calls (SQLite:
        one host) takes nothing."""
        ...

    def record_submitted(self, created: BatchCreated) -> None:
        """Right after `create` answered: the API's batch id. One row: every member of a batch the API has is
        waiting on it (`request_view`), with no write of its own."""
        ...

    def record_unknown(self, batch_id: str, *, note: str) -> None: ...

    def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        """The API refused the create: nothing was processed; the members go back to pending, attempt not counted."""
        ...

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None: ...

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        """A step of a create made of several calls is done (an input file uploaded, say)."""
        ...

    def create_steps(self, batch_id: str) -> dict[str, str]:
        """The steps of a create recorded so far, by name."""
        ...

    def claim_batch(self, claim: BatchClaim) -> bool:
        """Take the right to work on a batch (create, reconcile, poll) unless another process holds an unexpired lease
        on it, or it is held by `claim.dead_owner` (a process seen dead): then exactly one of the callers that saw it
        dead gets it (`BatchClaim.free`). `claim.force` takes it regardless. A batch no longer outstanding (collected,
        canceled, expired, failed) is never taken: a caller that read it outstanding before another process collected
        it would collect it again."""
        ...

    def release_batch(self, batch_id: str, *, owner: str) -> None:
        """`owner` stops working on a batch it holds (it stopped polling it): any process may take it now."""
        ...

    def batch(self, batch_id: str) -> BatchRecord | None:
        """A batch by lowtide's id or the API's."""
        ...

    def batches(self, *, states: Iterable[BatchState] | None = None) -> list[BatchRecord]: ...

    def batch_durations(
        self, provider: str, *, last: int, endpoint: str | None = None, requests: tuple[int, int] | None = None
    ) -> list[float]:
        """Seconds from submitted to ended of `provider`'s last `last` batches that ended on their own (not canceled,
        not expired), newest first (by their end), only those sent to `endpoint` and of `requests[0]` to `requests[1]`
        requests when given: how long batches like them take, by this ledger's history (`ledger.batch_times`)."""
        ...

    def members(self, batch_id: str) -> dict[str, str]:
        """custom_id -> key for every request sent in `batch_id`."""
        ...

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        """`members`, and key -> (attempts made, attempts allowed) for the requests now in `batch_id`."""
        ...


class Reconciles(Protocol):
    """What reconciliation asks after a create whose answer was lost: the unresolved intents, which of them
    holds a custom id, and the guarded changes that settle one (adopt the API's batch, give the intent up, create it
    again, disown a batch that was not the ledger's)."""

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        """Intents of `provider` at `endpoint` whose batch id is not known: creates in flight or unknown."""
        ...

    def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        """Which of the batches `among` has a member with `custom_id` (a request is in one unresolved batch)."""
        ...

    def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        """Reconciliation found no batch for an unknown create: mark the intent failed and put its requests back to
        pending (owned by `owner`), in one transaction, only if the intent is still unresolved (and, given
        `intent_at`, still the attempt the caller looked at: not resumed since); its keys, or None when it was
        resolved or resumed meanwhile (another process adopted a batch for it, or is creating it again)."""
        ...

    def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        """Take an unresolved intent over to create its batch again from what its create's steps made (an uploaded
        file): its attempt starts anew at `now` under `owner`, so that every other reconciler waits for this create
        and finds its batch. Only if it is still unresolved and still the attempt seen at `intent_at`; True if
        this caller won it."""
        ...

    def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        """Reconciliation found the API's batch for an unknown create; False if another record already holds that
        batch, or the intent is no longer unresolved."""
        ...

    def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        """The API's batch `provider_batch_id`, adopted for the intent `batch_id`, held none of its requests once it
        ended (another ledger's or program's): the intent is unresolved again (`unknown`, no API batch, noted
        `DISOWNED`), and that batch is kept apart in a record of its own (`foreign-<API id>`, `failed`, no members,
        noted `FOREIGN`), so that no reconciliation adopts it again and nothing of it is counted. Only while the
        intent still holds that batch and is not collected; True if this call did it."""
        ...


class Results(CollectedResults, Protocol):
    """Results appended in arrival order, and the requests read back with the state their latest result gives
    them (`CollectedResults`: what a collection and a watch read of a batch's results)."""

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        """Append results of `batch_id`, in arrival order; returns how many."""
        ...

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None: ...

    def request(self, key: str) -> RequestRecord | None: ...

    def requests(
        self,
        *,
        batch_id: str | None = None,
        actor: str | None = None,
        states: Iterable[RequestState] | None = None,
    ) -> list[RequestRecord]: ...

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        """The records of `keys` the ledger knows, in the order given."""
        ...

    def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        """The state, batch and owner of each of `keys` the ledger knows, in the order given: `requests_for` without
        the parameters, the answer or the rest of each record (a batch's members, tens of thousands at once)."""
        ...

    def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        """The trace contexts stored with `keys` when they were claimed (`NewRequest.trace`), of those that have one."""
        ...


class Runs(Named, Protocol):
    """The bulk runs kept in the store (`RunLedger`)."""

    @property
    def run_store(self) -> RunLedger:
        """The bulk runs kept in this store."""
        ...


class Journals(Protocol):
    """The durable agent runs kept in the store and their journals (`journal.AgentJournal`)."""

    @property
    def agent_journal(self) -> AgentJournal:
        """The agent runs kept in this store."""
        ...


class Spends(Protocol):
    """Spend by owner: caps on teams and projects, each request's owner and worst case, the audit
    (`spending.SpendLedger`)."""

    @property
    def spending(self) -> SpendLedger:
        """The spend by owner kept in this store, shared by every process using it."""
        ...


class Webhooks(Protocol):
    """The providers' webhook events received, each kept once by its id (`webhook_records`)."""

    def record_webhook(self, delivery: WebhookDelivery) -> Receipt:
        """Record `delivery` unless its event was recorded before, in one transaction: what its arrival was. A new
        event about one of this ledger's batches (`delivery.batch_id`) is announced with the ledger's notices, under
        `webhook_records.webhook_notice`'s name, where the store has notices."""
        ...

    def webhook_seen(self, provider: str, provider_batch_id: str) -> bool:
        """Whether an event about the API's batch `provider_batch_id` was recorded (one may come before the batch's
        create has recorded its id)."""
        ...


class Outbox(Protocol):
    """The notices to the user's server (`outbox_records`), each kept once by its event id until delivered or given
    up, claimed under a lease so that of several processes sweeping it one tries a notice at a time."""

    def add_notice(self, notice: Notice, *, owner: str, until: float) -> bool:
        """Keep `notice` unless one of its event id is kept, held by `owner` until `until` (it tries it at once):
        whether `owner` holds it now (True also when its own earlier add committed and its answer was lost)."""
        ...

    def due_notices(self, *, owner: str, now: float, until: float, limit: int) -> list[Notice]:
        """Claim for `owner` until `until` up to `limit` notices neither delivered nor given up, due by `now` and
        held by no live lease, the earliest due first: no other process tries them while the lease lives."""
        ...

    def notice_tried(
        self, event_id: str, *, owner: str, now: float, tries: int, delivered: bool, next_at: float | None
    ) -> None:
        """`owner` tried the notice `tries` more times: delivered, or due again at `next_at`, or (None) given up; its
        lease ended. Nothing changes when another owner holds it now."""
        ...


class Views(Protocol):
    """Bounded read-only summaries for a viewer (`lowtide dashboard`, `lowtide ledger` reports)."""

    @property
    def views(self) -> LedgerViews:
        """Bounded read-only summaries for a viewer (`lowtide dashboard`): runs, batches, spend, failures, history."""
        ...


class Quotas(Protocol):
    """The live quota scopes kept in the store, shared by every process using it."""

    @property
    def quota_store(self) -> QuotaStore:
        """The live quota scopes kept in this store, shared by every process using it."""
        ...


class Copies(Named, Protocol):
    """A whole ledger moved in and out (`lowtide ledger copy`, `lowtide ledger rebuild`)."""

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of `table` (a name of `records.COPIED`), its columns as `COPIED` lists them, in chunks."""
        ...

    def load(
        self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]], *, identity: str | None = None
    ) -> dict[str, int]:
        """Write the rows of another ledger (`export_rows`'s, table by table in `COPIED`'s order) in one
        transaction, into a store that holds nothing yet: checked in that transaction, raising `ConfigurationError`
        when it holds anything. Given `identity`, the ledger takes it in that transaction (a rebuilt ledger takes the
        identity of the one it stands for, so that its claims make the custom ids that one's made; a copy keeps its
        own). Returns how many rows of each table were written."""
        ...
