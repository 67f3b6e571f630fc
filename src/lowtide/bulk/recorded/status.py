"""Where a run stands, from the ledger alone: no API call, no event loop (`lowtide status RUN`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from lowtide.bulk.outputs.results import ItemStatus
from lowtide.bulk.recorded.resume import item_status
from lowtide.core.run_reports import usd
from lowtide.errors import ConfigurationError
from lowtide.ledger.roles import Runs

__all__ = ["RunBatch", "RunStatus", "run_status"]


@dataclass(frozen=True)
class RunBatch:
    id: str
    batch_id: str | None
    state: str
    items: int


@dataclass
class RunStatus:
    run_id: str
    actor: str
    items: int
    counts: dict[str, int]
    batches: list[RunBatch]
    cost_usd: Decimal | None
    """What its answers cost; None (unknown, never $0) when one of them has no known price."""
    live_cost_usd: Decimal | None
    reasons: dict[str, int] = field(default_factory=dict[str, int])
    created_at: float = 0.0
    options: dict[str, Any] = field(default_factory=dict[str, Any])
    waiting: dict[str, int] = field(default_factory=dict[str, int])
    """Items waiting on a batch the API has, by that batch's id: their answers are to be collected."""

    @property
    def live(self) -> bool:
        """Whether its items are answered by live calls (`mode="live"`)."""
        return self.options.get("mode") == "live"

    @property
    def finished(self) -> bool:
        return self.counts.get(ItemStatus.PENDING.value, 0) == 0 and self.counts.get(ItemStatus.WAITING.value, 0) == 0

    def lines(self) -> list[str]:
        counts = ", ".join(f"{n} {status}" for status, n in self.counts.items() if n)
        money = f"{usd(self.cost_usd)} at batch prices (live: {usd(self.live_cost_usd)})"
        if self.live:
            money = f"live calls; {usd(self.cost_usd)} at live prices"
        out = [
            f"run {self.run_id} (actor {self.actor}): {self.items} item(s): {counts}",
            f"  {len(self.batches)} batch(es); {money}",
        ]
        out.extend(f"  {b.batch_id or b.id:<40} {b.state:<17} {b.items:>6} item(s)" for b in self.batches)
        out.extend(f"  {n} item(s): {reason}" for reason, n in sorted(self.reasons.items()))
        out.extend(
            f"  {n} item(s) wait on batch {batch}, their answers not collected yet: `lowtide collect` fetches them,"
            f" and `lowtide retry {self.run_id}` (or the run's command again) writes them to its results"
            for batch, n in sorted(self.waiting.items())
        )
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "actor": self.actor,
            "items": self.items,
            "counts": self.counts,
            "batches": [b.__dict__ for b in self.batches],
            "cost_usd": self.cost_usd,
            "live_cost_usd": self.live_cost_usd,
            "reasons": self.reasons,
            "finished": self.finished,
            "waiting": self.waiting,
            "mode": "live" if self.live else "batch",
            "created_at": self.created_at,
        }


def run_status(ledger: Runs, run_id: str) -> RunStatus:
    store = ledger.run_store
    record = store.run(run_id)
    if record is None:
        known = ", ".join(r.id for r in store.runs()[-5:]) or "none"
        raise ConfigurationError(
            f"The ledger {ledger.location} has no run {run_id!r} (latest runs: {known}).", field="run_id"
        )
    counts = {status.value: 0 for status in ItemStatus}
    reasons: dict[str, int] = {}
    waiting: dict[str, int] = {}
    cost = Decimal(0)
    batches = [RunBatch(*batch) for batch in store.batches(run_id)]
    api_ids = {batch.id: batch.batch_id or batch.id for batch in batches}
    unpriced = 0
    for row in store.items(run_id, with_jobs=False):
        status = item_status(row)
        counts[status.value] += 1
        cost += row.cost_usd or Decimal(0)
        unpriced += status is ItemStatus.SUCCEEDED and row.cost_usd is None
        if row.reason:
            reasons[row.reason] = reasons.get(row.reason, 0) + 1
        if status is ItemStatus.WAITING and row.batch_id is not None:
            batch = api_ids.get(row.batch_id, row.batch_id)
            waiting[batch] = waiting.get(batch, 0) + 1
    return RunStatus(
        run_id=run_id,
        actor=record.actor,
        items=record.item_count,
        counts=counts,
        batches=batches,
        cost_usd=None if unpriced else cost,
        live_cost_usd=None if unpriced else store.live_cost(run_id),
        reasons=reasons,
        created_at=record.created_at,
        options=record.options,
        waiting=waiting,
    )
