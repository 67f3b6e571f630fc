"""Steps for what is seen of durable agent runs (features/agents.feature): the dashboard's Agents page, its JSON read
through the dashboard's own web application, in process, at the scenario's clock; and a run's trace."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Protocol

from _support import world
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from step_context import Context, then, when

from lowtide.dashboard.data import money


class TracedContext(Context, Protocol):
    spans: InMemorySpanExporter
    """What `OpenTelemetry is configured with in-memory exporters` (telemetry_steps) collects."""


@when('the dashboard\'s Agents page is read, showing the run "{run_id}"')
def step_read_agents_page(context: Context, run_id: str) -> None:
    from starlette.testclient import TestClient

    from lowtide.dashboard.app import build_app
    from lowtide.dashboard.data import DashboardData

    w = world(context)
    app = build_app(DashboardData(w.ledger(), clock=w.clock.now), token=None)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        response = client.get("/api/agents", params={"run": run_id})
    assert response.status_code == 200, response.text
    w.value = response.json()


def _page(context: Context) -> dict[str, Any]:
    page: dict[str, Any] = world(context).value
    return page


@then("it counts {parked:d} parked and {waiting:d} waiting-on-person run, none in the other states")
def step_agent_counts(context: Context, parked: int, waiting: int) -> None:
    counts = _page(context)["counts"]
    others = dict.fromkeys(("running", "in-doubt", "finished", "failed", "stopped"), 0)
    assert counts == {"parked": parked, "waiting-on-person": waiting, **others}, counts


@then('it lists "{first}" {first_state} and "{second}" {second_state}, asking "{question}"')
def step_agent_list(
    context: Context, first: str, first_state: str, second: str, second_state: str, question: str
) -> None:
    runs = {run["run_id"]: run for run in _page(context)["runs"]}
    assert (runs[first]["state"], runs[second]["state"]) == (first_state, second_state), runs
    assert str(runs[second]["question"]).startswith(question), runs[second]
    # Its cost as a person reads it, as the dashboard shows every cost (two significant digits under $1: "$0.000087",
    # never "$0.0001" for every small run); how long it has stood parked (a run that has ended has no such figure).
    assert runs[first]["cost"] == money(Decimal(runs[first]["cost_usd"])), runs[first]
    assert runs[first]["cost"] != "$0.0000", runs[first]
    assert runs[first]["for_seconds"] >= 0, runs[first]


@then('the run "{run_id}"\'s timeline is:')
def step_agent_timeline(context: Context, run_id: str) -> None:
    shown = _page(context)["shown"]
    assert shown is not None, "no run shown"
    assert shown["run"]["run_id"] == run_id, shown
    assert context.table is not None
    steps = shown["timeline"]
    assert len(steps) == len(context.table.rows), steps
    seen = [
        [
            step["kind"],
            step["state"],
            "yes" if step["batch_id"] else "no",
            "yes" if step["cost"] and step["cost"] != "$0" else "no",
            _waited(context, step, row["waited"]),
        ]
        for step, row in zip(steps, context.table, strict=False)
    ]
    expected = [[row["kind"], row["outcome"], row["batch"], row["cost"], row["waited"]] for row in context.table]
    assert seen == expected, seen
    turns = [step["batch_id"] for step in steps if step["kind"] == "turn"]
    assert len(set(turns)) == len(turns), f"each turn in a batch of its own: {turns}"


def _waited(context: Context, step: dict[str, Any], expected: str) -> str:
    """How long the step waited, as the table says it: "until now" (begun, not ended: to the page's now), "over N"
    seconds (the batch's 60, and what the engine's window and polls add), or exactly N."""
    waited = step["waited_seconds"]
    if step["ended_at"] is None:
        return "until now" if waited == _page(context)["now"] - step["started_at"] else f"{waited:g}"
    assert waited == step["ended_at"] - step["started_at"], step
    if expected.startswith("over "):
        return expected if waited > float(expected.split()[1]) else f"{waited:g}"
    return f"{waited:g}"


@then("it shows no run")
def step_agent_no_run(context: Context) -> None:
    assert _page(context)["shown"] is None, _page(context)["shown"]


@then('the run "{run_id}" is one trace: its start\'s span, and an advance span under it for each of {outcomes}')
def step_one_trace(context: TracedContext, run_id: str, outcomes: str) -> None:
    finished = context.spans.get_finished_spans()
    spans = [s for s in finished if (s.attributes or {}).get("lowtide.agent.run.id") == run_id]
    [root] = [s for s in spans if s.name == "lowtide.agent.run"]
    advances = sorted((s for s in spans if s.name == "lowtide.agent.advance"), key=lambda s: s.start_time or 0)
    assert root.context is not None
    assert all(s.context is not None and s.context.trace_id == root.context.trace_id for s in advances), advances
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in advances), advances
    said = [str((s.attributes or {}).get("lowtide.agent.outcome")) for s in advances]
    assert said == [o.strip() for o in outcomes.replace(" and ", ", ").split(",")], said
    # The turns' calls (their chat spans, made as their answers come) are in the run's trace too.
    calls = [s for s in finished if s.name.startswith("chat ")]
    assert calls, [s.name for s in finished]
    assert {s.context.trace_id for s in calls if s.context is not None} == {root.context.trace_id}, calls
