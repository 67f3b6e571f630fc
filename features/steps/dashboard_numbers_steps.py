"""Steps of `dashboard_numbers.feature`: a request's page (`DashboardData.request`) read in process over the
dashboard's test ledger (`dashboard_ledgers.build`), with one more request whose stored body carries a credential."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Protocol, cast

from _dashboard import shown_run
from _stores import open_store
from dashboard_ledgers import SPLIT, answer_split, build, build_split
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.bulk.recorded.status import run_status
from lowtide.dashboard.data import DashboardData, Json, money
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.records import NewRequest

NOW = 1_700_000_000.0


class Context(StepContext, Protocol):
    dashboard: DashboardData
    dashboard_store: LedgerStore
    request_page: Json


@given("the dashboard's ledger in a {kind} store, read by a dashboard at its own time")
def step_dashboard_in(context: Context, kind: str) -> None:
    context.dashboard_store = open_store(context, kind)
    build(context.dashboard_store, now=NOW)
    context.dashboard = DashboardData(context.dashboard_store, clock=lambda: NOW)


@given('a request "{key}" sent with the prompt "{prompt}" and the header "{name}: {value}"')
def step_keyed_request(context: Context, key: str, prompt: str, name: str, value: str) -> None:
    store = context.dashboard_store
    params = {
        "model": "model-small",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": prompt}],
        "extra_headers": {name: value, "Authorization": f"Bearer {value}"},
    }
    store.claim(
        [NewRequest(key, f"{key}_{store.identity()}", "reviewer", "model-small", params, 1, Decimal("0.01"))],
        owner="dashboard-test-owner",
        until=NOW + 3600,
        now=NOW,
    )


@when('the page of request "{key}" is read')
def step_read_request(context: Context, key: str) -> None:
    page = context.dashboard.request(key)
    assert page is not None, f"no page for {key}"
    context.request_page = page


@then('its prompt shows "{prompt}" and the model\'s limit of {tokens:d} tokens')
def step_prompt_shown(context: Context, prompt: str, tokens: int) -> None:
    shown = context.request_page.get("prompt")
    assert isinstance(shown, str), f"no prompt on the page: {context.request_page}"
    body = json.loads(shown)
    assert body["messages"] == [{"role": "user", "content": prompt}], shown
    assert body["max_tokens"] == tokens, shown


@then('nothing on the page holds "{secret}"')
def step_no_secret(context: Context, secret: str) -> None:
    page = json.dumps(context.request_page, default=str)
    assert secret not in page, f"the page holds the credential: {page}"
    assert "[hidden]" in page, page


@given("a run caught mid-way: 2 items in a batch the API has, 1 in a batch being created, 3 not yet in a batch")
def step_split_run(context: Context) -> None:
    build_split(context.dashboard_store, now=NOW)


@given(
    "a run with no cost limit caught mid-way: 2 items in a batch the API has, 1 in a batch being created,"
    " 3 not yet in a batch"
)
def step_split_run_unpriced(context: Context) -> None:
    build_split(context.dashboard_store, now=NOW, limit=None)


@when("the batch the API has ends with one answer and one failure")
def step_split_answered(context: Context) -> None:
    answer_split(context.dashboard_store, now=NOW)


@then(
    "the Runs page and `lowtide status` agree on the run:"
    " {succeeded:d} succeeded, {failed:d} failed, {waiting:d} waiting, {pending:d} pending"
)
def step_split_counts(context: Context, succeeded: int, failed: int, waiting: int, pending: int) -> None:
    shown = shown_run(_fresh(context).runs(), SPLIT)
    counts = cast("dict[str, int]", shown["counts"])
    status = run_status(context.dashboard_store, SPLIT).counts
    expected = {"succeeded": succeeded, "failed": failed, "waiting": waiting, "pending": pending}
    assert {name: status[name] for name in expected} == expected, f"lowtide status counts {status}"
    shown_counts = {name: counts.get(name, 0) for name in expected}
    assert shown_counts == expected, f"the Runs page counts {counts}, lowtide status {status}"


@then("the Runs page shows the run in progress with ${worst} of worst case still out")
def step_split_worst(context: Context, worst: str) -> None:
    shown = shown_run(_fresh(context).runs(), SPLIT)
    got = (shown["state"], shown["worst_case_out"], shown["unpriced_out"])
    assert got == ("in progress", money(Decimal(worst)), 0), shown


@then("the Runs page shows the run in progress with no worst case priced and {unpriced:d} items out not priced")
def step_split_unpriced(context: Context, unpriced: int) -> None:
    shown = shown_run(_fresh(context).runs(), SPLIT)
    got = (shown["state"], shown["worst_case_out"], shown["unpriced_out"])
    assert got == ("in progress", money(Decimal(0)), unpriced), shown


@then('the Money page counts 1 answer and 1 failure for the actor "{actor}", not 2 answers')
def step_split_money(context: Context, actor: str) -> None:
    by = cast("dict[str, list[Json]]", _fresh(context).money()["by"])
    (line,) = [line for line in by["actor"] if line["name"] == actor]
    assert (line["answers"], line["failures"]) == (1, 1), line


def _fresh(context: Context) -> DashboardData:
    """A dashboard over the scenario's ledger that has counted nothing yet: its pages count what the ledger holds."""
    return DashboardData(context.dashboard_store, clock=lambda: NOW)
