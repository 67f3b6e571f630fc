"""`ScanViews`: `LedgerViews` for any store, from what the rest of `LedgerStore` offers (its rows as `export_rows`
gives them, its records): every answer reads whole tables, which suits a store in memory. Its own module so that the
views' types (`views.py`), which the store interface names, need nothing of that interface. Nothing here writes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import COPIED, BatchRecord, RequestState
from lowtide.ledger.views import (
    FAILED_STATES,
    OUTCOMES,
    UNFINISHED,
    BatchLine,
    Dimension,
    FailureGroup,
    RequestHistory,
    ResultLine,
    RunProgress,
    SpendLine,
    TimePoint,
    TotalsKey,
    error_group,
    item_outcome,
    key_of,
    plus,
    totals_spend,
    totals_timeline,
    whole_minutes,
)

__all__ = ["ScanViews"]

Stored = dict[str, Any]
"""A row as a store exports it (`COPIED`'s columns by name), its values as the store keeps them."""


def _dec(text: object) -> Decimal:
    return Decimal(str(text)) if text not in (None, "") else Decimal(0)


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
        unpriced = 0
        keys: list[str] = []
        for item in self.store.run_store.items(run_id, with_jobs=False):
            state = item.request_state.value if item.request_state is not None else None
            outcome = item_outcome(item.status, state)
            counts[outcome] += 1
            spent += item.cost_usd or 0
            if outcome in UNFINISHED:
                worst += item.worst_case_usd or 0
                unpriced += item.worst_case_usd is None
            keys.append(item.key)
        for record in self.store.requests_for(keys):
            live += record.live_cost_usd or 0
        return RunProgress(run, counts, spent, live, worst, unpriced)

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
        """Every final result, a batch's counted once (the first stored: one stored again after a crash is the same
        answer)."""
        seen: set[tuple[object, object]] = set()
        for row in self._rows("results"):
            if row["state"] == RequestState.PENDING.value:
                continue
            if row["batch_id"]:
                where = (row["batch_id"], row["key"])
                if where in seen:
                    continue
                seen.add(where)
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


def _spent(line: SpendLine, row: Stored) -> SpendLine:
    return SpendLine(
        line.name,
        line.answers + 1,
        line.cost_usd + _dec(row["cost_usd"]),
        line.live_cost_usd + _dec(row["live_cost_usd"]),
        line.failures + (row["state"] in FAILED_STATES),
    )
