"""Steps for spend by owner: caps set in the scenario's ledger, calls attributed, the spend and the audit read back."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Protocol

from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorResponse, spend_owner
from lowtide.ledger.spend_records import AuditAction, CapPeriod, CapScope, Owner, SpendCap, SpendEntry
from lowtide.provider import Outcome


class Context(StepContext, Protocol):
    spend_output: str


_PERIODS = {"per day": CapPeriod.DAY, "per month": CapPeriod.MONTH, "in all": CapPeriod.ALL}


@given('the ledger caps {scope:w} "{name}" at ${limit} {period}')
def step_cap(context: Context, scope: str, name: str, limit: str, period: str) -> None:
    world(context).ledger().spending.set_cap(SpendCap(CapScope(scope), name, _PERIODS[period], Decimal(limit)))


@when('the actor is asked "{prompt}" for team "{team}"')
def step_ask_for_team(context: Context, prompt: str, team: str) -> None:
    w = world(context)

    async def ask() -> ActorResponse[object]:
        with spend_owner(team=team):
            return await w.current_actor().run(prompt)

    w.response = w.attempt_async(ask)


@when('the actor runs "{prompts}" with run_many for team "{team}"')
def step_run_many_for_team(context: Context, prompts: str, team: str) -> None:
    w = world(context)

    async def ask() -> list[Outcome]:
        with spend_owner(team=team):
            return await w.current_actor().run_many([p.strip() for p in prompts.split(",")])

    w.outcomes = w.attempt_async(ask) or []


@then("the ledger's spend shows team \"{team}\": {count:d} requests, their answers' cost spent, nothing reserved")
def step_spend_requests(context: Context, team: str, count: int) -> None:
    lines = world(context).ledger().spending.spend_lines()
    assert {line.team for line in lines} == {team}, lines
    assert sum(line.requests for line in lines) == count, lines
    assert sum((line.reserved_usd for line in lines), Decimal(0)) == 0, lines
    spent = sum((line.spent_usd for line in lines), Decimal(0))
    assert Decimal(0) < spent < Decimal("0.001") * count, lines  # answers' costs, not worst cases


@then("the ledger's spend shows nothing reserved")
def step_nothing_reserved(context: Context) -> None:
    lines = world(context).ledger().spending.spend_lines()
    assert sum((line.reserved_usd for line in lines), Decimal(0)) == 0, lines


@then("the ledger's spend shows ${usd} reserved")
def step_reserved(context: Context, usd: str) -> None:
    lines = world(context).ledger().spending.spend_lines()
    assert sum((line.reserved_usd for line in lines), Decimal(0)) == Decimal(usd), lines


@when('lowtide cancels the Anthropic key "{key}"')
def step_cancel_key(context: Context, key: str) -> None:
    from lowtide.calls import parking

    w = world(context)
    cancel = lambda: parking.cancel(w.ledger(), key, client=w.client, clock=w.clock)  # noqa: E731
    if (context.config.userdata or {}).get("store") == "postgres":
        # On the scenario's loop, as the program that parked it cancels it: between steps that loop stands still, and
        # on PostgreSQL (whose transactions span awaits) its poller may stand mid-transaction, holding the batch's
        # row; a program of its own then waited on that lock for good (1 run in 10).
        w.run(cancel())
    else:
        w.in_program(cancel)


@then('its JSON\'s audit holds a "{action}" record of team "{team}" for the actor "{actor}", ${usd}')
def step_spend_json_audit(context: Context, action: str, team: str, actor: str, usd: str) -> None:
    import json

    shown = json.loads(context.spend_output)
    found = [r for r in shown["audit"] if (r["action"], r["team"], r["actor"]) == (action, team, actor)]
    assert len(found) == 1, shown["audit"]
    assert Decimal(str(found[0]["worst_case_usd"])) == Decimal(usd), found


@then('the audit holds {refused:d} "refused" record and {created:d} "create" records')
def step_audit_counts(context: Context, refused: int, created: int) -> None:
    records = world(context).ledger().spending.audit()
    actions = [r.action for r in records]
    assert actions.count(AuditAction.REFUSED) == refused, records
    assert actions.count(AuditAction.CREATE) == created, records


@then(
    'the ledger\'s spend shows team "{team}", project "{project}", actor "{actor}": {count:d} request, its answer\'s'
    " cost spent, nothing reserved"
)
def step_spend_line(context: Context, team: str, project: str, actor: str, count: int) -> None:
    w = world(context)
    [line] = w.ledger().spending.spend_lines()
    assert (line.team, line.project, line.actor, line.requests) == (team, project, actor, count), line
    [answer] = w.answers
    assert answer.cost is not None
    assert line.spent_usd == answer.cost.total_usd, (line, answer.cost)
    assert line.reserved_usd == 0, line


@then('the audit holds a "{action}" record of team "{team}" for the actor "{actor}"')
def step_audit(context: Context, action: str, team: str, actor: str) -> None:
    records = world(context).ledger().spending.audit()
    found = [r for r in records if r.action is AuditAction(action) and r.owner.team == team and r.actor == actor]
    assert len(found) == 1, records
    assert found[0].worst_case_usd == Decimal("0.020028"), found


def _entry(key: str, team: str, usd: str) -> SpendEntry:
    return SpendEntry(key, Owner(team=team), "planner", "claude-sonnet-5-5", Decimal(usd), 1_000.0, "host-a")


@when('the ledger reserves ${usd} for key "{key}" of team "{team}", then releases it')
def step_reserve_release(context: Context, usd: str, key: str, team: str) -> None:
    spending = world(context).ledger().spending
    assert spending.reserve(_entry(key, team, usd)).admitted
    spending.release(key, at=1_001.0, host="host-a")


@then('the ledger admits ${usd} for key "{key}" of team "{team}"')
def step_admits(context: Context, usd: str, key: str, team: str) -> None:
    admission = world(context).ledger().spending.reserve(_entry(key, team, usd))
    assert admission.admitted, admission


@then('the ledger refuses ${usd} for key "{key}" of team "{team}", with ${reserved} reserved')
def step_refuses(context: Context, usd: str, key: str, team: str, reserved: str) -> None:
    admission = world(context).ledger().spending.reserve(_entry(key, team, usd))
    assert admission.refused_by is not None, admission
    assert admission.refused_by.reserved_usd == Decimal(reserved), admission
    assert admission.refused_by.spent_usd == 0, admission


@when("the spend report is asked for with `{arguments}`")
def step_spend_command(context: Context, arguments: str) -> None:
    from click.testing import CliRunner

    from lowtide.cli.main import cli

    result = CliRunner().invoke(cli, ["spend", *arguments.split()], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    context.spend_output = result.output


@then('its JSON holds one line of team "{team}" and the cap {scope:w} "{name}" {period:w} ${limit}')
def step_spend_json(context: Context, team: str, scope: str, name: str, period: str, limit: str) -> None:
    import json

    shown = json.loads(context.spend_output)
    [line] = shown["spend"]
    assert (line["team"], line["requests"], line["reserved_usd"]) == (team, 1, 0), line
    assert Decimal(str(line["spent_usd"])) > 0, line
    assert shown["caps"] == [{"scope": scope, "name": name, "period": period, "limit_usd": float(limit)}], shown


@then('its text has the line "{line}"')
def step_spend_text(context: Context, line: str) -> None:
    assert line in context.spend_output.splitlines(), context.spend_output


@then('the dashboard\'s Spend page shows {scope:w} "{name}"\'s {period:w} cap as "{shown}"')
def step_dashboard_cap(context: Context, scope: str, name: str, period: str, shown: str) -> None:
    from lowtide.dashboard.spend import spend_page

    w = world(context)
    caps = spend_page(w.ledger(), w.clock.now())["caps"]
    assert isinstance(caps, list), caps
    found = [c for c in caps if isinstance(c, dict) and (c["scope"], c["name"], c["period"]) == (scope, name, period)]
    assert len(found) == 1, caps
    assert found[0]["limit"] == shown, found


@then('its CSV has the header "{header}" and a line of the day holding "{rest}"')
def step_spend_csv(context: Context, header: str, rest: str) -> None:
    lines = context.spend_output.splitlines()
    assert lines[0] == header, lines
    assert len(lines) == 2, lines
    day = datetime.fromtimestamp(world(context).clock.now(), UTC).strftime("%Y-%m-%d")
    assert lines[1] == f"{day},{rest}", lines


@then('the "{action}" audit record is dated by the actor\'s clock, at or after its time limit')
def step_audit_dated(context: Context, action: str) -> None:
    w = world(context)
    records = w.ledger().spending.audit()
    [record] = [r for r in records if r.action is AuditAction(action)]
    created = min(r.at for r in records if r.action is AuditAction.CREATE)
    # The scenario's clock is virtual (it starts in 2027): a record dated by the host's clock would fall before it.
    assert created + 100 <= record.at <= w.clock.now(), (record.at, created, w.clock.now())
