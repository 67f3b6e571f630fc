"""The dashboard's Spend page as JSON: what the ledger's spend by owner holds (`SpendLedger.spend_lines`), by team,
project and day, and each cap with what its window holds spent and reserved and the room left in it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal

from lowtide.dashboard.data import Json, money
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.spend_records import CapScope, SpendCap, SpendLine, day_of, exact_usd, window_start

__all__ = ["spend_page"]

_NONE = "(none)"
"""How a line of no team (or no project) is named."""


def spend_page(store: LedgerStore, now: float) -> Json:
    lines = store.spending.spend_lines()
    return {
        "location": store.location,
        "now": now,
        "spent": money(sum((line.spent_usd for line in lines), Decimal(0))),
        "reserved": money(sum((line.reserved_usd for line in lines), Decimal(0))),
        "caps": [_cap(cap, lines, now) for cap in store.spending.caps()],
        "by": {
            "team": _by(lines, lambda line: line.team or _NONE),
            "project": _by(lines, lambda line: line.project or _NONE),
            "day": _by(lines, lambda line: line.day, latest_first=True),
        },
    }


def _cap(cap: SpendCap, lines: Iterable[SpendLine], now: float) -> Json:
    """A cap and where it stands now: what its window holds spent and reserved, and the room left."""
    start = window_start(cap.period, now)
    first_day = day_of(start) if start is not None else ""
    held = [
        line
        for line in lines
        if (line.team if cap.scope is CapScope.TEAM else line.project) == cap.name and line.day >= first_day
    ]
    spent = sum((line.spent_usd for line in held), Decimal(0))
    reserved = sum((line.reserved_usd for line in held), Decimal(0))
    left = cap.limit_usd - spent - reserved
    return {
        "scope": cap.scope.value,
        "name": cap.name,
        "period": cap.period.value,
        "limit": exact_usd(cap.limit_usd),  # as its owner set it, never rounded
        "spent": money(spent),
        "reserved": money(reserved),
        "left": money(left),
        "used_share": float((spent + reserved) / cap.limit_usd) if cap.limit_usd > 0 else 1.0,
    }


def _by(lines: Iterable[SpendLine], name: Callable[[SpendLine], str], *, latest_first: bool = False) -> list[Json]:
    sums: dict[str, list[Decimal]] = {}
    for line in lines:
        group = sums.setdefault(name(line), [Decimal(0), Decimal(0), Decimal(0)])
        group[0] += line.spent_usd
        group[1] += line.reserved_usd
        group[2] += line.requests
    return [
        {"name": group, "spent": money(s[0]), "reserved": money(s[1]), "requests": int(s[2])}
        for group, s in sorted(sums.items(), reverse=latest_first)
    ]
