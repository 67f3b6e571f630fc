"""Steps for every store's webhook events, caps and cancels (features/ledger_store_webhooks_and_caps.feature), on the
store that ledger_store.feature's "Given a <store> ledger store" opened."""

from __future__ import annotations

from decimal import Decimal
from typing import Protocol

from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.spend_records import AuditAction, AuditRecord, CapPeriod, CapScope, Owner, SpendCap, SpendEntry
from lowtide.ledger.store import LedgerStore
from lowtide.ledger.webhook_records import Receipt, WebhookDelivery

_PERIODS = {"per day": CapPeriod.DAY, "per month": CapPeriod.MONTH, "in all": CapPeriod.ALL}


class _Contract(Protocol):
    store: LedgerStore


class Context(StepContext, Protocol):
    contract: _Contract
    receipt: Receipt
    removed: bool
    admitted_usd: Decimal


def _store(context: Context) -> LedgerStore:
    return context.contract.store


def _keys(text: str) -> list[str]:
    return [key.strip() for key in text.split(",")]


@when('the store records the "{provider}" event "{event}" delivery "{delivery}" about the API\'s batch "{batch}"')
def step_record_webhook(context: Context, provider: str, event: str, delivery: str, batch: str) -> None:
    made = WebhookDelivery(provider, event, delivery, batch, "batch.completed", None, 1000.0)
    context.receipt = _store(context).record_webhook(made)


@then("the store answered {receipt:w}")
def step_receipt(context: Context, receipt: str) -> None:
    assert context.receipt is Receipt[receipt], context.receipt


@then('the store has seen an event about the "{p1}" batch "{b1}" and the "{p2}" batch "{b2}"')
def step_seen(context: Context, p1: str, b1: str, p2: str, b2: str) -> None:
    assert _store(context).webhook_seen(p1, b1)
    assert _store(context).webhook_seen(p2, b2)


@then('the store has seen no event about the "{provider}" batch "{batch}"')
def step_not_seen(context: Context, provider: str, batch: str) -> None:
    assert not _store(context).webhook_seen(provider, batch)


@given('the store caps team "{team}" at ${usd:d} per day and project "{project}" at ${all_usd:d} in all')
def step_caps(context: Context, team: str, usd: int, project: str, all_usd: int) -> None:
    spending = _store(context).spending
    spending.set_cap(SpendCap(CapScope.TEAM, team, CapPeriod.DAY, Decimal(usd)))
    spending.set_cap(SpendCap(CapScope.PROJECT, project, CapPeriod.ALL, Decimal(all_usd)))


@when('the store removes team "{team}"\'s cap {period}')
def step_remove_cap(context: Context, team: str, period: str) -> None:
    context.removed = _store(context).spending.remove_cap(CapScope.TEAM, team, _PERIODS[period])


@then("the removal said the cap was there")
def step_removed(context: Context) -> None:
    assert context.removed is True


@then("the removal said there was no such cap")
def step_not_removed(context: Context) -> None:
    assert context.removed is False


@then('the store\'s caps are project "{project}" at ${usd:d} in all')
def step_caps_are(context: Context, project: str, usd: int) -> None:
    caps = _store(context).spending.caps()
    assert caps == [SpendCap(CapScope.PROJECT, project, CapPeriod.ALL, Decimal(usd))], caps


def _entries(text: str, usd: str, at: float) -> list[SpendEntry]:
    """ "k1, k2" of team "research" and "k3" of team "ops" """
    entries: list[SpendEntry] = []
    for part in text.split(" and "):
        keys, team = part.split(" of team ")
        for key in _keys(keys.strip('"')):
            owner = Owner(team=team.strip('"'))
            entries.append(SpendEntry(key, owner, "planner", "claude-sonnet-5-5", Decimal(usd), at, "host-a"))
    return entries


@when("the store reserves ${usd} for each of {entries}, at {at:g}")
def step_reserve(context: Context, usd: str, entries: str, at: float) -> None:
    admission = _store(context).spending.reserve_all(_entries(entries, usd, at))
    assert admission.admitted, admission
    context.admitted_usd = admission.adds_usd


@then("that reservation added ${usd}")
def step_added(context: Context, usd: str) -> None:
    assert context.admitted_usd == Decimal(usd), context.admitted_usd


@when('the store lets go of "{key}" at {at:g}')
def step_release(context: Context, key: str, at: float) -> None:
    _store(context).spending.release_all([key], at=at, host="host-a")


@when('the store cancels batch "{batch}" of "{keys}" at {at:g}')
def step_cancel(context: Context, batch: str, keys: str, at: float) -> None:
    _store(context).spending.cancel_all(batch, _keys(keys), at=at, host="host-a")


@then(
    'the store\'s audit after {since:g} is a cancel of "{batch}" by team "{t1}" worth ${u1}'
    ' and by team "{t2}" worth ${u2}'
)
def step_cancel_audit(context: Context, since: float, batch: str, t1: str, u1: str, t2: str, u2: str) -> None:
    audit = _store(context).spending.audit(since)
    shown = sorted((r.action, r.subject, r.owner.team, r.worst_case_usd) for r in audit)
    expected = sorted((AuditAction.CANCEL, batch, team, Decimal(usd)) for team, usd in ((t1, u1), (t2, u2)))
    assert shown == expected, audit


@then("the store's spend shows nothing reserved")
def step_nothing_reserved(context: Context) -> None:
    lines = _store(context).spending.spend_lines()
    assert lines, lines
    assert all(line.reserved_usd == 0 for line in lines), lines


@when('the store writes an audit record of a release of "{key}" at {at:g}')
def step_write_audit(context: Context, key: str, at: float) -> None:
    record = AuditRecord(at, AuditAction.RELEASE, key, Owner(team="research"), "planner", Decimal(2), None, "host-a")
    _store(context).spending.record_audit(record)


@then('the store\'s spend from {since:g} on is {count:d} request of team "{team}" with ${usd} reserved')
def step_spend_since(context: Context, since: float, count: int, team: str, usd: str) -> None:
    lines = _store(context).spending.spend_lines(since)
    assert [(line.team, line.requests, line.reserved_usd) for line in lines] == [(team, count, Decimal(usd))], lines


@then('the store\'s audit from {since:g} on is a release of "{key}"')
def step_audit_since(context: Context, since: float, key: str) -> None:
    audit = _store(context).spending.audit(since)
    assert [(r.action, r.subject) for r in audit] == [(AuditAction.RELEASE, key)], audit


def _durations(context: Context, provider: str, **asked: object) -> list[float]:
    last = asked.pop("last", 10)
    assert isinstance(last, int)
    endpoint = asked.get("endpoint")
    requests = asked.get("requests")
    assert endpoint is None or isinstance(endpoint, str)
    assert requests is None or isinstance(requests, tuple)
    return _store(context).batch_durations(provider, last=last, endpoint=endpoint, requests=requests)


@then('the store says "{provider}" batches took {seconds}, newest first')
def step_durations(context: Context, provider: str, seconds: str) -> None:
    found = _durations(context, provider)
    assert found == [float(s.removesuffix(" seconds")) for s in _keys(seconds)], found


@then('the store says the last {last:d} "{provider}" batch took {seconds:g} seconds')
def step_durations_last(context: Context, last: int, provider: str, seconds: float) -> None:
    found = _durations(context, provider, last=last)
    assert found == [seconds], found


@then('the store says "{provider}" batches of {fewest:d} to {most:d} requests took {seconds:g} seconds')
def step_durations_sized(context: Context, provider: str, fewest: int, most: int, seconds: float) -> None:
    found = _durations(context, provider, requests=(fewest, most))
    assert found == [seconds], found


@then('the store says "{provider}" batches at "{endpoint}" took no time it knows')
def step_durations_elsewhere(context: Context, provider: str, endpoint: str) -> None:
    found = _durations(context, provider, endpoint=endpoint)
    assert found == [], found
