"""`LedgerViews`: the read-only summaries a viewer of the ledger asks for (`lowtide dashboard`), each one bounded:
a run's progress counted in the store, batches a page at a time (those still out, waiting longest, first), spend and
answers over time in buckets, spend by actor, model or provider, failures grouped by error, one request's history.

A store offers them as `LedgerStore.views`. The SQLite and PostgreSQL stores answer them in SQL (`sqlite/views.py`,
`postgres/views.py`); `scan_views.ScanViews` answers them for any store from what the rest of `LedgerStore` offers
(its rows as `export_rows` gives them), which is what the memory store uses. Nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal, Protocol

from lowtide.core.json_types import JSONObject
from lowtide.ledger.records import BatchRecord, RequestRecord, RequestState
from lowtide.ledger.runs import RunRecord

__all__ = [
    "FAILED_STATES",
    "OUTCOMES",
    "UNFINISHED",
    "BatchLine",
    "Dimension",
    "FailureGroup",
    "LedgerViews",
    "RequestHistory",
    "ResultLine",
    "RunProgress",
    "SpendLine",
    "TimePoint",
    "TotalsKey",
    "item_outcome",
    "plus",
    "totals_spend",
    "totals_timeline",
    "whole_minutes",
]

OUTCOMES: tuple[str, ...] = ("succeeded", "failed", "expired", "canceled", "not-run", "pending", "waiting")
"""Where a run's item stands, as a viewer counts it and `lowtide status` does: final, not run, `pending` (not in a
batch the API has: unsent, or its batch's create still in flight) or `waiting` (in a batch the API has, its answer
not collected yet)."""
UNFINISHED: tuple[str, ...] = ("pending", "waiting")
"""The outcomes of items still out: the run is in progress while it has any, and their worst cases are still out."""
FAILED_STATES = (RequestState.FAILED.value, RequestState.EXPIRED.value, RequestState.CANCELED.value)

Dimension = Literal["actor", "model", "provider"]


def item_outcome(status: str | None, request_state: str | None) -> str:
    """An item's outcome (one of `OUTCOMES`): what the run decided, else its request's final state, else `waiting` in
    a batch the API has, else `pending` (as `lowtide status` counts it: `bulk.recorded.resume.item_status`)."""
    if status:
        return status if status in OUTCOMES else "failed"
    if request_state == RequestState.WAITING.value:
        return "waiting"
    if request_state is not None and RequestState(request_state).final:
        return request_state
    return "pending"


@dataclass(frozen=True)
class RunProgress:
    run: RunRecord
    counts: dict[str, int]
    """Items by outcome, every one of `OUTCOMES` present."""
    spent_usd: Decimal
    live_usd: Decimal
    """What the run's answers would have cost at live prices."""
    worst_case_out_usd: Decimal
    """The budget check's worst case of the items still out (`UNFINISHED`: pending and waiting)."""
    unpriced_out: int = 0
    """Items still out with no worst case stored (a run without a cost limit prices none; an item not yet claimed
    is priced as it is sent): `worst_case_out_usd` leaves them out, and says so through this count."""


@dataclass(frozen=True)
class BatchLine:
    batch: BatchRecord
    results: int
    cost_usd: Decimal
    live_cost_usd: Decimal


@dataclass(frozen=True)
class TimePoint:
    at: float
    """The start of the bucket (seconds since the epoch)."""
    answers: int
    """Final results, failures among them."""
    failures: int
    """Those of `answers` failed, expired or canceled."""
    cost_usd: Decimal
    live_cost_usd: Decimal


@dataclass(frozen=True)
class SpendLine:
    name: str
    answers: int
    """Final results, failures among them (as `TimePoint.answers`)."""
    cost_usd: Decimal
    live_cost_usd: Decimal
    failures: int = 0
    """Those of `answers` failed, expired or canceled."""


@dataclass(frozen=True)
class FailureGroup:
    error_class: str
    error_type: str
    """The API's error type where it gave one (`invalid_request_error`), else the state (`expired`)."""
    count: int
    example_key: str
    example_message: str
    runs: tuple[str, ...]
    """The runs that hold the example (the command that retries them names one)."""


@dataclass(frozen=True)
class ResultLine:
    batch_id: str | None
    state: str
    error: JSONObject | None
    cost_usd: Decimal | None
    at: float


@dataclass(frozen=True)
class RequestHistory:
    record: RequestRecord
    batches: list[tuple[BatchRecord, str, dict[str, str]]]
    """Every batch it was sent in, oldest first: the batch, the custom id it was sent under, its create's steps."""
    results: list[ResultLine]
    """Every result stored for it, in arrival order (a retried attempt's, too)."""
    runs: list[tuple[str, int]]
    """(run id, item index) of the run items pointing at it."""


class LedgerViews(Protocol):
    """What a viewer reads of a ledger, each answer bounded by a page or by buckets; never a write."""

    def run_progress(self, run_id: str) -> RunProgress | None: ...

    def batch_page(self, *, limit: int, offset: int = 0) -> tuple[list[BatchLine], int]:
        """A page of batches, those still out first (waiting longest first), then the rest newest first; and how
        many batches there are."""
        ...

    def timeline(self, bucket_seconds: float, *, run_id: str | None = None) -> list[TimePoint]:
        """Final results (of the run's items, given `run_id`) counted and priced per bucket of time, oldest first."""
        ...

    def spend_by(self, dimension: Dimension) -> list[SpendLine]:
        """Final results counted and priced by actor, model or provider (`live` for a live answer), most spent first."""
        ...

    def failure_groups(self, *, limit: int = 50) -> list[FailureGroup]:
        """Failed, expired and canceled results grouped by error class and type, the largest groups first."""
        ...

    def request_history(self, key_or_custom_id: str) -> RequestHistory | None:
        """One request's record and history, by its key or by the custom id it was sent under."""
        ...


def whole_minutes(bucket_seconds: float) -> bool:
    """Whether buckets of `bucket_seconds` are made of whole minutes, as the stores' totals of results are kept."""
    return bucket_seconds >= 60 and bucket_seconds % 60 == 0


def error_group(error_json: str | None, state: str) -> tuple[str, str, str]:
    """(class, type, message) of a stored error."""
    data: JSONObject = json.loads(error_json) if error_json else {}
    kind = str(data.get("error_type") or data.get("kind") or state)
    return str(data.get("class") or state), kind, str(data.get("api_message") or data.get("message") or "")


def key_of(custom_id: str, identity: str) -> str | None:
    """The key a custom id was made from (`<key>_<identity>`), if it carries this ledger's identity."""
    suffix = f"_{identity}"
    return custom_id[: -len(suffix)] if custom_id.endswith(suffix) else None


TotalsKey = tuple[float, str, str, str]
"""(minute, batch id or '' for a live answer, actor, model): what a store's totals of final results are kept by
(`result_totals` in the SQLite and PostgreSQL schemas), each total a `TimePoint` at its minute."""


def totals_timeline(totals: Iterable[TimePoint], bucket_seconds: float) -> list[TimePoint]:
    """Totals kept per minute, in buckets of `bucket_seconds` (whole minutes), oldest first."""
    buckets: dict[float, TimePoint] = {}
    for point in totals:
        at = (point.at // bucket_seconds) * bucket_seconds
        found = buckets.get(at)
        buckets[at] = plus(found, point) if found is not None else replace(point, at=at)
    return [buckets[at] for at in sorted(buckets)]


def totals_spend(
    totals: Iterable[tuple[TotalsKey, TimePoint]], dimension: Dimension, providers: Mapping[str, str]
) -> list[SpendLine]:
    """Totals by actor, model or provider (`providers`: batch id -> provider; a live answer's is `live`)."""
    lines: dict[str, tuple[int, Decimal, Decimal, int]] = {}
    for (_, batch_id, actor, model), point in totals:
        if dimension == "provider":
            name = providers.get(batch_id, "live") if batch_id else "live"
        else:
            name = actor if dimension == "actor" else model
        n, cost, live, failed = lines.get(name, (0, Decimal(0), Decimal(0), 0))
        lines[name] = (n + point.answers, cost + point.cost_usd, live + point.live_cost_usd, failed + point.failures)
    return spend_lines((name, *line) for name, line in lines.items())


def plus(a: TimePoint, b: TimePoint) -> TimePoint:
    """Two buckets' counts and costs together, at `a`'s time."""
    return TimePoint(
        a.at, a.answers + b.answers, a.failures + b.failures, a.cost_usd + b.cost_usd, a.live_cost_usd + b.live_cost_usd
    )


def spend_lines(rows: Iterable[tuple[str, int, Decimal, Decimal, int]]) -> list[SpendLine]:
    """Lines of spend (name, answers, cost, live cost, failures), the most spent first."""
    lines = [SpendLine(str(name), int(n), cost, live, int(failed)) for name, n, cost, live, failed in rows]
    return sorted(lines, key=lambda line: (-line.cost_usd, line.name))
