"""Steps of notice_outbox.feature: the `Outbox` role of each store, called as a notifier and its sweeps call it."""

from __future__ import annotations

from _stores import open_store
from _support import names
from ledger_store_steps import Context, contract
from step_context import then, when

from lowtide.ledger.copy import copy_ledger
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.roles import Outbox

_BODY = b'{"type": "batch.ended"}'


def _outbox(context: Context) -> Outbox:
    return contract(context).store


def _notice(name: str, made_at: float) -> Notice:
    url, variable = "http://127.0.0.1:9/lowtide", "LOWTIDE_NOTIFY_SECRET"
    return Notice(name, "batch.ended", url, variable, _BODY, made_at, give_up_at=made_at + 86400, next_at=made_at)


@when('"{owner}" keeps the notice "{name}" made at {made:g}, held until {until:g}')
def step_keep(context: Context, owner: str, name: str, made: float, until: float) -> None:
    assert _outbox(context).add_notice(_notice(name, made), owner=owner, until=until)


@when('"{owner}" keeps the notices {notices} made at {moments}, held until {until:g}')
def step_keep_many(context: Context, owner: str, notices: str, moments: str, until: float) -> None:
    for name, made in zip(names(notices), names(moments), strict=True):
        assert _outbox(context).add_notice(_notice(name, float(made)), owner=owner, until=until)


@then('"{other}" keeping the notice "{name}" again does not hold it, and "{owner}" keeping it again does')
def step_kept_once(context: Context, other: str, name: str, owner: str) -> None:
    outbox = _outbox(context)
    assert not outbox.add_notice(_notice(name, 0.0), owner=other, until=1e12)
    assert outbox.add_notice(_notice(name, 0.0), owner=owner, until=200)  # its own add, made again


@then('"{owner}" keeping the notice "{name}" again does not hold it')
def step_not_held(context: Context, owner: str, name: str) -> None:
    assert not _outbox(context).add_notice(_notice(name, 0.0), owner=owner, until=1e12)


@then('no notice is due at {now:g} for "{owner}"')
def step_none_due(context: Context, now: float, owner: str) -> None:
    due = _outbox(context).due_notices(owner=owner, now=now, until=now + 1000, limit=10)
    assert due == [], due


@then('the notices due at {now:g} for "{owner}", held until {until:g}, are {notices} after {tries:d} tries')
@then('the notices due at {now:g} for "{owner}", {limit:d} at most, held until {until:g}, are {notices} after {tries:d}'
      " tries")  # fmt: skip
def step_due(context: Context, now: float, owner: str, until: float, notices: str, tries: int, limit: int = 10) -> None:
    due = _outbox(context).due_notices(owner=owner, now=now, until=until, limit=limit)
    assert [notice.event_id for notice in due] == names(notices), due
    assert all(notice.tries == tries for notice in due), due
    assert all(notice.body == _BODY for notice in due), due


@when('"{owner}" tried "{name}" {tries:d} time at {now:g}, delivered')
@when('"{owner}" tried "{name}" {tries:d} times at {now:g}, delivered')
def step_delivered(context: Context, owner: str, name: str, tries: int, now: float) -> None:
    _outbox(context).notice_tried(name, owner=owner, now=now, tries=tries, delivered=True, next_at=None)


@when('"{owner}" tried "{name}" {tries:d} time at {now:g}, due again at {next_at:g}')
@when('"{owner}" tried "{name}" {tries:d} times at {now:g}, due again at {next_at:g}')
def step_due_again(context: Context, owner: str, name: str, tries: int, now: float, next_at: float) -> None:
    _outbox(context).notice_tried(name, owner=owner, now=now, tries=tries, delivered=False, next_at=next_at)


@when('"{owner}" tried "{name}" {tries:d} time at {now:g}, given up')
def step_given_up(context: Context, owner: str, name: str, tries: int, now: float) -> None:
    _outbox(context).notice_tried(name, owner=owner, now=now, tries=tries, delivered=False, next_at=None)


@when("the store is copied into a new {kind} ledger, which the next steps use")
def step_copied(context: Context, kind: str) -> None:
    """As `lowtide ledger copy` moves a ledger: the steps after speak to the copy, as a process on it would."""
    held = contract(context)
    # The scenario's database is the copy's when the copied store is another kind; a file is a new one beside.
    copy = open_store(context, kind, fresh=kind != "postgres")
    copy_ledger(held.store, copy)
    held.store = copy
