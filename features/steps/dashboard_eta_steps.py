"""Steps of `dashboard_eta.feature`: `batch_run_eta` and `live_run_eta` over batches given as a table (seconds from
now), and the Runs page of the dashboard's test ledger read at the ledger's own time (by `dashboard_cache_steps`)."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Protocol

from _dashboard import shown_run
from _stores import open_store
from dashboard_ledgers import answer_waiting, build
from step_context import Context as StepContext
from step_context import given, then

from lowtide.bulk.progress.eta import BatchTimes, batch_run_eta, live_run_eta
from lowtide.dashboard.data import DashboardData, Json, money
from lowtide.ledger.interface import LedgerStore

NOW = 1_700_000_000.0


class Context(StepContext, Protocol):
    eta_options: tuple[int | None, int | None, int]
    eta: float | None
    dashboard: DashboardData
    dashboard_store: LedgerStore
    runs_page: Json


@given("a run that sends {size:d} items a batch, {parallel:d} at once, with {waiting:d} items waiting")
def step_run(context: Context, size: int, parallel: int, waiting: int) -> None:
    context.eta_options = (size, parallel, waiting)


@given("a run that sends at most {parallel:d} batches at once, with {waiting:d} items waiting")
def step_run_no_size(context: Context, parallel: int, waiting: int) -> None:
    context.eta_options = (None, parallel, waiting)


@given("its batches:")
def step_batches(context: Context) -> None:
    assert context.table is not None
    batches: list[BatchTimes] = []
    for row in context.table:
        ended = row["ended"].strip()
        out = row["out"].strip() == "yes" if "out" in row.headings else not ended
        sent = NOW + float(row["sent"])
        batches.append(BatchTimes(sent, NOW + float(ended) if ended else None, out, int(row["items"])))
    size, parallel, waiting = context.eta_options
    context.eta = batch_run_eta(NOW, batches, waiting=waiting, items_per_batch=size, parallel=parallel)


@given("a live run whose {answered:d} answers came over the last {seconds:d} seconds, with {waiting:d} items waiting")
def step_live(context: Context, answered: int, seconds: int, waiting: int) -> None:
    context.eta = live_run_eta(NOW, answered_since=NOW - seconds, answered=answered, waiting=waiting)


@then("its ETA is {seconds:g} seconds")
def step_eta(context: Context, seconds: float) -> None:
    assert context.eta is not None, "no ETA"
    assert abs(context.eta - seconds) < 1e-6, f"ETA {context.eta} s"


@then("it has no ETA")
def step_no_eta(context: Context) -> None:
    assert context.eta is None, f"ETA {context.eta} s"


@given("the dashboard's ledger in memory, read by a dashboard at its own time")
def step_dashboard(context: Context) -> None:
    context.dashboard_store = open_store(context, "memory")
    build(context.dashboard_store, now=NOW)
    context.dashboard = DashboardData(context.dashboard_store, clock=lambda: NOW)


@given("the run in progress's waiting batch is answered {minutes:d} minutes later")
def step_answered_later(context: Context, minutes: int) -> None:
    # The first batch was answered an hour before NOW; this one, `minutes` after it.
    answer_waiting(context.dashboard_store, now=NOW - 3600 + minutes * 60)


def _run(context: Context, run_id: str) -> Json:
    return shown_run(context.runs_page, run_id)


@then('the run "{run_id}" shows an ETA of {seconds:d} seconds')
def step_run_eta(context: Context, run_id: str, seconds: int) -> None:
    eta = _run(context, run_id)["eta_seconds"]
    assert isinstance(eta, float), eta
    assert abs(eta - seconds) < 1e-6, f"ETA {eta} s"


@then('the run "{run_id}" shows no ETA')
def step_run_no_eta(context: Context, run_id: str) -> None:
    run = _run(context, run_id)
    assert run["eta_seconds"] is None, run["eta_seconds"]


def _timeline(context: Context, run_id: str) -> list[dict[str, object]]:
    points = _run(context, run_id)["timeline"]
    assert isinstance(points, list)
    return [p for p in points if isinstance(p, dict)]


@then('the chart of "{run_id}" has {count:d} intervals of a minute, {empty:d} of them empty')
def step_intervals(context: Context, run_id: str, count: int, empty: int) -> None:
    points = _timeline(context, run_id)
    ats = [float(str(p["at"])) for p in points]
    assert len(points) == count, f"{len(points)} intervals"
    assert all(b - a == 60 for a, b in itertools.pairwise(ats)), ats
    assert sum(1 for p in points if p["answers"] == 0) == empty, points


@then('the chart of "{run_id}" counts {answers:d} answers in all')
def step_answers(context: Context, run_id: str, answers: int) -> None:
    assert sum(int(str(p["answers"])) for p in _timeline(context, run_id)) == answers


@then('the dashboard shows ${dollars} as "{shown}"')
def step_money_shown(context: StepContext, dollars: str, shown: str) -> None:
    assert money(Decimal(dollars)) == shown, money(Decimal(dollars))
