"""Steps for live calls' spend charged to their owner in the ledger (`calls.live_spend`)."""

from __future__ import annotations

from decimal import Decimal

from _support import world
from step_context import Context, given, then, when

from lowtide.ledger.spend_records import AuditAction, CapPeriod, CapScope, SpendCap


def _live_worst_case(context: Context) -> Decimal:
    """The live worst case the scenario's one admitted live call was reserved at, from its audit record."""
    [created] = [r for r in world(context).ledger().spending.audit() if r.action is AuditAction.CREATE]
    assert created.worst_case_usd is not None, created
    return created.worst_case_usd


@then('the audit holds a "create" record of team "{team}" for the live call, at its live worst case')
def step_live_create(context: Context, team: str) -> None:
    w = world(context)
    [created] = [r for r in w.ledger().spending.audit() if r.action is AuditAction.CREATE]
    assert created.owner.team == team, created
    assert created.subject.startswith("live:"), created
    # Live prices are twice the batch ones: more than the batch worst case of $0.020028, and a cap's worth of it.
    assert created.worst_case_usd is not None, created
    assert Decimal("0.04") < created.worst_case_usd < Decimal("0.05"), created


@when('the ledger caps team "{team}" at the live call\'s worst case and what the first answer cost, less ${less}')
def step_cap_just_short(context: Context, team: str, less: str) -> None:
    w = world(context)
    [answer] = w.answers
    assert answer.cost is not None
    limit = _live_worst_case(context) + answer.cost.total_usd - Decimal(less)
    w.ledger().spending.set_cap(SpendCap(CapScope.TEAM, team, CapPeriod.DAY, limit))


@then("the ledger's spend shows nothing reserved and nothing spent")
def step_nothing(context: Context) -> None:
    lines = world(context).ledger().spending.spend_lines()
    assert sum((line.reserved_usd for line in lines), Decimal(0)) == 0, lines
    assert sum((line.spent_usd for line in lines), Decimal(0)) == 0, lines


@then('the audit holds {count:d} "{action}" record')
def step_audit_count(context: Context, count: int, action: str) -> None:
    records = world(context).ledger().spending.audit()
    assert [r.action for r in records].count(AuditAction(action)) == count, records


@given('the API will answer the next "{route}" call, then drop the connection before the answer')
def step_drop_answer(context: Context, route: str) -> None:
    world(context).emu.faults.drop_after_commit(route)


_SPENT_WORST = "the ledger's spend shows team \"{team}\": the live call's worst case spent {times:d} time"


@then(_SPENT_WORST + ", nothing reserved")
def step_spent_worst(context: Context, team: str, times: int) -> None:
    _spent(context, team, times, Decimal(0))


@then(_SPENT_WORST + " and its answer's cost, nothing reserved")
def step_spent_worst_and_answer(context: Context, team: str, times: int) -> None:
    [answer] = world(context).answers
    assert answer.cost is not None
    _spent(context, team, times, answer.cost.total_usd)


def _spent(context: Context, team: str, times: int, answered: Decimal) -> None:
    """What the owner's lines hold: `times` worst cases of the one live call, and `answered`, spent; none reserved."""
    lines = world(context).ledger().spending.spend_lines()
    assert {line.team for line in lines} == {team}, lines
    assert sum((line.reserved_usd for line in lines), Decimal(0)) == 0, lines
    spent = sum((line.spent_usd for line in lines), Decimal(0))
    assert spent == _live_worst_case(context) * times + answered, (spent, lines)
