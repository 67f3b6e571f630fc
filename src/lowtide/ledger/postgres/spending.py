"""A PostgreSQL ledger's spend by owner (`spending.SpendLedger`), as operations (`steps.Op`) its sync face
(`PostgresSpending`) and async face (`AsyncPostgresSpending`) both run. An admission locks the caps over its owner
(`FOR UPDATE`, in `caps_over`'s order) before it reads their standing, and writes its entry in the same
transaction: a host admitting at the same moment waits for that lock, then reads the committed entry (each statement
of a READ COMMITTED transaction sees what was committed before it began), so that hosts together never cross a cap."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import Any, LiteralString, TypeVar

from lowtide.ledger.postgres.pool import PostgresPool, SyncPool
from lowtide.ledger.postgres.steps import Op, Sql, run, run_again, run_again_async, run_async
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
    audit_of,
    caps_over,
    day_of,
    judge,
    tags_json,
    tags_of,
    window_start,
)

__all__ = ["AsyncPostgresSpending", "PostgresSpending"]

T = TypeVar("T")

_WAITING: LiteralString = "v.state IN ('pending', 'submitting', 'waiting-on-batch')"
_SPENT: LiteralString = f"CASE WHEN v.key IS NULL OR {_WAITING} THEN 0 ELSE COALESCE(v.cost_usd::numeric, 0) END"
_RESERVED: LiteralString = (
    f"CASE WHEN (v.key IS NULL AND NOT e.released) OR (v.key IS NOT NULL AND {_WAITING})"
    " THEN e.worst_case_usd ELSE 0 END"
)
_SPEND: LiteralString = "FROM spend_entries e LEFT JOIN request_view v ON v.key = e.key"
_AUDIT: LiteralString = "at, action, subject, team, project, tags, actor, worst_case_usd, cap_left_usd, host"
_CAPS: LiteralString = "SELECT scope, name, period, limit_usd FROM spend_caps"


class PostgresSpending:
    """The spend by owner of one PostgreSQL ledger, from this thread."""

    def __init__(self, pool: SyncPool) -> None:
        self._pool = pool

    def set_cap(self, cap: SpendCap) -> None:
        run(self._pool, "set a spend cap", partial(_set_cap, cap))

    def remove_cap(self, scope: CapScope, name: str, period: CapPeriod) -> bool:
        return run(self._pool, "remove a spend cap", partial(_remove_cap, scope, name, period))

    def caps(self) -> list[SpendCap]:
        return run(self._pool, "read the spend caps", _caps, transaction=False)

    def reserve(self, entry: SpendEntry) -> Admission:
        return run_again(self._pool, "reserve a worst case", partial(_reserve, entry))

    def release(self, key: str, *, at: float, host: str) -> None:
        run(self._pool, "release a reservation", partial(_release, key, at, host))

    def record_audit(self, record: AuditRecord) -> None:
        run(self._pool, "record an audit record", partial(_record_audit, record))

    def spend_lines(self, since: float | None = None) -> list[SpendLine]:
        return run(self._pool, "read the spend", partial(_spend_lines, since), transaction=False)

    def audit(self, since: float | None = None) -> list[AuditRecord]:
        return run(self._pool, "read the audit", partial(_audit, since), transaction=False)


class AsyncPostgresSpending:
    """What a call awaits of a PostgreSQL ledger's spend, on the event loop's connections."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def reserve(self, entry: SpendEntry) -> Admission:
        return await run_again_async(self._pool, "reserve a worst case", partial(_reserve, entry))

    async def release(self, key: str, *, at: float, host: str) -> None:
        await self._do("release a reservation", partial(_release, key, at, host))

    async def record_audit(self, record: AuditRecord) -> None:
        await self._do("record an audit record", partial(_record_audit, record))

    async def _do(self, doing: str, make: Callable[[], Op[T]]) -> T:
        return await run_async(self._pool, doing, make)


def _set_cap(cap: SpendCap) -> Op[None]:
    yield Sql(
        "INSERT INTO spend_caps (scope, name, period, limit_usd) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (scope, name, period) DO UPDATE SET limit_usd = excluded.limit_usd",
        (cap.scope.value, cap.name, cap.period.value, cap.limit_usd),
    )


def _remove_cap(scope: CapScope, name: str, period: CapPeriod) -> Op[bool]:
    reply = yield Sql(
        "DELETE FROM spend_caps WHERE scope = %s AND name = %s AND period = %s", (scope.value, name, period.value)
    )
    return reply.rowcount > 0


def _caps() -> Op[list[SpendCap]]:
    reply = yield Sql(f"{_CAPS} ORDER BY scope, name, period")
    return [_cap_of(row) for row in reply.rows]


def _reserve(entry: SpendEntry) -> Op[Admission]:
    e, o = entry, entry.owner
    if (yield Sql("SELECT 1 FROM spend_entries WHERE key = %s", (e.key,))).one() is not None:
        return Admission(Decimal(0))
    scopes = o.scopes()
    standings: list[CapStanding] = []
    if scopes:
        found = yield Sql(
            f"{_CAPS} WHERE (scope, name) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
            " ORDER BY scope, name, period FOR UPDATE",
            ([scope.value for scope, _ in scopes], [name for _, name in scopes]),
        )
        for cap in caps_over([_cap_of(row) for row in found.rows], o):
            start = window_start(cap.period, e.created_at)
            column = "e.team" if cap.scope is CapScope.TEAM else "e.project"
            sums = yield Sql(
                f"SELECT COALESCE(SUM({_SPENT}), 0), COALESCE(SUM({_RESERVED}), 0) {_SPEND}"
                f" WHERE {column} = %s AND e.created_at >= %s",
                (cap.name, start if start is not None else float("-inf")),
            )
            row = sums.one()
            assert row is not None
            standings.append(CapStanding(cap, Decimal(row[0]), Decimal(row[1])))
    admission = judge(e.worst_case_usd, standings)
    if admission.admitted:
        inserted = yield Sql(
            "INSERT INTO spend_entries (key, team, project, tags, actor, model, worst_case_usd, created_at, host)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
            (e.key, o.team, o.project, tags_json(o.tags), e.actor, e.model, e.worst_case_usd, e.created_at, e.host),
        )
        if inserted.rowcount == 0:
            return Admission(Decimal(0))  # admitted by another host at this moment: its owner stays the first
    yield from _record_audit(audit_of(entry, admission))
    return admission


def _release(key: str, at: float, host: str) -> Op[None]:
    reply = yield Sql(
        "UPDATE spend_entries SET released = TRUE WHERE key = %s AND NOT released"
        " RETURNING team, project, tags, actor, worst_case_usd",
        (key,),
    )
    row = reply.one()
    if row is not None:
        owner = Owner(row[0], row[1], tags_of(row[2]))
        yield from _record_audit(AuditRecord(at, AuditAction.RELEASE, key, owner, row[3], Decimal(row[4]), None, host))


def _record_audit(r: AuditRecord) -> Op[None]:
    yield Sql(
        f"INSERT INTO spend_audit ({_AUDIT}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            r.at, r.action.value, r.subject, r.owner.team, r.owner.project, tags_json(r.owner.tags), r.actor,
            r.worst_case_usd, r.cap_left_usd, r.host,
        ),
    )  # fmt: skip


def _spend_lines(since: float | None) -> Op[list[SpendLine]]:
    reply = yield Sql(
        f"SELECT e.created_at, e.team, e.project, e.actor, e.model, {_SPENT}, {_RESERVED} {_SPEND}"
        " WHERE e.created_at >= %s",
        (since if since is not None else float("-inf"),),
    )
    lines: dict[tuple[str, str | None, str | None, str, str], list[Decimal]] = {}
    for at, team, project, actor, model, spent, reserved in reply.rows:
        line = lines.setdefault((day_of(at), team, project, actor, model), [Decimal(0), Decimal(0), Decimal(0)])
        line[0] += spent
        line[1] += reserved
        line[2] += 1
    return [
        SpendLine(*group, sums[0], sums[1], int(sums[2]))
        for group, sums in sorted(lines.items(), key=lambda item: tuple(part or "" for part in item[0]))
    ]


def _audit(since: float | None) -> Op[list[AuditRecord]]:
    reply = yield Sql(
        f"SELECT {_AUDIT} FROM spend_audit WHERE at >= %s ORDER BY seq",
        (since if since is not None else float("-inf"),),
    )
    return [
        AuditRecord(at, AuditAction(action), subject, Owner(team, project, tags_of(tags)), actor, worst, left, host)
        for at, action, subject, team, project, tags, actor, worst, left, host in reply.rows
    ]


def _cap_of(row: tuple[Any, ...]) -> SpendCap:
    return SpendCap(CapScope(row[0]), row[1], CapPeriod(row[2]), Decimal(row[3]))
