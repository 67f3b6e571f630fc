"""Steps for caps across hosts: three stores on one PostgreSQL database, each its own pool, admitting at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Protocol

from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.ledger.postgres.ledger import PostgresLedger
from lowtide.ledger.spend_records import Admission, CapPeriod, CapScope, Owner, SpendCap, SpendEntry


class Context(StepContext, Protocol):
    spend_store: PostgresLedger
    spend_admissions: list[Admission]


@given('a PostgreSQL ledger capping team "{team}" at ${limit} in all')
def step_pg_cap(context: Context, team: str, limit: str) -> None:
    store = PostgresLedger(context.postgres_url)
    context.add_cleanup(store.close)
    store.spending.set_cap(SpendCap(CapScope.TEAM, team, CapPeriod.ALL, Decimal(limit)))
    context.spend_store = store


@when(
    '{hosts:d} hosts, each with its own connections, reserve {count:d} requests of ${usd} each for team "{team}"'
    " at once"
)
def step_hosts_race(context: Context, hosts: int, count: int, usd: str, team: str) -> None:
    def entries(index: int) -> list[list[SpendEntry]]:
        return [[_entry(f"h{index}-{n}", team, usd, 1_000.0 + n, index)] for n in range(count)]

    _race(context, hosts, entries)


@when(
    "{hosts:d} hosts, each with its own connections, reserve {groups:d} groups of {size:d} requests of ${usd} each for"
    ' team "{team}" at once'
)
def step_hosts_race_groups(context: Context, hosts: int, groups: int, size: int, usd: str, team: str) -> None:
    def entries(index: int) -> list[list[SpendEntry]]:
        return [
            [_entry(f"h{index}-{g}-{n}", team, usd, 1_000.0 + g, index) for n in range(size)] for g in range(groups)
        ]

    _race(context, hosts, entries)


@then("{admitted:d} groups were admitted and {refused:d} refused")
def step_groups_admitted(context: Context, admitted: int, refused: int) -> None:
    outcomes = [a.admitted for a in context.spend_admissions]
    assert (outcomes.count(True), outcomes.count(False)) == (admitted, refused), outcomes


def _entry(key: str, team: str, usd: str, at: float, host: int) -> SpendEntry:
    return SpendEntry(key, Owner(team=team), "planner", "claude-sonnet-5-5", Decimal(usd), at, f"host-{host}")


def _race(context: Context, hosts: int, entries: Callable[[int], list[list[SpendEntry]]]) -> None:
    """`hosts` stores, each its own pool, reserving their groups of `entries(host)` at once, one group at a time."""
    stores = [PostgresLedger(context.postgres_url) for _ in range(hosts)]
    for store in stores:
        context.add_cleanup(store.close)
        store.spending.caps()  # each pool's connection made (and the schema checked) before the race
    start = threading.Barrier(hosts)
    admissions: list[Admission] = []
    lock = threading.Lock()

    def host(index: int) -> None:
        start.wait()
        for group in entries(index):
            admission = stores[index].spending.reserve_all(group)
            with lock:
                admissions.append(admission)

    threads = [threading.Thread(target=host, args=(i,)) for i in range(hosts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    context.spend_admissions = admissions


@then("{admitted:d} requests were admitted and {refused:d} refused")
def step_admitted(context: Context, admitted: int, refused: int) -> None:
    outcomes = [a.admitted for a in context.spend_admissions]
    assert (outcomes.count(True), outcomes.count(False)) == (admitted, refused), outcomes


@then('the ledger holds ${usd} reserved for team "{team}", and an audit record for each of the {count:d}')
def step_pg_reserved(context: Context, usd: str, team: str, count: int) -> None:
    spending = context.spend_store.spending
    lines = spending.spend_lines()
    assert sum(line.reserved_usd for line in lines if line.team == team) == Decimal(usd), lines
    assert sum(line.spent_usd for line in lines) == 0, lines
    assert len(spending.audit()) == count, len(spending.audit())
