"""Steps of `ledger_views.feature`: the dashboard's views (`LedgerStore.views`) of one ledger, in each store."""

from __future__ import annotations

from decimal import Decimal
from typing import Protocol

from _stores import open_store
from dashboard_ledgers import PARKED_KEY, answer_waiting, build
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.interface import LedgerStore

NOW = 1_700_000_000.0


class Context(StepContext, Protocol):
    views_store: LedgerStore


@given("a {kind:w} ledger store holding the dashboard's ledger")
def step_store(context: Context, kind: str) -> None:
    context.views_store = open_store(context, kind)
    build(context.views_store, now=NOW)


@when("the run in progress's last batch is answered")
def step_answer(context: Context) -> None:
    answer_waiting(context.views_store, now=NOW + 60)


@then(
    'the run "{run_id}" counts {succeeded:d} succeeded and {waiting:d} waiting, spent ${spent}, worst case out ${worst}'
)
def step_run(context: Context, run_id: str, succeeded: int, waiting: int, spent: str, worst: str) -> None:
    progress = context.views_store.views.run_progress(run_id)
    assert progress is not None, f"no run {run_id}"
    assert progress.counts["succeeded"] == succeeded, progress.counts
    assert progress.counts["waiting"] == waiting, progress.counts
    assert progress.spent_usd == Decimal(spent), progress.spent_usd
    assert progress.worst_case_out_usd == Decimal(worst), progress.worst_case_out_usd


@then('the run "{run_id}" counts {succeeded:d} succeeded, {failed:d} failed and {expired:d} expired')
def step_finished(context: Context, run_id: str, succeeded: int, failed: int, expired: int) -> None:
    progress = context.views_store.views.run_progress(run_id)
    assert progress is not None, f"no run {run_id}"
    wanted = {"succeeded": succeeded, "failed": failed, "expired": expired, "waiting": 0}
    assert {k: progress.counts[k] for k in wanted} == wanted, progress.counts


@then("the batches come waiting longest first: {ids}")
def step_batches(context: Context, ids: str) -> None:
    lines, total = context.views_store.views.batch_page(limit=50)
    assert [line.batch.id for line in lines] == ids.split(", "), [line.batch.id for line in lines]
    assert total == len(lines)
    second, _ = context.views_store.views.batch_page(limit=1, offset=1)
    assert [line.batch.id for line in second] == ids.split(", ")[1:2]


@then('the batch "{batch_id}" shows {results:d} results costing ${cost}, ${live} at live prices')
def step_batch(context: Context, batch_id: str, results: int, cost: str, live: str) -> None:
    lines, _ = context.views_store.views.batch_page(limit=50)
    (line,) = [line for line in lines if line.batch.id == batch_id]
    assert (line.results, line.cost_usd, line.live_cost_usd) == (results, Decimal(cost), Decimal(live)), line


@then("spend by provider is {name} {answers:d} answers ${cost}")
def step_spend(context: Context, name: str, answers: int, cost: str) -> None:
    lines = context.views_store.views.spend_by("provider")
    assert [(line.name, line.answers, line.cost_usd) for line in lines] == [(name, answers, Decimal(cost))], lines


@then("the failures group as {groups}")
def step_failures(context: Context, groups: str) -> None:
    found = context.views_store.views.failure_groups()
    shown = ", ".join(f"{g.error_class}/{g.error_type} {g.count}" for g in found)
    assert shown == groups, shown
    assert all(g.runs == ("reviews-finished",) for g in found), found


@then('the request found by the parked call\'s custom id is "{key}", {state} in {batch_id}')
def step_parked(context: Context, key: str, state: str, batch_id: str) -> None:
    store = context.views_store
    history = store.views.request_history(f"{PARKED_KEY}_{store.identity()}")
    assert history is not None
    assert (history.record.key, history.record.state.value) == (key, state), history.record
    assert [(b.id, steps) for b, _, steps in history.batches] == [(batch_id, {"input_file": f"file-{batch_id}"})]
    assert history.results == []
    assert history.runs == []


@then('the request "{key}" has one failed result from {batch_id}, in run {run_id} item {index:d}')
def step_failed(context: Context, key: str, batch_id: str, run_id: str, index: int) -> None:
    history = context.views_store.views.request_history(key)
    assert history is not None
    assert [(r.batch_id, r.state) for r in history.results] == [(batch_id, "failed")], history.results
    assert history.results[0].error is not None
    assert history.results[0].error["error_type"] == "invalid_request_error"
    assert history.runs == [(run_id, index)], history.runs


@then('no request is found for "{key}"')
def step_none(context: Context, key: str) -> None:
    assert context.views_store.views.request_history(key) is None


@then("the results over time come in {count:d} buckets of {first:d} and {second:d} answers")
def step_timeline(context: Context, count: int, first: int, second: int) -> None:
    points = context.views_store.views.timeline(60.0)
    assert [p.answers for p in points] == [first, second], points
    assert len(points) == count
    assert sum(p.failures for p in points) == 2
    run_points = context.views_store.views.timeline(60.0, run_id="reviews-finished")
    assert [(p.answers, p.failures) for p in run_points] == [(6, 2)], run_points
