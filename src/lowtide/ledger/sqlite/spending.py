"""`SqliteSpending`: the SQLite ledger's spend by owner (`spending.SpendLedger`), in its `spend_caps`,
`spend_entries` and `spend_audit` tables; an admission reads its caps' standing and writes its entry in one
`BEGIN IMMEDIATE` transaction, so that of two processes admitting at once the second sees the first's entry."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

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
    tags_json,
    tags_of,
    window_start,
)
from lowtide.ledger.sqlite.connection import SqliteFile, chunks
from lowtide.ledger.sqlite.schema import REQUEST_OUTCOME, REQUEST_STATE

__all__ = ["SqliteSpending"]

_WAITING = f"{REQUEST_STATE} IN ('pending', 'submitting', 'waiting-on-batch')"
_SPENT = (
    "CASE WHEN e.cost_usd IS NOT NULL THEN CAST(e.cost_usd AS REAL)"
    f" WHEN r.key IS NULL OR {_WAITING} THEN 0 ELSE COALESCE(CAST(o.cost_usd AS REAL), 0) END"
)
_RESERVED = (
    f"CASE WHEN e.released = 0 AND e.cost_usd IS NULL AND (r.key IS NULL OR {_WAITING})"
    " THEN CAST(e.worst_case_usd AS REAL) ELSE 0 END"
)
_SPEND = f"FROM spend_entries e LEFT JOIN requests r ON r.key = e.key {REQUEST_OUTCOME}"
"""Each admitted request with its state and answer: spent once answered, its worst case reserved until then."""
_AGAIN = (
    "ON CONFLICT (key) DO UPDATE SET team = excluded.team, project = excluded.project, tags = excluded.tags,"
    " actor = excluded.actor, model = excluded.model, worst_case_usd = excluded.worst_case_usd,"
    " created_at = excluded.created_at, host = excluded.host, released = 0, cost_usd = NULL"
)
"""A key let go before (its call failed, or its batch was cancelled), admitted again: judged and reserved anew."""
_AUDIT = "at, action, subject, team, project, tags, actor, worst_case_usd, cap_left_usd, host"


class SqliteSpending:
    """The spend by owner of one ledger file."""

    def __init__(self, ledger: SqliteFile) -> None:
        self.ledger = ledger

    def set_cap(self, cap: SpendCap) -> None:
        with self.ledger.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO spend_caps (scope, name, period, limit_usd) VALUES (?, ?, ?, ?)",
                (cap.scope.value, cap.name, cap.period.value, str(cap.limit_usd)),
            )

    def remove_cap(self, scope: CapScope, name: str, period: CapPeriod) -> bool:
        with self.ledger.transaction() as db:
            gone = db.execute(
                "DELETE FROM spend_caps WHERE scope = ? AND name = ? AND period = ?", (scope.value, name, period.value)
            )
            return gone.rowcount > 0

    def caps(self) -> list[SpendCap]:
        rows = self.ledger.select("SELECT scope, name, period, limit_usd FROM spend_caps ORDER BY scope, name, period")
        return [_cap_of(row) for row in rows]

    def reserve(self, entry: SpendEntry) -> Admission:
        return self.reserve_all([entry])

    def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        with self.ledger.transaction() as db:
            given = distinct(entries)
            known: set[str] = set()
            for chunk in chunks([e.key for e in given]):
                marks = ", ".join("?" * len(chunk))
                held = f"SELECT key FROM spend_entries WHERE key IN ({marks}) AND released = 0"
                known.update(k for (k,) in db.execute(held, chunk))
            new = [e for e in given if e.key not in known]
            if not new:
                return Admission(Decimal(0))
            caps = [_cap_of(row) for row in db.execute("SELECT scope, name, period, limit_usd FROM spend_caps")]
            standings = [_standing(db, cap, new[0].created_at) for cap in owners_caps(caps, new)]
            admission = judge_all(new, standings)
            if admission.admitted:
                db.executemany(
                    "INSERT INTO spend_entries (key, team, project, tags, actor, model, worst_case_usd, created_at,"
                    f" host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) {_AGAIN}",
                    [
                        (e.key, e.owner.team, e.owner.project, tags_json(e.owner.tags), e.actor, e.model,
                         str(e.worst_case_usd), e.created_at, e.host)
                        for e in new
                    ],
                )  # fmt: skip
            _audits(db, audits_of(new, admission))
        return admission

    def release(self, key: str, *, at: float, host: str) -> None:
        self.release_all([key], at=at, host=host)

    def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        with self.ledger.transaction() as db:
            for key in keys:
                row = db.execute(
                    "UPDATE spend_entries SET released = 1 WHERE key = ? AND released = 0"
                    " RETURNING team, project, tags, actor, worst_case_usd",
                    (key,),
                ).fetchone()
                if row is not None:
                    owner = Owner(row[0], row[1], tags_of(row[2]))
                    _audit(db, AuditRecord(at, AuditAction.RELEASE, key, owner, row[3], Decimal(row[4]), None, host))

    def settle(self, key: str, cost_usd: Decimal) -> None:
        with self.ledger.transaction() as db:
            db.execute("UPDATE spend_entries SET cost_usd = ? WHERE key = ? AND released = 0", (str(cost_usd), key))

    def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        with self.ledger.transaction() as db:
            released: list[SpendEntry] = []
            for key in dict.fromkeys(keys):
                row = db.execute(
                    "UPDATE spend_entries SET released = 1 WHERE key = ? AND released = 0"
                    " RETURNING team, project, tags, actor, model, worst_case_usd, created_at, host",
                    (key,),
                ).fetchone()
                if row is not None:
                    owner = Owner(row[0], row[1], tags_of(row[2]))
                    released.append(SpendEntry(key, owner, row[3], row[4], Decimal(row[5]), row[6], row[7]))
            _audits(db, cancel_audits(batch, released, at=at, host=host))

    def record_audit(self, record: AuditRecord) -> None:
        with self.ledger.transaction() as db:
            _audit(db, record)

    def spend_lines(self, since: float | None = None) -> list[SpendLine]:
        rows = self.ledger.select(
            f"SELECT e.created_at, e.team, e.project, e.actor, e.model, {_SPENT}, {_RESERVED} {_SPEND}"
            " WHERE e.created_at >= ?",
            (since if since is not None else float("-inf"),),
        )
        lines: dict[tuple[str, str | None, str | None, str, str], list[float]] = {}
        for at, team, project, actor, model, spent, reserved in rows:
            line = lines.setdefault((day_of(at), team, project, actor, model), [0.0, 0.0, 0])
            line[0] += spent
            line[1] += reserved
            line[2] += 1
        return [
            SpendLine(*group, _usd(sums[0]), _usd(sums[1]), int(sums[2]))
            for group, sums in sorted(lines.items(), key=lambda item: tuple(part or "" for part in item[0]))
        ]

    def audit(self, since: float | None = None) -> list[AuditRecord]:
        rows = self.ledger.select(
            f"SELECT {_AUDIT} FROM spend_audit WHERE at >= ? ORDER BY seq",
            (since if since is not None else float("-inf"),),
        )
        return [_audit_record(row) for row in rows]


def _standing(db: sqlite3.Connection, cap: SpendCap, now: float) -> CapStanding:
    start = window_start(cap.period, now)
    column = "e.team" if cap.scope is CapScope.TEAM else "e.project"
    spent, reserved = db.execute(
        f"SELECT COALESCE(SUM({_SPENT}), 0), COALESCE(SUM({_RESERVED}), 0) {_SPEND}"
        f" WHERE {column} = ? AND e.created_at >= ?",
        (cap.name, start if start is not None else float("-inf")),
    ).fetchone()
    return CapStanding(cap, _usd(spent), _usd(reserved))


def _audit(db: sqlite3.Connection, r: AuditRecord) -> None:
    _audits(db, [r])


def _audits(db: sqlite3.Connection, records: Sequence[AuditRecord]) -> None:
    db.executemany(
        f"INSERT INTO spend_audit ({_AUDIT}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                r.at, r.action.value, r.subject, r.owner.team, r.owner.project, tags_json(r.owner.tags), r.actor,
                _text(r.worst_case_usd), _text(r.cap_left_usd), r.host,
            )
            for r in records
        ],
    )  # fmt: skip


def _audit_record(row: Any) -> AuditRecord:
    at, action, subject, team, project, tags, actor, worst, left, host = row
    return AuditRecord(
        at, AuditAction(action), subject, Owner(team, project, tags_of(tags)), actor, _decimal(worst),
        _decimal(left), host,
    )  # fmt: skip


def _cap_of(row: Any) -> SpendCap:
    return SpendCap(CapScope(row[0]), row[1], CapPeriod(row[2]), Decimal(row[3]))


def _usd(total: float) -> Decimal:
    """A sum in floating point (SQLite's), to the micro-cent, as the views read theirs."""
    return round(Decimal(str(total)), 8)


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _decimal(value: str | None) -> Decimal | None:
    return None if value is None else Decimal(value)
