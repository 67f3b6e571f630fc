"""A PostgreSQL ledger's spend by owner (`spending.SpendLedger`), as operations (`steps.Op`) its sync face
(`PostgresSpending`) and async face (`AsyncPostgresSpending`) both run. An admission locks the caps over its owner
(`FOR UPDATE`, in `owners_caps`' order) before it reads their standing, and writes its entry in the same
transaction: a host admitting at the same moment waits for that lock, then reads the committed entry (each statement
of a READ COMMITTED transaction sees what was committed before it began), so that hosts together never cross a cap."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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

__all__ = ["AsyncPostgresSpending", "PostgresSpending"]

T = TypeVar("T")

_WAITING: LiteralString = "v.state IN ('pending', 'submitting', 'waiting-on-batch')"
_SPENT: LiteralString = (
    "CASE WHEN e.cost_usd IS NOT NULL THEN e.cost_usd"
    f" WHEN v.key IS NULL OR {_WAITING} THEN 0 ELSE COALESCE(v.cost_usd::numeric, 0) END"
)
_RESERVED: LiteralString = (
    f"CASE WHEN NOT e.released AND e.cost_usd IS NULL AND (v.key IS NULL OR {_WAITING})"
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
        return self.reserve_all([entry])

    def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        return run_again(self._pool, "reserve worst cases", partial(_reserve, entries))

    def release(self, key: str, *, at: float, host: str) -> None:
        self.release_all([key], at=at, host=host)

    def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        run(self._pool, "release reservations", partial(_release, keys, at, host))

    def settle(self, key: str, cost_usd: Decimal) -> None:
        run(self._pool, "settle a live call's spend", partial(_settle, key, cost_usd))

    def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        run(self._pool, "let go of a cancelled batch's reservations", partial(_cancel, batch, keys, at, host))

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
        return await self.reserve_all([entry])

    async def reserve_all(self, entries: Sequence[SpendEntry]) -> Admission:
        return await run_again_async(self._pool, "reserve worst cases", partial(_reserve, entries))

    async def release(self, key: str, *, at: float, host: str) -> None:
        await self.release_all([key], at=at, host=host)

    async def release_all(self, keys: Sequence[str], *, at: float, host: str) -> None:
        await self._do("release reservations", partial(_release, keys, at, host))

    async def settle(self, key: str, cost_usd: Decimal) -> None:
        await self._do("settle a live call's spend", partial(_settle, key, cost_usd))

    async def cancel_all(self, batch: str, keys: Sequence[str], *, at: float, host: str) -> None:
        await self._do("let go of a cancelled batch's reservations", partial(_cancel, batch, keys, at, host))

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


def _reserve(entries: Sequence[SpendEntry]) -> Op[Admission]:
    given = distinct(entries)
    recorded = yield Sql(
        "SELECT key FROM spend_entries WHERE key = ANY(%s::text[]) AND NOT released", ([e.key for e in given],)
    )
    known = {row[0] for row in recorded.rows}
    new = [e for e in given if e.key not in known]
    if not new:
        return Admission(Decimal(0))
    scopes = sorted({scope for e in new for scope in e.owner.scopes()})
    standings: list[CapStanding] = []
    if scopes:
        found = yield Sql(
            f"{_CAPS} WHERE (scope, name) IN (SELECT * FROM unnest(%s::text[], %s::text[]))"
            " ORDER BY scope, name, period FOR UPDATE",
            ([scope.value for scope, _ in scopes], [name for _, name in scopes]),
        )
        for cap in owners_caps([_cap_of(row) for row in found.rows], new):
            start = window_start(cap.period, new[0].created_at)
            column = "e.team" if cap.scope is CapScope.TEAM else "e.project"
            sums = yield Sql(
                f"SELECT COALESCE(SUM({_SPENT}), 0), COALESCE(SUM({_RESERVED}), 0) {_SPEND}"
                f" WHERE {column} = %s AND e.created_at >= %s",
                (cap.name, start if start is not None else float("-inf")),
            )
            row = sums.one()
            assert row is not None
            standings.append(CapStanding(cap, Decimal(row[0]), Decimal(row[1])))
    admission = judge_all(new, standings)
    if admission.admitted:
        inserted = yield Sql(
            "INSERT INTO spend_entries (key, team, project, tags, actor, model, worst_case_usd, created_at, host)"
            " SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
            " %s::numeric[], %s::float8[], %s::text[])"
            " ON CONFLICT (key) DO UPDATE SET team = excluded.team, project = excluded.project, tags = excluded.tags,"
            " actor = excluded.actor, model = excluded.model, worst_case_usd = excluded.worst_case_usd,"
            " created_at = excluded.created_at, host = excluded.host, released = FALSE, cost_usd = NULL"
            " WHERE spend_entries.released"
            " RETURNING key",
            (
                [e.key for e in new], [e.owner.team for e in new], [e.owner.project for e in new],
                [tags_json(e.owner.tags) for e in new], [e.actor for e in new], [e.model for e in new],
                [e.worst_case_usd for e in new], [e.created_at for e in new], [e.host for e in new],
            ),
        )  # fmt: skip
        mine = {row[0] for row in inserted.rows}
        # A key admitted by another host at this very moment (no cap locked between them) keeps its first owner; one
        # let go before (its call failed, or its batch was cancelled) is admitted anew.
        new = [e for e in new if e.key in mine]
    yield from _record_audits(audits_of(new, admission))
    return admission


def _release(keys: Sequence[str], at: float, host: str) -> Op[None]:
    reply = yield Sql(
        "UPDATE spend_entries SET released = TRUE WHERE key = ANY(%s::text[]) AND NOT released"
        " RETURNING key, team, project, tags, actor, worst_case_usd",
        (list(keys),),
    )
    yield from _record_audits(
        [
            AuditRecord(at, AuditAction.RELEASE, key, Owner(team, project, tags_of(tags)), actor, Decimal(worst), None,
                        host)
            for key, team, project, tags, actor, worst in reply.rows
        ]
    )  # fmt: skip


def _cancel(batch: str, keys: Sequence[str], at: float, host: str) -> Op[None]:
    reply = yield Sql(
        "UPDATE spend_entries SET released = TRUE WHERE key = ANY(%s::text[]) AND NOT released"
        " RETURNING key, team, project, tags, actor, model, worst_case_usd, created_at, host",
        (list(keys),),
    )
    released = [
        SpendEntry(key, Owner(team, project, tags_of(tags)), actor, model, Decimal(worst), created, made_on)
        for key, team, project, tags, actor, model, worst, created, made_on in reply.rows
    ]
    yield from _record_audits(cancel_audits(batch, released, at=at, host=host))


def _settle(key: str, cost_usd: Decimal) -> Op[None]:
    yield Sql("UPDATE spend_entries SET cost_usd = %s WHERE key = %s AND NOT released", (cost_usd, key))


def _record_audit(r: AuditRecord) -> Op[None]:
    yield Sql(
        f"INSERT INTO spend_audit ({_AUDIT}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            r.at, r.action.value, r.subject, r.owner.team, r.owner.project, tags_json(r.owner.tags), r.actor,
            r.worst_case_usd, r.cap_left_usd, r.host,
        ),
    )  # fmt: skip


def _record_audits(records: Sequence[AuditRecord]) -> Op[None]:
    """Many audit records in one statement (a batch's creates)."""
    if len(records) == 1:
        yield from _record_audit(records[0])
        return
    if not records:
        return
    yield Sql(
        f"INSERT INTO spend_audit ({_AUDIT}) SELECT * FROM unnest(%s::float8[], %s::text[], %s::text[], %s::text[],"
        " %s::text[], %s::text[], %s::text[], %s::numeric[], %s::numeric[], %s::text[])",
        (
            [r.at for r in records], [r.action.value for r in records], [r.subject for r in records],
            [r.owner.team for r in records], [r.owner.project for r in records],
            [tags_json(r.owner.tags) for r in records], [r.actor for r in records],
            [r.worst_case_usd for r in records], [r.cap_left_usd for r in records], [r.host for r in records],
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
