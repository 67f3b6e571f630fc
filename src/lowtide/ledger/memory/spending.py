"""`MemorySpending`: a `MemoryLedger`'s spend by owner (`spending.SpendLedger`), under the ledger's one lock, each
request's spend read from its tables as the SQL stores read it from `request_view`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from lowtide.ledger.memory.tables import MemoryTables
from lowtide.ledger.records import RequestState
from lowtide.ledger.spend_records import (
    Admission,
    AuditAction,
    AuditRecord,
    CapPeriod,
    CapScope,
    CapStanding,
    Owner,
    SpendCap,
    SpendEntry,
    SpendLine,
    audits_of,
    cancel_audits,
    day_of,
    distinct,
    judge_all,
    owners_caps,
    spend_of,
    tags_json,
    tags_of,
    window_start,
)

__all__ = ["MemorySpending"]

_UNANSWERED = (RequestState.PENDING, RequestState.SUBMITTING, RequestState.WAITING)


class MemorySpending:
    """The caps, the entries (each with whether it was released) and the audit, in memory."""

    def __init__(self, lock: threading.RLock, tables: MemoryTables) -> None:
        self._lock = lock
        self._tables = tables
        self._caps: dict[tuple[CapScope, str, CapPeriod], SpendCap] = {}
        self._entries: dict[str, SpendEntry] = {}
        self._released: set[str] = set()
        self._settled: dict[str, Decimal] = {}
        self._audit: list[AuditRecord] = []

    def set_cap(self, cap: SpendCap) -> None:
        with self._lock:
            self._caps[cap.scope, cap.name, cap.period] = cap

    def remove_cap(self, scope: CapScope, name: str, period: CapPeriod) -> bool:
        with self._lock:
            return self._caps.pop((scope, name, period), None) is not None

    def caps(self) -> list[SpendCap]:
        with self._lock:
            return [self._caps[k] for k in sorted(self._caps)]

    def reserve(self, entry: SpendEntry) -> Admission:
        return self.reserve_all([entry])

    def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        with self._lock:
            # A key let go before (its call failed, or its batch was cancelled) is judged and reserved anew.
            new = distinct(e for e in entries if e.key not in self._entries or e.key in self._released)
            if not new:
                return Admission(Decimal(0))
            at = new[0].created_at
            admission = judge_all(new, [self._standing(cap, at) for cap in owners_caps(self._caps.values(), new)])
            if admission.admitted:
                self._entries.update((e.key, e) for e in new)
                self._released.difference_update(e.key for e in new)
                for e in new:
                    self._settled.pop(e.key, None)
            self._audit.extend(audits_of(new, admission))
            return admission

    def release(self, key: str, *, at: float, host: str) -> None:
        self.release_all([key], at=at, host=host)

    def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None or key in self._released:
                    continue
                self._released.add(key)
                worst = entry.worst_case_usd
                self._audit.append(
                    AuditRecord(at, AuditAction.RELEASE, key, entry.owner, entry.actor, worst, None, host)
                )

    def settle(self, key: str, cost_usd: Decimal) -> None:
        with self._lock:
            if key in self._entries and key not in self._released:
                self._settled[key] = cost_usd

    def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        with self._lock:
            released = [self._entries[k] for k in dict.fromkeys(keys) if k in self._entries and k not in self._released]
            self._released.update(e.key for e in released)
            self._audit.extend(cancel_audits(batch, released, at=at, host=host))

    def record_audit(self, record: AuditRecord) -> None:
        with self._lock:
            self._audit.append(record)

    def spend_lines(self, since: float | None = None) -> list[SpendLine]:
        with self._lock:
            lines: dict[tuple[str, str | None, str | None, str, str], list[Decimal]] = {}
            for entry in self._entries.values():
                if since is not None and entry.created_at < since:
                    continue
                spent, reserved = self._spend(entry)
                o = entry.owner
                line = lines.setdefault(
                    (day_of(entry.created_at), o.team, o.project, entry.actor, entry.model),
                    [Decimal(0), Decimal(0), Decimal(0)],
                )
                line[0] += spent
                line[1] += reserved
                line[2] += 1
            return [
                SpendLine(day, team, project, actor, model, sums[0], sums[1], int(sums[2]))
                for (day, team, project, actor, model), sums in sorted(lines.items(), key=_line_order)
            ]

    def audit(self, since: float | None = None) -> list[AuditRecord]:
        with self._lock:
            return [r for r in self._audit if since is None or r.at >= since]

    def rows(self, table: str) -> list[tuple[object, ...]]:
        """The rows of the spend table `table` as `records.COPIED` lists their columns (what a copy moves)."""
        with self._lock:
            if table == "spend_caps":
                return [
                    (c.scope.value, c.name, c.period.value, str(c.limit_usd)) for _, c in sorted(self._caps.items())
                ]
            if table == "spend_entries":
                return [
                    _entry_row(e, e.key in self._released, self._settled.get(e.key)) for e in self._entries.values()
                ]
            return [_audit_row(r) for r in self._audit]

    def load_row(self, table: str, v: Mapping[str, Any]) -> None:
        """One row of another ledger's spend table `table`, its columns by name (`records.COPIED`)."""
        with self._lock:
            owner = Owner(v.get("team"), v.get("project"), tags_of(v.get("tags")))
            if table == "spend_caps":
                cap = SpendCap(CapScope(v["scope"]), v["name"], CapPeriod(v["period"]), Decimal(str(v["limit_usd"])))
                self._caps[cap.scope, cap.name, cap.period] = cap
            elif table == "spend_entries":
                key = v["key"]
                self._entries[key] = SpendEntry(
                    key, owner, v["actor"], v["model"], Decimal(str(v["worst_case_usd"])), float(v["created_at"]),
                    v["host"],
                )  # fmt: skip
                if int(v["released"]):
                    self._released.add(key)
                if v["cost_usd"] is not None:
                    self._settled[key] = Decimal(str(v["cost_usd"]))
            else:
                self._audit.append(
                    AuditRecord(
                        float(v["at"]), AuditAction(v["action"]), v["subject"], owner, v["actor"],
                        _decimal(v["worst_case_usd"]), _decimal(v["cap_left_usd"]), v["host"],
                    )
                )  # fmt: skip

    def _standing(self, cap: SpendCap, now: float) -> CapStanding:
        start = window_start(cap.period, now)
        of_cap: Callable[[SpendEntry], str | None] = (
            (lambda e: e.owner.team) if cap.scope is CapScope.TEAM else (lambda e: e.owner.project)
        )
        spent = reserved = Decimal(0)
        for entry in self._entries.values():
            if of_cap(entry) == cap.name and (start is None or entry.created_at >= start):
                s, r = self._spend(entry)
                spent += s
                reserved += r
        return CapStanding(cap, spent, reserved)

    def _spend(self, entry: SpendEntry) -> tuple[Decimal, Decimal]:
        settled = self._settled.get(entry.key)
        if settled is not None:
            return spend_of(entry, None, None, False, settled)
        t = self._tables
        r = t.requests.get(entry.key)
        if r is None:
            return spend_of(entry, None, None, entry.key in self._released)
        if t.view_state(r) in _UNANSWERED:
            return spend_of(entry, False, None, entry.key in self._released)
        o = t.outcome(r)
        return spend_of(entry, True, o.cost_usd if o is not None else None, False)


def _entry_row(entry: SpendEntry, released: bool, settled: Decimal | None) -> tuple[object, ...]:
    o = entry.owner
    return (
        entry.key, o.team, o.project, tags_json(o.tags), entry.actor, entry.model, str(entry.worst_case_usd),
        entry.created_at, entry.host, int(released), None if settled is None else str(settled),
    )  # fmt: skip


def _audit_row(r: AuditRecord) -> tuple[object, ...]:
    o = r.owner
    return (
        r.at, r.action.value, r.subject, o.team, o.project, tags_json(o.tags), r.actor, _text(r.worst_case_usd),
        _text(r.cap_left_usd), r.host,
    )  # fmt: skip


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _decimal(value: object) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _line_order(item: tuple[tuple[str, str | None, str | None, str, str], list[Decimal]]) -> tuple[str, ...]:
    day, team, project, actor, model = item[0]
    return (day, team or "", project or "", actor, model)
