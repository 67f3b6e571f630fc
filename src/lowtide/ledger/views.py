"""`LedgerViews`: the read-only summaries a viewer of the ledger asks for (`lowtide dashboard`), each one bounded:
a run's progress counted in the store, batches a page at a time (those still out, waiting longest, first), spend and
answers over time in buckets, spend by actor, model or provider, failures grouped by error, one request's history.

A store offers them as `LedgerStore.views`. The SQLite store answers them in SQL (`sqlite/views.py`); `ScanViews`
answers them for any store from what the rest of `LedgerStore` offers (its rows as `export_rows` gives them), which
is what the memory store uses and what a store without queries of its own can use. Nothing here writes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, Protocol

from lowtide.json_types import JSONObject
from lowtide.ledger.records import COPIED, BatchRecord, BatchState, RequestRecord, RequestState
from lowtide.ledger.runs import RunRecord

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore

__all__ = [
    "FAILED_STATES",
    "OUTCOMES",
    "BatchLine",
    "Dimension",
    "FailureGroup",
    "LedgerViews",
    "RequestHistory",
    "ResultLine",
    "RunProgress",
    "ScanViews",
    "SpendLine",
    "TimePoint",
    "TotalsKey",
    "item_outcome",
    "plus",
    "totals_spend",
    "totals_timeline",
    "whole_minutes",
]

OUTCOMES: tuple[str, ...] = ("succeeded", "failed", "expired", "canceled", "not-run", "waiting")
"""Where a run's item stands, as a viewer counts it: final, not run, or still waiting on an answer."""
FAILED_STATES = (RequestState.FAILED.value, RequestState.EXPIRED.value, RequestState.CANCELED.value)
_OUTSTANDING = tuple(state.value for state in BatchState if state.outstanding)

Dimension = Literal["actor", "model", "provider"]
Stored = dict[str, Any]
"""A row as a store exports it (`COPIED`'s columns by name), its values as the store keeps them."""


def item_outcome(status: str | None, request_state: str | None) -> str:
    """An item's outcome (one of `OUTCOMES`): what the run decided, else its request's final state, else waiting."""
    if status:
        return status if status in OUTCOMES else "failed"
    if request_state is not None and RequestState(request_state).final:
        return request_state
    return "waiting"


@dataclass(frozen=True)
class RunProgress:
    run: RunRecord
    counts: dict[str, int]
    """Items by outcome, every one of `OUTCOMES` present."""
    spent_usd: Decimal
    live_usd: Decimal
    """What the run's answers would have cost at live prices."""
    worst_case_out_usd: Decimal
    """The budget check's worst case of the items still waiting."""


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
    failures: int
    cost_usd: Decimal
    live_cost_usd: Decimal


@dataclass(frozen=True)
class SpendLine:
    name: str
    answers: int
    cost_usd: Decimal
    live_cost_usd: Decimal


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


def _dec(text: object) -> Decimal:
    return Decimal(str(text)) if text not in (None, "") else Decimal(0)


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


class ScanViews:
    """`LedgerViews` for any store, from its rows (`export_rows`) and records: every answer reads whole tables, which
    suits a store in memory; a store on disk or a server answers in its own queries. `totals`, where the store keeps
    them (`TotalsKey`), answer the sums over every result (over time, by actor, model or provider) without a scan."""

    def __init__(
        self, store: LedgerStore, *, totals: Callable[[], Mapping[TotalsKey, TimePoint]] | None = None
    ) -> None:
        self.store = store
        self.totals = totals

    def _rows(self, table: str) -> Iterator[Stored]:
        columns = COPIED[table]
        for chunk in self.store.export_rows(table):
            for row in chunk:
                yield dict(zip(columns, row, strict=True))

    def run_progress(self, run_id: str) -> RunProgress | None:
        run = self.store.run_store.run(run_id)
        if run is None:
            return None
        counts = dict.fromkeys(OUTCOMES, 0)
        spent = live = worst = Decimal(0)
        keys: list[str] = []
        for item in self.store.run_store.items(run_id, with_jobs=False):
            state = item.request_state.value if item.request_state is not None else None
            outcome = item_outcome(item.status, state)
            counts[outcome] += 1
            spent += item.cost_usd or 0
            if outcome == "waiting":
                worst += item.worst_case_usd or 0
            keys.append(item.key)
        for record in self.store.requests_for(keys):
            live += record.live_cost_usd or 0
        return RunProgress(run, counts, spent, live, worst)

    def batch_page(self, *, limit: int, offset: int = 0) -> tuple[list[BatchLine], int]:
        batches = self.store.batches()
        batches.sort(key=lambda b: (not b.state.outstanding, b.intent_at if b.state.outstanding else -b.intent_at))
        page = batches[offset : offset + limit]
        wanted = {b.id for b in page}
        latest: dict[tuple[str, str], Stored] = {}
        for row in self._rows("results"):
            if row["batch_id"] in wanted:
                latest[(row["batch_id"], row["key"])] = row
        totals = {b: SpendLine(b, 0, Decimal(0), Decimal(0)) for b in wanted}
        for (batch_id, _), row in latest.items():
            if row["state"] != RequestState.PENDING.value:
                totals[batch_id] = _spent(totals[batch_id], row)
        return [
            BatchLine(b, totals[b.id].answers, totals[b.id].cost_usd, totals[b.id].live_cost_usd) for b in page
        ], len(batches)

    def _final_results(self) -> Iterator[Stored]:
        for row in self._rows("results"):
            if row["state"] != RequestState.PENDING.value:
                yield row

    def timeline(self, bucket_seconds: float, *, run_id: str | None = None) -> list[TimePoint]:
        if run_id is None and self.totals is not None and whole_minutes(bucket_seconds):
            return totals_timeline(self.totals().values(), bucket_seconds)
        keys = None
        if run_id is not None:
            keys = {row["key"] for row in self._rows("run_items") if row["run_id"] == run_id}
        buckets: dict[float, TimePoint] = {}
        for row in self._final_results():
            if keys is not None and row["key"] not in keys:
                continue
            at = (float(row["at"]) // bucket_seconds) * bucket_seconds
            point = TimePoint(
                at, 1, int(row["state"] in FAILED_STATES), _dec(row["cost_usd"]), _dec(row["live_cost_usd"])
            )
            found = buckets.get(at)
            buckets[at] = plus(found, point) if found is not None else point
        return [buckets[at] for at in sorted(buckets)]

    def spend_by(self, dimension: Dimension) -> list[SpendLine]:
        if self.totals is not None:
            providers = {b.id: b.provider for b in self.store.batches()} if dimension == "provider" else {}
            return totals_spend(self.totals().items(), dimension, providers)
        requests = {row["key"]: row for row in self._rows("requests")}
        providers = {b.id: b.provider for b in self.store.batches()}
        lines: dict[str, SpendLine] = {}
        for row in self._final_results():
            if dimension == "provider":
                name = providers.get(row["batch_id"], "live") if row["batch_id"] else "live"
            else:
                request = requests.get(row["key"])
                name = str(request[dimension]) if request is not None else "?"
            lines[name] = _spent(lines.get(name) or SpendLine(name, 0, Decimal(0), Decimal(0)), row)
        return sorted(lines.values(), key=lambda line: (-line.cost_usd, line.name))

    def failure_groups(self, *, limit: int = 50) -> list[FailureGroup]:
        groups: dict[tuple[str, str], tuple[int, str, str]] = {}
        for row in self._final_results():
            if row["state"] not in FAILED_STATES:
                continue
            error_class, error_type, message = error_group(row["error"], row["state"])
            count, key, said = groups.get((error_class, error_type), (0, row["key"], message))
            groups[(error_class, error_type)] = (count + 1, key, said)
        runs: dict[str, list[str]] = defaultdict(list)
        examples = {group[1] for group in groups.values()}
        for row in self._rows("run_items"):
            if row["key"] in examples and row["run_id"] not in runs[row["key"]]:
                runs[row["key"]].append(row["run_id"])
        found = [
            FailureGroup(error_class, error_type, count, key, message, tuple(runs[key]))
            for (error_class, error_type), (count, key, message) in groups.items()
        ]
        return sorted(found, key=lambda g: (-g.count, g.error_class, g.error_type))[:limit]

    def request_history(self, key_or_custom_id: str) -> RequestHistory | None:
        record = self.store.request(key_or_custom_id)
        if record is None:
            key = key_of(key_or_custom_id, self.store.identity())
            record = self.store.request(key) if key is not None else None
        if record is None:
            return None
        sent = [(row["batch_id"], row["custom_id"]) for row in self._rows("batch_members") if row["key"] == record.key]
        batches: list[tuple[BatchRecord, str, dict[str, str]]] = []
        for batch_id, custom_id in sent:
            batch = self.store.batch(batch_id)
            if batch is not None:
                batches.append((batch, custom_id, self.store.create_steps(batch_id)))
        results = [
            ResultLine(
                row["batch_id"],
                row["state"],
                json.loads(row["error"]) if row["error"] else None,
                _dec(row["cost_usd"]) if row["cost_usd"] is not None else None,
                float(row["at"]),
            )
            for row in self._rows("results")
            if row["key"] == record.key
        ]
        runs = [(row["run_id"], int(row["idx"])) for row in self._rows("run_items") if row["key"] == record.key]
        return RequestHistory(record, batches, results, runs)


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
    lines: dict[str, tuple[int, Decimal, Decimal]] = {}
    for (_, batch_id, actor, model), point in totals:
        if dimension == "provider":
            name = providers.get(batch_id, "live") if batch_id else "live"
        else:
            name = actor if dimension == "actor" else model
        n, cost, live = lines.get(name, (0, Decimal(0), Decimal(0)))
        lines[name] = (n + point.answers, cost + point.cost_usd, live + point.live_cost_usd)
    return spend_lines((name, n, cost, live) for name, (n, cost, live) in lines.items())


def plus(a: TimePoint, b: TimePoint) -> TimePoint:
    """Two buckets' counts and costs together, at `a`'s time."""
    return TimePoint(
        a.at, a.answers + b.answers, a.failures + b.failures, a.cost_usd + b.cost_usd, a.live_cost_usd + b.live_cost_usd
    )


def spend_lines(rows: Iterable[tuple[str, int, Decimal, Decimal]]) -> list[SpendLine]:
    """Lines of spend, the most spent first."""
    lines = [SpendLine(str(name), int(n), cost, live) for name, n, cost, live in rows]
    return sorted(lines, key=lambda line: (-line.cost_usd, line.name))


def _spent(line: SpendLine, row: Stored) -> SpendLine:
    return SpendLine(
        line.name,
        line.answers + 1,
        line.cost_usd + _dec(row["cost_usd"]),
        line.live_cost_usd + _dec(row["live_cost_usd"]),
    )
