"""What each page of `lowtide dashboard` shows, as JSON, read from a ledger's `views` and records (never written):
the runs with their progress, ETA, spend and worst case; a page of batches; money over time and by actor, model and
provider; failures grouped; one request's history. What a view counted is kept and handed out again (`Cached`): a
ledger of a million requests is counted again in the background a few times a minute, however many browsers poll
it, and a page is answered at once with what was last counted (each run says when that was: `counted_at`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import TypeVar, cast

from lowtide.bulk.progress.eta import BatchTimes, batch_run_eta, live_run_eta
from lowtide.dashboard.cache import NOT_YET, Cached, NotYet
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import BatchRecord
from lowtide.ledger.runs import RunRecord
from lowtide.ledger.views import UNFINISHED, Dimension, RequestHistory, RunProgress, TimePoint, plus

__all__ = ["BATCH_WINDOW_SECONDS", "DashboardData", "Json", "money", "prompt_text"]

Json = dict[str, object]
T = TypeVar("T")

BATCH_WINDOW_SECONDS = 24 * 3600.0
"""How long a provider gives a batch before it expires its unanswered requests."""
_MAX_POINTS = 60
_RUNS_SHOWN = 50


def money(value: Decimal) -> str:
    """Dollars as a user reads them: cents for sums over a dollar; below, at least four decimals and as many more as
    two significant digits need, so that small batches' costs differ ($0.000030, $0.000045), never all $0.0000."""
    if abs(value) >= 1:
        return f"${value:,.2f}"
    if not value:
        return "$0"
    decimals = max(4, 1 - value.adjusted())  # adjusted(): the exponent of its first digit (-5 for 0.00003)
    return f"${value:.{decimals}f}"


class DashboardData:
    """The pages' JSON over one ledger. `counting`: the same ledger opened again, for the counts that read every item
    of a run (its progress, chart and batches: made in the background while pages are read, since a SQLite connection
    answers one query at a time and a count of a million items must not hold up a page); by default `store` itself.
    The money (kept sums) and the failures (one pass over failed results) are read on `store`, never behind a run's
    count. `patience`: how long the Runs page waits in all for counts being made before showing what it has (a run
    still being counted as such, its chart or ETA as not yet drawn)."""

    def __init__(
        self,
        store: LedgerStore,
        *,
        counting: LedgerStore | None = None,
        clock: Callable[[], float] = time.time,
        ttl: float = 1.0,
        patience: float = 0.5,
    ) -> None:
        self.store = store
        self.counting = counting or store
        self.clock = clock
        self.patience = patience
        self.cache = Cached(ttl, clock=clock)

    def warm(self) -> None:
        """Count what the pages show first (every run's progress, the money, the failures), so that the first
        browser to ask is answered at once: called in the background as the dashboard starts (a run too large to
        count within the page's patience goes on being counted in the cache's own thread)."""
        self.runs()
        self.money()
        self.failures()

    # runs

    def runs(self) -> Json:
        now = self.clock()
        deadline = time.monotonic() + self.patience
        records = self.store.run_store.runs()[-_RUNS_SHOWN:]
        shown: list[Json] = []
        for record in reversed(records):
            # A run with nothing waiting changes only when retried, which changes its `updated_at`.
            progress = self._within(
                f"run:{record.id}",
                lambda rid=record.id: self.counting.views.run_progress(rid),
                deadline,
                version=record.updated_at,
                final=lambda found: found is not None and not _out(found),
            )
            if progress is NOT_YET:
                shown.append(_counting(record))
            elif progress is not None:
                counted_at = self.cache.computed_at(f"run:{record.id}") or now
                shown.append(self._run(progress, now, counted_at, deadline))
        return {"now": now, "location": self.store.location, "runs": shown}

    def _within(
        self,
        name: str,
        compute: Callable[[], T],
        deadline: float,
        *,
        version: Hashable = None,
        final: Callable[[T], bool] | None = None,
    ) -> T | NotYet:
        """`name` as counted in the background (`Cached.within`), waited for until `deadline` (`time.monotonic`)."""
        patience = max(0.0, deadline - time.monotonic())
        return self.cache.within(name, compute, patience, version=version, final=final)

    def _run(self, progress: RunProgress, now: float, counted_at: float, deadline: float) -> Json:
        run = progress.run
        counts = progress.counts
        done = sum(n for outcome, n in counts.items() if outcome != "waiting")
        limit = run.options.get("max_cost_usd")
        counted = self._within(
            f"timeline:{run.id}",
            lambda: self._timeline(self.counting, run_id=run.id),
            deadline,
            version=run.updated_at,
            final=lambda _: not _out(progress),
        )
        timeline = None if counted is NOT_YET else counted
        return {
            "id": run.id,
            "actor": run.actor,
            "mode": run.options.get("mode") or "batch",
            "items": run.item_count,
            "counts": counts,
            "done": done,
            "state": "in progress" if _out(progress) else "finished",
            "created_at": run.created_at,
            "updated_at": run.updated_at,
            "counted_at": counted_at,
            "spent": money(progress.spent_usd),
            "spent_usd": float(progress.spent_usd),
            "saved": money(progress.live_usd - progress.spent_usd),
            "worst_case_out": money(progress.worst_case_out_usd),
            "unpriced_out": progress.unpriced_out,
            "cost_limit": money(Decimal(str(limit))) if limit is not None else None,
            "eta_seconds": self._eta(progress, timeline, now, deadline) if _out(progress) else None,
            "timeline": timeline,
            "retry": f"lowtide retry {run.id}" if counts["failed"] or counts["expired"] else None,
        }

    def _eta(self, progress: RunProgress, timeline: list[Json] | None, now: float, deadline: float) -> float | None:
        """When the run's last waiting item should be answered (`eta`): a batch run at its batches' pace, counting
        the batches its unsent items will take; a live run at the rate of its answers."""
        run = progress.run
        waiting = _out(progress)
        if run.options.get("mode") == "live":
            if timeline is None:
                return None
            # A failure ends an item as surely as an answer: both set the run's pace.
            answered = sum(int(cast("int", p["answers"])) + int(cast("int", p["failures"])) for p in timeline)
            since = float(cast("float", timeline[0]["at"])) if timeline else None
            return live_run_eta(now, answered_since=since, answered=answered, waiting=waiting)
        batches = self._within(f"run-batches:{run.id}", lambda: self.counting.run_store.batches(run.id), deadline)
        if batches is NOT_YET:  # a run of a million items: its batches are found through its items
            return None
        times: list[BatchTimes] = []
        for batch_id, _, _, items in batches:
            record = self.store.batch(batch_id)
            if record is not None:
                sent = record.submitted_at if record.submitted_at is not None else record.intent_at
                times.append(BatchTimes(sent, record.ended_at, record.state.outstanding, items))
        return batch_run_eta(
            now,
            times,
            waiting=waiting,
            items_per_batch=_positive(run.options.get("items_per_batch")),
            parallel=_positive(run.options.get("max_parallel_batches")),
        )

    # batches

    def batches(self, *, page: int, per_page: int = 50) -> Json:
        now = self.clock()
        lines, total = self.store.views.batch_page(limit=per_page, offset=page * per_page)
        shown: list[Json] = []
        for line in lines:
            batch = line.batch
            shown.append(
                {
                    **_batch(batch),
                    "age_seconds": now - batch.intent_at,
                    "ends_in_seconds": (
                        max(0.0, (batch.submitted_at or batch.intent_at) + BATCH_WINDOW_SECONDS - now)
                        if batch.state.outstanding
                        else None
                    ),
                    "results": line.results,
                    "cost": money(line.cost_usd),
                    "live_cost": money(line.live_cost_usd),
                    "saved": money(line.live_cost_usd - line.cost_usd),
                }
            )
        return {"now": now, "page": page, "per_page": per_page, "total": total, "batches": shown}

    # money

    def money(self) -> Json:
        # Read from kept sums (a few hundred rows at a million results): on the pages' own connection, never behind
        # a run's count on the counting one.
        views = self.store.views
        timeline = self.cache.get("timeline", lambda: self._timeline(self.store))
        dimensions: tuple[Dimension, ...] = ("actor", "model", "provider")
        by = {dim: self.cache.get(f"by:{dim}", lambda d=dim: views.spend_by(d)) for dim in dimensions}
        spent = sum((Decimal(str(p["cost_usd"])) for p in timeline), Decimal(0))
        live = sum((Decimal(str(p["live_cost_usd"])) for p in timeline), Decimal(0))
        return {
            "now": self.clock(),
            "spent": money(spent),
            "live": money(live),
            "saved": money(live - spent),
            "timeline": timeline,
            "by": {
                dim: [
                    {
                        "name": line.name,
                        "answers": line.answers - line.failures,
                        "failures": line.failures,
                        "cost": money(line.cost_usd),
                        "live_cost": money(line.live_cost_usd),
                        "saved": money(line.live_cost_usd - line.cost_usd),
                    }
                    for line in lines
                ]
                for dim, lines in by.items()
            },
        }

    def _timeline(self, store: LedgerStore, *, run_id: str | None = None) -> list[Json]:
        points = store.views.timeline(60.0, run_id=run_id)
        return [_point(p) for p in _coarser(points)]

    # failures

    def failures(self) -> Json:
        # One pass over the failed results (bounded by the failures, not the ledger): on the pages' connection too.
        groups = self.cache.get("failures", lambda: self.store.views.failure_groups(limit=50))
        return {
            "now": self.clock(),
            "groups": [
                {
                    "class": g.error_class,
                    "type": g.error_type,
                    "count": g.count,
                    "example_key": g.example_key,
                    "example_message": g.example_message,
                    "runs": list(g.runs),
                    "retry": [f"lowtide retry {run}" for run in g.runs],
                }
                for g in groups
            ],
        }

    # one request

    def request(self, key_or_custom_id: str) -> Json | None:
        history = self.store.views.request_history(key_or_custom_id)
        return _history(history) if history is not None else None


def _counting(run: RunRecord) -> Json:
    """A run whose first count is still being made: what its record says, and that it is being counted."""
    return {
        "id": run.id,
        "actor": run.actor,
        "mode": run.options.get("mode") or "batch",
        "items": run.item_count,
        "state": "counting",
        "created_at": run.created_at,
        "updated_at": run.updated_at,
    }


def _out(progress: RunProgress) -> int:
    """The run's items still out (`UNFINISHED`: pending and waiting): it is in progress while it has any."""
    return sum(progress.counts[outcome] for outcome in UNFINISHED)


def _positive(value: object) -> int | None:
    """A run option that counts something (`items_per_batch`, `max_parallel_batches`), when it is one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _batch(batch: BatchRecord) -> Json:
    return {
        "id": batch.id,
        "provider": batch.provider,
        "provider_batch_id": batch.provider_batch_id,
        "state": batch.state.value,
        "phase": batch.phase,
        "requests": batch.request_count,
        "counts": batch.counts or {},
        "intent_at": batch.intent_at,
        "submitted_at": batch.submitted_at,
        "ended_at": batch.ended_at,
        "collected_at": batch.collected_at,
        "note": batch.note,
    }


def _history(history: RequestHistory) -> Json:
    record = history.record
    return {
        "key": record.key,
        "custom_id": record.custom_id,
        "actor": record.actor,
        "model": record.model,
        "state": record.state.value,
        "attempts": record.attempts,
        "max_attempts": record.max_attempts,
        "cost": money(record.cost_usd) if record.cost_usd is not None else None,
        "live_cost": money(record.live_cost_usd) if record.live_cost_usd is not None else None,
        "prompt": prompt_text(record.params),
        "answer": _answer_text(record.response),
        "error": record.error,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "owner": record.owner,
        "batches": [
            {**_batch(batch), "sent_as": custom_id, "create_steps": steps}
            for batch, custom_id, steps in history.batches
        ],
        "results": [
            {
                "batch_id": r.batch_id,
                "state": r.state,
                "error": r.error,
                "cost": money(r.cost_usd) if r.cost_usd is not None else None,
                "at": r.at,
            }
            for r in history.results
        ],
        "runs": [{"run": run, "index": index} for run, index in history.runs],
    }


_CREDENTIAL = re.compile(r"(api[-_]?key|authori[sz]ation|secret|password|token|credential)", re.IGNORECASE)
"""Names of fields that may hold a credential (`x-api-key`, `Authorization`, `aws_secret_access_key`): a token count
such as `max_tokens` is a number, and only a field holding text or more is masked."""


def prompt_text(params: Mapping[str, object]) -> str:
    """What a request's page shows of what was sent: the provider's request body as stored, as JSON, every field
    whose name says it holds a credential masked wherever it sits (a key must never reach a page), at most 8000
    characters."""
    import json

    return json.dumps(_masked(params), indent=1, default=str)[:8000]


def _masked(value: object) -> object:
    if isinstance(value, Mapping):
        fields = cast("Mapping[object, object]", value)
        return {
            str(name): "[hidden]"
            if _CREDENTIAL.search(str(name)) and not isinstance(inner, int | float)
            else _masked(inner)
            for name, inner in fields.items()
        }
    if isinstance(value, list):
        return [_masked(inner) for inner in cast("list[object]", value)]
    return value


def _answer_text(response: Mapping[str, object] | None) -> str | None:
    """The answer's text, as a person reads it (the stored response's `text`, else its JSON)."""
    if response is None:
        return None
    text = response.get("text")
    if isinstance(text, str):
        return text
    import json

    return json.dumps(response, indent=1, default=str)[:4000]


def _coarser(points: list[TimePoint]) -> list[TimePoint]:
    """`points` (minutes, some missing) in buckets wide enough that there are at most `_MAX_POINTS` of them, every
    bucket from the first to the last present (an empty one as zero): a line drawn through them falls to zero where
    nothing was answered, instead of joining two busy minutes hours apart."""
    if not points:
        return points
    span = points[-1].at - points[0].at
    width = 60.0
    while span / width >= _MAX_POINTS:
        width *= 2
    merged: dict[float, TimePoint] = {}
    for p in points:
        at = (p.at // width) * width
        found = merged.get(at)
        merged[at] = plus(found, p) if found is not None else replace(p, at=at)
    first, last = min(merged), max(merged)
    steps = round((last - first) / width)
    return [
        merged.get(first + i * width) or TimePoint(first + i * width, 0, 0, Decimal(0), Decimal(0))
        for i in range(steps + 1)
    ]


def _point(p: TimePoint) -> Json:
    """A bucket as the charts draw it. `answers` counts the results that answered (never a failure: a batch of 120
    with 15 failed reads 105 answers and 15 failures), `failures` those failed, expired or canceled."""
    return {
        "at": p.at,
        "answers": p.answers - p.failures,
        "failures": p.failures,
        "cost_usd": float(p.cost_usd),
        "live_cost_usd": float(p.live_cost_usd),
    }
