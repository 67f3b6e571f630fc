"""The rows a rebuilt ledger is loaded with (`LedgerStore.load`, in the layout of `records.COPIED`, as every store
takes a copy's), from the batches of the lost ledger's that the APIs still hold. Pure: no API, no store.

A request is recorded as its latest batch leaves it, so that a rerun of the same program finds it: answered (its final
result stored: the rerun is answered from the ledger), or in a batch still running (the rerun waits for that batch and
collects it). A request whose latest attempt ended in an error a later attempt may not meet, with attempts left
(an expiry, a server's error), or that its ended batch did not answer, is left out: it was not answered, so the rerun
sends it, as the lost ledger's program would have, and pays for it once.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lowtide.batching.backend import RemoteBatch
from lowtide.core.modes import BatchProcessingMode
from lowtide.ledger.records import (
    REBUILT,
    UNKEYED,
    UNKNOWN_PARAMS,
    BatchState,
    OutcomeRow,
    RequestState,
    stored_json,
)
from lowtide.rebuild.found import FoundBatch, Owner, Seen

__all__ = ["HASHED_NOTE", "Rebuilt", "rebuilt_rows"]

HASHED_NOTE = f"{REBUILT}; its custom ids are hashed, so whose ledger it was could not be read"
"""The note of a rebuilt batch none of whose custom ids says its ledger (every key too long or unusual for the
provider's id rule): a request of it is taken over only by a claim whose custom id is its own, which only the lost
ledger's identity and the request's key make."""

Row = tuple[Any, ...]


@dataclass
class Rebuilt:
    """The rows of a rebuilt ledger, table by table, and what they hold in numbers."""

    tables: dict[str, list[Row]] = field(default_factory=dict[str, list[Row]])
    answered: int = 0
    """Requests whose final result is recorded: a rerun is answered from the ledger."""
    waiting: int = 0
    """Requests in a batch still running: a rerun waits for it."""
    unkeyed: int = 0
    """Of those, requests whose keys could not be read (hashed custom ids), taken over by the rerun's claims."""
    left_out: Counter[str] = field(default_factory=Counter[str])
    """Requests left for the rerun to send, by why: `retry` (its last attempt may be made again), `unanswered`
    (its ended batch gave no result for it), `gone` (its ended batch's results are no longer held: it may have been
    answered, and cannot be recovered)."""

    @property
    def batches(self) -> int:
        return len(self.tables.get("batches", []))

    @property
    def requests(self) -> int:
        return len(self.tables.get("requests", []))


def rebuilt_rows(found: list[FoundBatch], *, now: float) -> Rebuilt:
    """The rows of the lost ledger's batches `found` (any order), for a ledger that holds nothing yet."""
    ordered = sorted(found, key=lambda b: (b.remote.created_at, b.remote.id))
    ids = _batch_ids(ordered)
    memberships: dict[str, list[tuple[FoundBatch, Seen]]] = {}
    for batch in ordered:
        for seen in batch.requests.values():
            memberships.setdefault(seen.key, []).append((batch, seen))
    rebuilt = Rebuilt()
    kept = {key: held for key, held in memberships.items() if _kept(held, rebuilt)}
    requests = [_request_row(key, held, ids) for key, held in kept.items()]
    members: list[Row] = []
    results: list[Row] = []
    counted: dict[str, int] = {}
    batches: list[Row] = []
    for batch in ordered:
        held = [seen for seen in batch.requests.values() if seen.key in kept]
        if not held:
            continue
        batch_id = ids[id(batch)]
        batches.append(_batch_row(batch, batch_id, held, now=now))
        for seen in held:
            members.append((batch_id, seen.custom_id, seen.key))
            counted[seen.key] = attempt = counted.get(seen.key, 0) + 1
            if seen.row is not None:
                results.append(_result_row(batch_id, seen.row, seen.retryable, attempt, batch, now=now))
    for key, held in kept.items():
        last = held[-1][0]
        if last.ended:
            rebuilt.answered += 1
        else:
            rebuilt.waiting += 1
        rebuilt.unkeyed += key.startswith(UNKEYED)
    rebuilt.tables = {"batches": batches, "requests": requests, "batch_members": members, "results": results}
    return rebuilt


def _kept(held: list[tuple[FoundBatch, Seen]], rebuilt: Rebuilt) -> bool:
    """Whether a request is recorded: its latest batch still running, or its final result from it known."""
    batch, seen = held[-1]
    if not batch.ended:
        return True
    if seen.row is None:
        rebuilt.left_out["gone" if batch.results_gone else "unanswered"] += 1
        return False
    if seen.retryable and len(held) < batch.source.max_attempts:
        rebuilt.left_out["retry"] += 1
        return False
    return True


def _batch_ids(ordered: list[FoundBatch]) -> dict[int, str]:
    """The ledger's id of each batch: the intent id the API echoes (the lost ledger's own), else one made from the
    API's id (the same in a dry run and the rebuild)."""
    ids: dict[int, str] = {}
    used: set[str] = set()
    for batch in ordered:
        intent = batch.remote.intent_id
        if intent is None or intent in used:
            digest = hashlib.sha256(f"{batch.source.provider}\n{batch.remote.id}".encode()).hexdigest()
            intent = f"lt_{digest[:32]}"
        used.add(intent)
        ids[id(batch)] = intent
    return ids


def _request_row(key: str, held: list[tuple[FoundBatch, Seen]], ids: dict[int, str]) -> Row:
    """A request as a copy brings it (the form of the SQLite ledger's schema 5, which every store loads): in its latest
    batch (`submitting`, that batch's id), its attempts counting that one."""
    last, seen = held[-1]
    params = next((s.params for _, s in reversed(held) if s.params is not None), None)
    model = next((s.model for _, s in reversed(held) if s.model), "")
    worst: float | None = None
    if params is not None and not last.ended:  # counted against its actor's budget while it waits
        priced = last.source.backend.codec.worst_case_usd(json.loads(params), params, mode=BatchProcessingMode.BATCH)
        worst = float(priced) if priced is not None else None
    stored = params if params is not None else UNKNOWN_PARAMS
    return (
        key, seen.custom_id, last.source.actor_for(model), model, stored, len(stored), RequestState.SUBMITTING.value,
        ids[id(last)], len(held), last.source.max_attempts, worst, held[0][0].remote.created_at,
        last.remote.created_at, None, None,
    )  # fmt: skip


def _batch_row(batch: FoundBatch, batch_id: str, held: list[Seen], *, now: float) -> Row:
    remote = batch.remote
    codec = batch.source.backend.codec
    size = sum(codec.request_size(seen.custom_id, seen.params) for seen in held if seen.params is not None)
    note = HASHED_NOTE if batch.owner is Owner.HASHED else REBUILT
    return (
        batch_id, batch.source.provider, batch.source.endpoint, remote.id, _state(remote, ended=batch.ended).value,
        remote.phase.value, len(held), size, remote.created_at, remote.created_at, remote.ended_at,
        now if batch.ended else None, stored_json(remote.counts.as_dict()), remote.request_id, None, None, note, None,
        None,
    )  # fmt: skip


def _state(remote: RemoteBatch, *, ended: bool) -> BatchState:
    """As the engine records a batch it collected (`batching.collection`), or one the API is processing."""
    if not ended:
        return BatchState.WAITING
    if remote.cancel_requested:
        return BatchState.CANCELED
    if remote.counts.expired and not remote.counts.succeeded:
        return BatchState.EXPIRED
    return BatchState.COLLECTED


def _result_row(batch_id: str, row: OutcomeRow, retryable: bool, attempt: int, batch: FoundBatch, *, now: float) -> Row:
    """A result as the ledger stores it: requeued (`pending`) when it may be tried again (a later batch holds the
    request: `_kept`), its final state otherwise."""
    state = RequestState.PENDING if retryable and attempt < batch.source.max_attempts else row.state
    response = row.response if isinstance(row.response, str) or row.response is None else stored_json(row.response)
    return (
        batch_id, row.key, state.value, response, stored_json(row.error) if row.error is not None else None,
        _money(row.cost_usd), _money(row.live_cost_usd), batch.remote.ended_at or now,
    )  # fmt: skip


def _money(value: Decimal | None) -> str | None:
    return str(value) if value is not None else None
