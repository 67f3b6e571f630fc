"""Parked work, seen and handled from the ledger: what `lowtide status`, `collect` and `cancel` do.

An agent runtime uses the same functions to park a pipeline stage (`actor.submit`), see where it stands
(`status`), fetch results of ended batches (`collect`) and stop it (`cancel`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lowtide.batching.backend import Phase, RemoteBatch
from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.batching.keys import owner_id
from lowtide.batching.tickets import Ticket
from lowtide.config.actors import BatchProcessingMode, BatchSettings, TimeoutPolicy
from lowtide.core.clock import Clock, SystemClock
from lowtide.core.hosts import host_id
from lowtide.errors import APIError, BatchNotOutstanding, ConfigurationError
from lowtide.ledger.records import RequestState
from lowtide.ledger.store import BatchRecord, BatchState, LedgerStore
from lowtide.provider import ProviderOptions
from lowtide.registry import ProviderRegistry, default_registry

__all__ = ["ActorTotals", "BatchSummary", "StatusReport", "cancel", "collect", "collect_ended", "status"]


@dataclass(frozen=True)
class BatchSummary:
    id: str
    batch_id: str | None
    state: str
    requests: int
    counts: dict[str, int]
    cost_usd: Decimal
    live_cost_usd: Decimal
    endpoint: str
    unpriced: int = 0
    """Answers whose cost is unknown (no price for their model), left out of `cost_usd` and `live_cost_usd`."""

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ActorTotals:
    actor: str
    requests: int = 0
    states: dict[str, int] = field(default_factory=dict[str, int])
    cost_usd: Decimal = Decimal(0)
    live_cost_usd: Decimal = Decimal(0)
    unpriced: int = 0
    """Answers whose cost is unknown (no price for their model), left out of the two sums."""


@dataclass(frozen=True)
class StatusReport:
    tickets: list[Ticket]
    batches: list[BatchSummary]
    actors: list[ActorTotals]

    @property
    def cost_usd(self) -> Decimal:
        return sum((a.cost_usd for a in self.actors), Decimal(0))

    @property
    def live_cost_usd(self) -> Decimal:
        return sum((a.live_cost_usd for a in self.actors), Decimal(0))

    @property
    def unpriced(self) -> int:
        return sum(a.unpriced for a in self.actors)

    def as_json(
        self, *, tickets: Sequence[Ticket] | None = None, batches: Sequence[BatchSummary] | None = None
    ) -> dict[str, Any]:
        """The report as JSON values (costs as `Decimal`s: `lowtide.bulk.outputs.results.exact_json` writes them as
        numbers); `tickets` and `batches` replace the report's own, to show part of them."""
        return {
            "requests": len(self.tickets),
            "tickets": [t.model_dump() for t in (self.tickets if tickets is None else tickets)],
            "batches": [b.as_json() for b in (self.batches if batches is None else batches)],
            "actors": [dict(a.__dict__) for a in self.actors],
            "cost_usd": self.cost_usd,
            "live_cost_usd": self.live_cost_usd,
            "unpriced": self.unpriced,
        }


def status(
    ledger: LedgerStore,
    *,
    actor: str | None = None,
    states: Iterable[str] | None = None,
    batch: str | None = None,
) -> StatusReport:
    """Every ticket and batch in the ledger with its state, counts and cost, and totals per actor.

    `actor`, `states` (ticket states: `waiting-on-batch`, `collected`, `failed`, ...) and `batch` (lowtide's batch
    id or the API's) keep only the tickets that match, and the batches that hold them.
    """
    records = ledger.requests(actor=actor)
    batches = {b.id: b for b in ledger.batches()}
    if batch is not None:
        chosen = {b.id for b in batches.values() if batch in (b.id, b.provider_batch_id)}
        if not chosen:
            raise ConfigurationError(f"No batch {batch!r} in the ledger {ledger.location}.", field="batch")
        records = [r for r in records if r.batch_id in chosen]
    tickets = [Ticket.of(r, batches.get(r.batch_id or "")) for r in records]
    if states is not None:
        wanted = set(states)
        kept = [(r, t) for r, t in zip(records, tickets, strict=True) if t.state in wanted]
        records, tickets = [r for r, _ in kept], [t for _, t in kept]
    per_batch: dict[str, tuple[Decimal, Decimal, int]] = {}
    totals: dict[str, ActorTotals] = {}
    for record, ticket in zip(records, tickets, strict=True):
        line = totals.setdefault(record.actor, ActorTotals(record.actor))
        line.requests += 1
        line.states[ticket.state] = line.states.get(ticket.state, 0) + 1
        line.cost_usd += record.cost_usd or 0
        line.live_cost_usd += record.live_cost_usd or 0
        # An answer with no cost is one whose model has no price: shown as such, not as free.
        unpriced = int(record.state is RequestState.SUCCEEDED and record.cost_usd is None)
        line.unpriced += unpriced
        if record.batch_id:
            cost, live, unknown = per_batch.get(record.batch_id, (Decimal(0), Decimal(0), 0))
            per_batch[record.batch_id] = (
                cost + (record.cost_usd or 0),
                live + (record.live_cost_usd or 0),
                unknown + unpriced,
            )
    narrowed = actor is not None or states is not None or batch is not None
    summaries = [
        _summary(b, *per_batch.get(b.id, (Decimal(0), Decimal(0), 0)))
        for b in batches.values()
        if not narrowed or b.id in per_batch
    ]
    return StatusReport(tickets=tickets, batches=summaries, actors=sorted(totals.values(), key=lambda a: a.actor))


def _summary(batch: BatchRecord, cost: Decimal, live: Decimal, unpriced: int) -> BatchSummary:
    return BatchSummary(
        id=batch.id,
        batch_id=batch.provider_batch_id,
        state=batch.state.value,
        requests=batch.request_count,
        counts=batch.counts or {"processing": batch.request_count},
        cost_usd=cost,
        live_cost_usd=live,
        endpoint=batch.endpoint,
        unpriced=unpriced,
    )


async def collect(
    ledger: LedgerStore,
    *,
    batch_ids: Iterable[str] | None = None,
    client: object | None = None,
    api_key_env: str | None = None,
    clock: Clock | None = None,
    registry: ProviderRegistry | None = None,
) -> list[BatchSummary]:
    """Fetch the results of ended batches (all outstanding ones, or those named) into the ledger (`collect_ended`):
    the ledger's batches then, with their counts and cost (`status`, which reads every request of the ledger)."""
    await collect_ended(
        ledger, batch_ids=batch_ids, client=client, api_key_env=api_key_env, clock=clock, registry=registry
    )
    return status(ledger).batches


async def collect_ended(
    ledger: LedgerStore,
    *,
    batch_ids: Iterable[str] | None = None,
    client: object | None = None,
    api_key_env: str | None = None,
    clock: Clock | None = None,
    registry: ProviderRegistry | None = None,
) -> None:
    """`collect` without its summaries (what `lowtide agents resume` does every pass): only the outstanding batches
    are read, not every request of the ledger.

    A batch still processing is checked once and left as it is; one whose create is unknown is reconciled. When the
    API refused or failed a look (it could not be reached, say), every other batch is still collected, and then the
    first such `APIError` is raised: the batches it concerns stay in the ledger as they were, for a later collect.
    """
    wanted = set(batch_ids) if batch_ids is not None else None
    outstanding = [
        b
        for b in ledger.batches(states=[BatchState.INTENT, BatchState.UNKNOWN, BatchState.WAITING, BatchState.ENDED])
        if wanted is None or b.id in wanted or b.provider_batch_id in wanted
    ]
    if wanted:
        known = {b.id for b in outstanding} | {b.provider_batch_id for b in outstanding}
        missing = wanted - known
        if missing:
            raise ConfigurationError(
                f"No outstanding batch {', '.join(sorted(missing))} in the ledger {ledger.location}.", field="batch"
            )
    failures: list[APIError] = []
    for provider, endpoint in sorted({(b.provider, b.endpoint) for b in outstanding}):
        engine = _engine(
            ledger, provider, endpoint, client=client, api_key_env=api_key_env, clock=clock, registry=registry
        )
        try:
            at_endpoint = [b for b in outstanding if (b.provider, b.endpoint) == (provider, endpoint)]
            failures += await engine.collect_once(at_endpoint)
        finally:
            await engine.backend.aclose()
            await engine.aclose()  # its lease ends now, not when the loop does (`Agent.result` keeps its loop)
    if failures:
        raise failures[0]


async def cancel(
    ledger: LedgerStore,
    target: str,
    *,
    client: object | None = None,
    api_key_env: str | None = None,
    clock: Clock | None = None,
    registry: ProviderRegistry | None = None,
) -> BatchSummary:
    """Cancel the outstanding batch named by `target`: a batch id (lowtide's or the API's) or a request key."""
    batch = ledger.batch(target)
    if batch is None:
        request = ledger.request(target)
        if request is not None and request.batch_id:
            batch = ledger.batch(request.batch_id)
    if batch is None:
        raise ConfigurationError(f"No batch or request {target!r} in the ledger {ledger.location}.", field="target")
    if not batch.state.outstanding or batch.provider_batch_id is None:
        raise BatchNotOutstanding(
            f"Batch {batch.provider_batch_id or batch.id} is {batch.state.value}; only a batch the API is processing"
            " can be canceled.",
            field="target",
        )
    engine = _engine(
        ledger, batch.provider, batch.endpoint, client=client, api_key_env=api_key_env, clock=clock, registry=registry
    )
    try:
        remote = await _cancel_or_ended(engine, ledger, batch)
        # Off the event loop, as the caps' release below: on PostgreSQL these wait on row locks that a call or
        # poller of this very loop may hold (a program cancelling its own parked batch).
        await asyncio.to_thread(ledger.record_status, batch.id, phase=remote.phase.value, counts=None, ended_at=None)
        # Its requests' worst cases no longer held against their owners' caps; what the API still answers is spent.
        at = (clock or SystemClock()).now()
        keys = list(ledger.members(batch.id).values())
        await asyncio.to_thread(ledger.spending.cancel_all, batch.provider_batch_id, keys, at=at, host=host_id())
    finally:
        await engine.backend.aclose()
        await engine.aclose()
    updated = ledger.batch(batch.id)
    assert updated is not None
    return next(b for b in status(ledger).batches if b.id == updated.id)


async def _cancel_or_ended(engine: BatchEngine, ledger: LedgerStore, batch: BatchRecord) -> RemoteBatch:
    """The API's answer to a cancel of `batch`; a cancel it refuses because the batch ended since the ledger last
    looked (answered, expired, canceled by another host) is `BatchNotOutstanding`, the end recorded, not a failure."""
    assert batch.provider_batch_id is not None
    try:
        return await engine.backend.cancel(batch.provider_batch_id)
    except APIError:
        remote = await engine.backend.retrieve(batch.provider_batch_id)
        if remote.phase is not Phase.ENDED:
            raise
    counts = remote.counts.as_dict()
    await asyncio.to_thread(
        ledger.record_status, batch.id, phase=remote.phase.value, counts=counts, ended_at=remote.ended_at
    )
    raise BatchNotOutstanding(
        f"Batch {batch.provider_batch_id} ended ({remote.status}) before the cancel reached it: nothing to cancel;"
        " its answers are collected as any ended batch's.",
        field="target",
    )


def _engine(
    ledger: LedgerStore,
    provider: str,
    endpoint: str,
    *,
    client: object | None,
    api_key_env: str | None,
    clock: Clock | None,
    registry: ProviderRegistry | None,
) -> BatchEngine:
    """An engine for the batches of `provider` at `endpoint`, built through the registry as an actor's would be."""
    options = ProviderOptions(
        client=client,
        api_key=None,
        api_key_env=api_key_env,
        base_url=endpoint,
        clock=clock or SystemClock(),
        batch=BatchSettings(max_wait=1e-9, on_timeout=TimeoutPolicy.LEAVE),  # look once; never wait or cancel here
    )
    factory = (registry or default_registry()).resolve(provider, BatchProcessingMode.BATCH).factory
    backend = factory(options).batch_backend()
    if backend is None:
        raise ConfigurationError(
            f"Provider {provider!r} has no batch backend to reach its batches with.", field="ledger"
        )
    return BatchEngine(
        backend, ledger, endpoint=endpoint, settings=options.batch, clock=options.clock, owner=owner_id()
    )
