"""What the ledger keeps of spend by owner (`spending.SpendLedger`): who a request's cost belongs to (its team,
project, actor and tags), the caps set on a team or a project, the audit of each create and cancel, and the one pure
judgement of a worst case against the caps every store applies inside its own transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum

__all__ = [
    "Admission",
    "AuditAction",
    "AuditRecord",
    "CapPeriod",
    "CapScope",
    "CapStanding",
    "Owner",
    "SpendCap",
    "SpendEntry",
    "SpendLine",
    "audit_of",
    "audits_of",
    "cancel_audits",
    "day_of",
    "distinct",
    "exact_usd",
    "judge_all",
    "owners_caps",
    "spend_of",
    "tags_json",
    "tags_of",
    "window_start",
]


class CapScope(StrEnum):
    """What a cap is set on."""

    TEAM = "team"
    PROJECT = "project"


class CapPeriod(StrEnum):
    """The window a cap counts spend in, by the moment each request was admitted (UTC)."""

    DAY = "day"
    MONTH = "month"
    ALL = "all"


class AuditAction(StrEnum):
    CREATE = "create"
    """A request admitted: its worst case reserved against its owner's caps, before anything is sent."""
    REFUSED = "refused"
    """A request refused by a cap: nothing was recorded or sent."""
    CANCEL = "cancel"
    """A batch cancelled (`lowtide cancel`, `Actor.cancel`)."""
    RELEASE = "release"
    """A reservation let go: the call failed before the ledger recorded it, so it costs nothing."""


@dataclass(frozen=True, slots=True)
class Owner:
    """Who a request's cost belongs to: a team, a project and free tags (each may be unset)."""

    team: str | None = None
    project: str | None = None
    tags: tuple[tuple[str, str], ...] = ()

    @property
    def known(self) -> bool:
        """Whether anything names an owner: a request of no owner is not attributed (nor capped) at all."""
        return self.team is not None or self.project is not None or bool(self.tags)

    def scopes(self) -> list[tuple[CapScope, str]]:
        """The (scope, name) pairs a cap may be set on for this owner."""
        found: list[tuple[CapScope, str]] = []
        if self.team is not None:
            found.append((CapScope.TEAM, self.team))
        if self.project is not None:
            found.append((CapScope.PROJECT, self.project))
        return found


@dataclass(frozen=True, slots=True)
class SpendCap:
    """At most `limit_usd` spent (and reserved) by the team or project `name` in each `period`."""

    scope: CapScope
    name: str
    period: CapPeriod
    limit_usd: Decimal

    def covers(self, owner: Owner) -> bool:
        """Whether a request of `owner` counts against this cap."""
        return (self.scope, self.name) in owner.scopes()

    def describe(self) -> str:
        per = "in all" if self.period is CapPeriod.ALL else f"per {self.period.value}"
        return f"{self.scope.value} {self.name!r}'s cap of {exact_usd(self.limit_usd)} {per}"


def exact_usd(value: Decimal) -> str:
    """Dollars exactly as set, cents at least: a cap reads as its owner gave it ($25.00, $0.015, $0.000001), never
    rounded to cents (where $0.000001 read $0.00 and $0.015 read $0.02)."""
    exponent = value.normalize().as_tuple().exponent
    places = max(2, -exponent) if isinstance(exponent, int) else 2
    return f"${value:,.{places}f}"


@dataclass(frozen=True, slots=True)
class SpendEntry:
    """A request's owner and worst case, recorded when it is admitted: its cost is its owner's from then on."""

    key: str
    owner: Owner
    actor: str
    model: str
    worst_case_usd: Decimal
    created_at: float
    host: str


@dataclass(frozen=True, slots=True)
class CapStanding:
    """Where a cap stood when a request was judged against it: what its window holds spent (answers' costs) and
    reserved (worst cases of requests not answered yet)."""

    cap: SpendCap
    spent_usd: Decimal
    reserved_usd: Decimal

    @property
    def left_usd(self) -> Decimal:
        return self.cap.limit_usd - self.spent_usd - self.reserved_usd


@dataclass(frozen=True, slots=True)
class Admission:
    """A request judged against its owner's caps: admitted (its worst case reserved), or refused by `refused_by`."""

    adds_usd: Decimal
    standings: tuple[CapStanding, ...] = ()
    refused_by: CapStanding | None = None
    requests: int = 1
    """How many requests were judged together (`judge_all`)."""

    @property
    def admitted(self) -> bool:
        return self.refused_by is None

    @property
    def cap_left_usd(self) -> Decimal | None:
        """What is left of the tightest cap once this request's worst case is counted (None: no cap applies)."""
        if not self.standings:
            return None
        return min(s.left_usd for s in self.standings) - self.adds_usd


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """Who did what, with what worst case, and what was left of their tightest cap after it."""

    at: float
    action: AuditAction
    subject: str
    """The request's key (create, refused, release) or the batch's id (cancel)."""
    owner: Owner
    actor: str
    worst_case_usd: Decimal | None
    cap_left_usd: Decimal | None
    host: str


@dataclass(frozen=True, slots=True)
class SpendLine:
    """Spend of one team, project, actor and model on one day (UTC): what answers cost, what is still reserved."""

    day: str
    team: str | None
    project: str | None
    actor: str
    model: str
    spent_usd: Decimal
    reserved_usd: Decimal
    requests: int
    tags: tuple[tuple[str, str], ...] = field(default=())


def window_start(period: CapPeriod, now: float) -> float | None:
    """The first moment of the window of `period` holding `now` (UTC), or None (a cap in all: no window)."""
    moment = datetime.fromtimestamp(now, UTC)
    if period is CapPeriod.DAY:
        return moment.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    if period is CapPeriod.MONTH:
        return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp()
    return None


def day_of(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d")


def judge_all(entries: Sequence[SpendEntry], standings: Sequence[CapStanding]) -> Admission:
    """Admit `entries` together (all or none): each cap's room must hold the worst cases of the entries its scope
    covers; else refuse them all by the first cap they would cross together."""
    total = sum((e.worst_case_usd for e in entries), Decimal(0))
    for standing in standings:
        covered = sum((e.worst_case_usd for e in entries if standing.cap.covers(e.owner)), Decimal(0))
        if standing.spent_usd + standing.reserved_usd + covered > standing.cap.limit_usd:
            return Admission(total, tuple(standings), standing, len(entries))
    return Admission(total, tuple(standings), requests=len(entries))


def distinct(entries: Iterable[SpendEntry]) -> list[SpendEntry]:
    """Each key's first entry, in order: a key given twice in one group is reserved once."""
    firsts: dict[str, SpendEntry] = {}
    for entry in entries:
        firsts.setdefault(entry.key, entry)
    return list(firsts.values())


def owners_caps(caps: Iterable[SpendCap], entries: Sequence[SpendEntry]) -> list[SpendCap]:
    """The caps over any of `entries`' owners, each once, in a fixed order (scope, name, period): every store locks
    them in that order, so that two hosts never wait on each other in a circle."""
    scopes = {scope for e in entries for scope in e.owner.scopes()}
    return sorted((c for c in caps if (c.scope, c.name) in scopes), key=lambda c: (c.scope, c.name, c.period))


def audits_of(entries: Sequence[SpendEntry], admission: Admission) -> list[AuditRecord]:
    """The audit records of `entries` judged together: a create each when admitted; refused, one record of the
    whole group (under its first key, with the group's worst case), so that a run retrying a group does not write one
    refusal per item each time."""
    if not entries:
        return []
    if admission.admitted:
        return [audit_of(entry, admission) for entry in entries]
    first = entries[0]
    return [
        AuditRecord(
            first.created_at, AuditAction.REFUSED, first.key, first.owner, first.actor, admission.adds_usd,
            admission.cap_left_usd, first.host,
        )
    ]  # fmt: skip


def tags_json(tags: tuple[tuple[str, str], ...]) -> str:
    """Tags as stored: a JSON object, keys sorted."""
    return json.dumps(dict(sorted(tags)), sort_keys=True, separators=(",", ":"))


def tags_of(stored: str | None) -> tuple[tuple[str, str], ...]:
    if not stored:
        return ()
    loaded: dict[str, str] = json.loads(stored)
    return tuple(sorted(loaded.items()))


def spend_of(
    entry: SpendEntry, answered: bool | None, cost_usd: Decimal | None, released: bool, settled: Decimal | None = None
) -> tuple[Decimal, Decimal]:
    """(spent, reserved) of one admitted request: `settled`, what it cost when answered outside the ledger's requests
    (a live call: `SpendLedger.settle`), is spent; else `answered` None while the ledger holds no request of its key,
    False while it waits for its answer (either way its worst case reserved, unless released: its call failed before
    it was recorded, or its batch was cancelled), True once answered (its cost spent, a failure's none)."""
    if settled is not None:
        return (settled, Decimal(0))
    if answered:
        return (cost_usd or Decimal(0), Decimal(0))
    if released:
        return (Decimal(0), Decimal(0))
    return (Decimal(0), entry.worst_case_usd)


def audit_of(entry: SpendEntry, admission: Admission) -> AuditRecord:
    """The audit record of `entry` judged: created (admitted) or refused."""
    return AuditRecord(
        entry.created_at,
        AuditAction.CREATE if admission.admitted else AuditAction.REFUSED,
        entry.key,
        entry.owner,
        entry.actor,
        entry.worst_case_usd,
        admission.cap_left_usd,
        entry.host,
    )


def cancel_audits(batch: str, released: Sequence[SpendEntry], *, at: float, host: str) -> list[AuditRecord]:
    """The audit of a cancelled batch: one record per owner and actor of the requests whose reservations it let go,
    with their worst cases summed."""
    worst: dict[tuple[Owner, str], Decimal] = {}
    for entry in released:
        group = (entry.owner, entry.actor)
        worst[group] = worst.get(group, Decimal(0)) + entry.worst_case_usd
    cancel = AuditAction.CANCEL
    return [AuditRecord(at, cancel, batch, owner, actor, usd, None, host) for (owner, actor), usd in worst.items()]
