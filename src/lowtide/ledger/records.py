"""What the ledger holds, as the rest of lowtide sees it: request and batch states and records, the rows a batch's
results become, and the JSON the ledger stores (whatever store keeps them)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol

import orjson

from lowtide.ledger.answer_form import narrowed, stored_answer
from lowtide.ledger.journal_records import ENTRY_COLUMNS, RUN_COLUMNS

__all__ = [
    "ADOPTED",
    "COPIED",
    "DISOWNED",
    "FOREIGN",
    "REBUILT",
    "UNKEYED",
    "UNKNOWN_PARAMS",
    "BatchClaim",
    "BatchCreated",
    "BatchIntent",
    "BatchRecord",
    "BatchState",
    "KeyAnswer",
    "KeyState",
    "NewRequest",
    "OutcomeRow",
    "PendingRequest",
    "RequestRecord",
    "RequestState",
    "Row",
    "answer_json",
    "batch_record",
    "claimed_records",
    "foreign_batch_id",
    "key_answer",
    "request_record",
    "request_state",
    "stored_json",
]


ADOPTED = "reconciled after an unknown create"
"""The note of an intent that reconciliation gave a listed batch (`LedgerStore.adopt`)."""
DISOWNED = "adopted an API batch that held none of its requests; reconciled again"
"""The note of an intent whose adopted batch turned out to be another ledger's or program's (`LedgerStore.disown`)."""
FOREIGN = "not this ledger's: it held none of this ledger's requests"
"""The note of the record that keeps such a batch apart (`foreign-<API batch id>`, no members), so that it is never
a candidate again and nothing of it is counted."""


REBUILT = "rebuilt from the API (lowtide ledger rebuild)"
"""The note of a batch a rebuild recorded from what the provider's API still holds."""
UNKEYED = "rebuilt:"
"""The start of the key a rebuild gives a request whose custom id is hashed (its key cannot be read from it): this and
its custom id. A claim whose custom id is that one takes it over under its own key (`LedgerStore.adopt_unkeyed`)."""
UNKNOWN_PARAMS = "{}"
"""The parameters a rebuild records for a request whose body the API no longer shows (Anthropic's results alone, an
input file deleted once the results were stored): no provider's body is empty. A claim of its key with any body
takes its answer (its key, derived from its body or the caller's own, is all that names it)."""


def foreign_batch_id(provider_batch_id: str) -> str:
    """The ledger's id of the record that keeps another's batch apart (`LedgerStore.disown`)."""
    return f"foreign-{provider_batch_id}"


class RequestState(StrEnum):
    PENDING = "pending"
    """Queued by a process, not yet in a batch."""
    SUBMITTING = "submitting"
    """In a batch whose creation is in flight or unconfirmed."""
    WAITING = "waiting-on-batch"
    """In a batch the API has accepted; waiting for it to end."""
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    """Final: a non-retryable error, or retryable ones until the attempts ran out."""
    CANCELED = "canceled"
    EXPIRED = "expired"
    """Final: expired on every attempt allowed."""

    @property
    def final(self) -> bool:
        return self in _FINAL_STATES  # (a set: a tuple compares members one by one, once a result)


_FINAL_STATES = frozenset((RequestState.SUCCEEDED, RequestState.FAILED, RequestState.CANCELED, RequestState.EXPIRED))
_STATE_OF = {state.value: state for state in RequestState}


def request_state(value: str) -> RequestState:
    """The state a store's row names (`RequestState(value)` through a dict: a resumed run reads hundreds of thousands
    of them)."""
    found = _STATE_OF.get(value)
    return found if found is not None else RequestState(value)  # (an unknown name raises as the enum does)


class BatchState(StrEnum):
    INTENT = "intent"
    """Recorded before `create` was called; its outcome is not known yet."""
    UNKNOWN = "unknown"
    """`create` was called and its outcome is unknown (timeout, dropped connection, crash): reconcile first."""
    WAITING = "waiting-on-batch"
    """The API has the batch; it is processing."""
    ENDED = "ended"
    """The API says it ended; results not yet stored."""
    COLLECTED = "collected"
    CANCELED = "canceled"
    """Ended after a cancellation; results stored."""
    EXPIRED = "expired"
    """Ended by the 24 hour limit with requests expired; results stored."""
    FAILED = "failed"
    """The API refused the create: nothing was processed or charged."""

    @property
    def outstanding(self) -> bool:
        return self in (BatchState.INTENT, BatchState.UNKNOWN, BatchState.WAITING, BatchState.ENDED)


COPIED: dict[str, tuple[str, ...]] = {
    "batches": (
        "id", "provider", "endpoint", "provider_batch_id", "state", "phase", "request_count", "request_bytes",
        "intent_at", "submitted_at", "ended_at", "collected_at", "counts", "request_id", "owner", "owner_until", "note",
        "create_steps", "trace",
    ),
    "requests": (
        "key", "custom_id", "actor", "model", "params", "params_bytes", "state", "batch_id", "attempts", "max_attempts",
        "worst_case_usd", "created_at", "updated_at", "owner", "owner_until",
    ),
    "request_traces": ("key", "context"),
    "batch_members": ("batch_id", "custom_id", "key"),
    "results": ("batch_id", "key", "state", "response", "error", "cost_usd", "live_cost_usd", "at"),
    "runs": ("id", "actor", "configuration", "options", "fingerprint", "item_count", "created_at", "updated_at"),
    "run_items": ("run_id", "idx", "item_id", "job", "key", "attempt", "status", "reason"),
    "live_quotas": ("scope", "state", "updated_at"),
    "agent_runs": RUN_COLUMNS,
    "agent_journal": ENTRY_COLUMNS,
    "spend_caps": ("scope", "name", "period", "limit_usd"),
    "spend_entries": (
        "key", "team", "project", "tags", "actor", "model", "worst_case_usd", "created_at", "host", "released",
        "cost_usd",
    ),
    "spend_audit": (
        "at", "action", "subject", "team", "project", "tags", "actor", "worst_case_usd", "cap_left_usd", "host",
    ),
    "notice_outbox": (
        "event_id", "kind", "url", "secret_env", "body", "made_at", "give_up_at", "tries", "next_at", "delivered_at",
        "given_up_at",
    ),
}  # fmt: skip
"""What a ledger holds, table by table in an order its references allow, as every store keeps it: the rows a copy
moves from one store to another (`LedgerStore.export_rows` and `load`; results in arrival order, a live answer's
batch None; `request_traces`, the trace context stored with a request's claim while telemetry was on, so that a
copy's answers still end their calls' traces; the durable agent runs and their journals, `journal_records`' rows; the
notices of `batch.notify`, delivered or not, under their event ids and without the lease of a process trying one, so
that a copy neither loses a notice still to send nor sends one again; spend by owner, `spend_records`' tables: amounts
as decimal text, `released` 0 or 1, the audit in the order written)."""


class Row(Protocol):
    """A row of a store's query, its columns by name (SQLite's `sqlite3.Row`, psycopg's `dict_row`)."""

    def __getitem__(self, name: str, /) -> Any: ...


@dataclass(slots=True)
class NewRequest:
    """A request to claim (`LedgerStore.claim_new`). Made once a call and never changed, though not frozen (as
    `OutcomeRow`): a frozen dataclass sets each field through `object.__setattr__`, twice the cost of making one (1.5 us
    against 0.7, a claim of every call)."""

    key: str
    custom_id: str
    actor: str
    model: str
    params: dict[str, Any] | str
    """The provider's request body, or its JSON as `stored_json` gives it."""
    max_attempts: int = 1
    worst_case_usd: Decimal | None = None
    scope: str = ""
    """Which engines may send it in a batch of theirs: a digest of its provider, endpoint and credentials (never a
    secret), for a store that gathers the calls of every process into shared batches (`LedgerStore.take_pending`)."""
    trace: str = ""
    """The trace context of the call that made it (W3C `traceparent`/`tracestate` as JSON; "" when telemetry is
    off), stored with it so that whichever process answers it ends the same trace (`LedgerStore.traces_of`)."""


@dataclass(frozen=True, slots=True)
class BatchIntent:
    """A batch about to be created, as `Batches.record_intent` records it before `create` is called: its members
    join it only while still pending and owned by `owner` (the store answers the keys that joined, `keys` when all
    did). One record a batch: a store takes it whole, and passes it on whole to another store it wraps."""

    batch_id: str
    """lowtide's id of the batch, made for this intent (the API's comes later, `record_submitted`)."""
    provider: str
    endpoint: str
    members: Sequence[tuple[str, str]]
    """(key, custom_id) of each request the batch carries, in the order of its body."""
    request_bytes: int
    owner: str
    """The process (engine) creating it: the batch's lease is its, `until`, from `now` (when the intent is made)."""
    until: float
    now: float
    scope: str = ""
    """The members' scope (`NewRequest.scope`; "" when unknown): a store that gathers calls across processes writes
    no intent of a scope while another process gathers it (`Batches.take_pending`)."""
    trace: str = ""
    """The trace context of the batch's span (W3C `traceparent`, JSON, as `NewRequest.trace`; "" with telemetry off,
    stored as NULL): whichever process polls and collects the batch continues its trace (`BatchRecord.trace`)."""

    @property
    def keys(self) -> list[str]:
        """The members' keys, in order: the answer of a store in which every member joins."""
        return [key for key, _ in self.members]


@dataclass(frozen=True, slots=True)
class BatchCreated:
    """What `create` answered, recorded right after it (`Batches.record_submitted`): the API's id of the batch of the
    intent `batch_id`, where the API says it stands, and the create call's request id (None when the API gave none)."""

    batch_id: str
    provider_batch_id: str
    phase: str
    """`running`, `canceling` or `ended` (`batching.backend.Phase`)."""
    now: float
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class BatchClaim:
    """A process asking for a batch's lease (`Batches.claim_batch`), to create, reconcile or poll it: `owner` holds it
    `until`, as of `now`, unless another holds an unexpired lease. `dead_owner`, a process seen dead still holding
    it, does not count as holding it; `force` takes it regardless."""

    batch_id: str
    owner: str
    until: float
    now: float
    force: bool = False
    dead_owner: str | None = None

    def free(self, holder: str | None, holder_until: float | None) -> bool:
        """Whether the lease held by `holder` until `holder_until` is this claim's to take: no one's, the claimant's
        own or the dead owner's, run out, or forced. (The outstanding state is the store's to check.)"""
        return (
            self.force
            or holder is None
            or holder in (self.owner, self.dead_owner)
            or holder_until is None
            or holder_until < self.now
        )


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A pending request taken from another process into this one's batch: what the batch needs of it."""

    key: str
    custom_id: str
    params: str
    """The provider's request body, as the ledger holds its JSON."""
    params_bytes: int
    model: str


@dataclass(frozen=True)
class RequestRecord:
    key: str
    custom_id: str
    actor: str
    model: str
    params: dict[str, Any]
    params_bytes: int
    state: RequestState
    batch_id: str | None
    attempts: int
    max_attempts: int
    response: dict[str, Any] | None
    error: dict[str, Any] | None
    cost_usd: Decimal | None
    live_cost_usd: Decimal | None
    created_at: float
    updated_at: float
    owner: str | None
    owner_until: float | None


@dataclass(frozen=True, slots=True)
class KeyState:
    """Where a request stands and nothing else (`LedgerStore.states_of`): its state as `request_view` derives it, the
    batch it is in, and who owns it while it is pending. What settling a batch, or attaching to requests out in one,
    needs of each member: never its parameters nor its answer, which a full `RequestRecord` decodes."""

    key: str
    state: RequestState
    batch_id: str | None
    owner: str | None = None
    """As its record says (`RequestRecord.owner`): of a pending request, the process that queued or gathered it."""
    owner_until: float | None = None


@dataclass(frozen=True, slots=True)
class KeyAnswer:
    """A request's latest result from one batch, as `CollectedResults.answers_of` reads it from the batch's results
    alone: what its caller's outcome is made of (`policy.settled_of`; the answer carries its cost), never its
    parameters nor the rest of its record. Final, it is the request's outcome (a request leaves a batch only by a
    result that sends it on to another attempt, or with none); pending, the request has moved on."""

    key: str
    state: RequestState
    response: dict[str, Any] | None
    error: dict[str, Any] | None


def key_answer(key: str, state: str, response: str | None, error: str | None) -> KeyAnswer:
    """A result's row as `KeyAnswer` (its JSON decoded)."""
    return KeyAnswer(
        key, request_state(state), stored_answer(response) if response else None, json.loads(error) if error else None
    )


@dataclass(frozen=True)
class BatchRecord:
    id: str
    provider: str
    endpoint: str
    provider_batch_id: str | None
    state: BatchState
    phase: str | None
    """Where the provider says the batch stands: `running`, `canceling` or `ended` (`batching.backend.Phase`)."""
    request_count: int
    request_bytes: int
    intent_at: float
    submitted_at: float | None
    ended_at: float | None
    collected_at: float | None
    counts: dict[str, int] | None
    request_id: str | None
    owner: str | None
    owner_until: float | None
    note: str | None
    trace: str | None = None
    """The trace context of the span its intent opened (`BatchIntent.trace`), None when telemetry was off."""

    @property
    def adopted(self) -> bool:
        """Whether reconciliation gave this intent a listed batch (rather than its create's own answer)."""
        return self.note == ADOPTED


@dataclass(slots=True)
class OutcomeRow:
    """One request's result as stored: its final (or requeued) state and what came back.

    Made once a result and never changed, though not frozen: a frozen dataclass sets each field through
    `object.__setattr__`, twice the cost of making one (1.2 us against 0.6, thousands a batch)."""

    key: str
    state: RequestState
    response: dict[str, Any] | str | None = None
    """The response, or its JSON already encoded by `answer_json` (so that thousands of dicts need not wait)."""
    error: dict[str, Any] | None = None
    cost_usd: Decimal | None = None
    live_cost_usd: Decimal | None = None


def stored_json(value: object) -> str:
    """`value` as the ledger stores JSON: compact, keys sorted."""
    return _ENCODE(value)


_dumps = stored_json


def answer_json(value: object) -> str:
    """An answer as the ledger stores it: its text once, in its blocks (`answer_form.narrowed`; `stored_answer` reads
    it back), as the same JSON as `stored_json` gives (compact, keys sorted), though not ASCII-escaped, written by
    orjson, several times faster for the thousands of answers a batch brings.

    What orjson refuses (an integer beyond 64 bits, a key that is not a string) is written by `stored_json`.
    Requests keep `stored_json` alone: their JSON is hashed into keys, and must not change from one version to the next.
    """
    value = narrowed(value)
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return stored_json(value)


# Built once: `json.dumps` with options builds an encoder on every call, and the ledger encodes every request twice.
_ENCODE = json.JSONEncoder(separators=(",", ":"), sort_keys=True, default=str).encode


def request_record(row: Row) -> RequestRecord:
    """A request as a store's row of `request_view` gives it (columns by name)."""
    return RequestRecord(
        key=row["key"],
        custom_id=row["custom_id"],
        actor=row["actor"],
        model=row["model"],
        params=json.loads(row["params"]),
        params_bytes=row["params_bytes"],
        state=request_state(row["state"]),
        batch_id=row["batch_id"],
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        response=stored_answer(row["response"]) if row["response"] else None,
        error=json.loads(row["error"]) if row["error"] else None,
        cost_usd=Decimal(row["cost_usd"]) if row["cost_usd"] else None,
        live_cost_usd=Decimal(row["live_cost_usd"]) if row["live_cost_usd"] else None,
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        owner=row["owner"],
        owner_until=row["owner_until"],
    )


def batch_record(row: Row) -> BatchRecord:
    """A batch as a store's row of `batches` gives it (columns by name)."""
    return BatchRecord(
        id=row["id"],
        provider=row["provider"],
        endpoint=row["endpoint"],
        provider_batch_id=row["provider_batch_id"],
        state=BatchState(row["state"]),
        phase=row["phase"],
        request_count=row["request_count"],
        request_bytes=row["request_bytes"],
        intent_at=row["intent_at"],
        submitted_at=row["submitted_at"],
        ended_at=row["ended_at"],
        collected_at=row["collected_at"],
        counts=json.loads(row["counts"]) if row["counts"] else None,
        request_id=row["request_id"],
        owner=row["owner"],
        owner_until=row["owner_until"],
        note=row["note"],
        trace=row["trace"],
    )


def claimed_records(
    requests: Sequence[NewRequest],
    inserted: dict[str, str],
    known: Sequence[RequestRecord],
    *,
    owner: str,
    until: float,
    now: float,
) -> list[RequestRecord]:
    """`LedgerStore.claim`'s answer from `claim_new`'s: the records of `requests` in order, those inserted just now
    built from what was sent (nothing is read back), the others as the store had them."""
    records = {record.key: record for record in known}
    for r in requests:
        params = inserted.get(r.key)
        if params is not None and r.key not in records:
            records[r.key] = RequestRecord(
                key=r.key,
                custom_id=r.custom_id,
                actor=r.actor,
                model=r.model,
                params=r.params if isinstance(r.params, dict) else json.loads(r.params),
                params_bytes=len(params),
                state=RequestState.PENDING,
                batch_id=None,
                attempts=0,
                max_attempts=r.max_attempts,
                response=None,
                error=None,
                cost_usd=None,
                live_cost_usd=None,
                created_at=now,
                updated_at=now,
                owner=owner,
                owner_until=until,
            )
    return [records[r.key] for r in requests]
