"""Steps for `lowtide spend`'s text report: the lines it printed, read with the run's own day, ledger and hosts."""

from __future__ import annotations

from datetime import UTC, datetime

from _support import world
from step_context import Context, then


@then("the spend report's text is, with the day and hosts of this run:")
def step_spend_text(context: Context) -> None:
    w = world(context)
    result = w.value
    ledger = w.ledger()
    [record] = ledger.spending.audit()
    at = datetime.fromtimestamp(record.at, UTC)
    expected = context.text.format(
        ledger=ledger.location,
        day=datetime.fromtimestamp(w.clock.now(), UTC).strftime("%Y-%m-%d"),
        time=at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        key=record.subject,
        host=record.host,
    )
    assert result["out"] == expected + "\n", f"{result['out']!r}\n!=\n{expected!r}"


@then("the ledger holds no spend cap")
def step_no_cap(context: Context) -> None:
    caps = world(context).ledger().spending.caps()
    assert caps == [], caps
