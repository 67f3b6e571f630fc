"""Who a call's spend belongs to: the actor's `team`, `project` and `tags`, overridden for the calls made inside
`spend_owner(...)` (a run, an agent run, a `lowtide serve` client key), and each new batch-mode request's worst case
reserved against its owner's caps in the ledger before anything is recorded or sent."""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal

from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.config.actors import ActorConfiguration
from lowtide.core.hosts import host_id
from lowtide.errors import SpendCapExceededError
from lowtide.ledger.spend_records import Admission, Owner, SpendEntry

__all__ = ["cap_refusal", "owned_elsewhere", "owner_of", "reserve_all_for", "reserve_for", "spend_owner"]

_OWNER: ContextVar[Owner | None] = ContextVar("lowtide_spend_owner", default=None)


@contextmanager
def spend_owner(
    *, team: str | None = None, project: str | None = None, tags: Mapping[str, str] | None = None
) -> Generator[Owner]:
    """Attribute the calls made inside (in this task and the tasks it starts) to `team` and `project`, with `tags`
    added to the actor's: what is given here wins over the actor's configuration, what is not keeps the actor's."""
    outer = _OWNER.get()
    base = outer if outer is not None else Owner()
    merged = dict(base.tags)
    merged.update(tags or {})
    owner = Owner(
        team if team is not None else base.team,
        project if project is not None else base.project,
        tuple(sorted(merged.items())),
    )
    token = _OWNER.set(owner)
    try:
        yield owner
    finally:
        _OWNER.reset(token)


def owned_elsewhere() -> bool:
    """Whether the calls of this moment are inside `spend_owner`: then no call skips its owner's caps."""
    return _OWNER.get() is not None


def owner_of(configuration: ActorConfiguration) -> Owner:
    """The owner of a call of the actor configured so, made now."""
    given = _OWNER.get()
    tags = dict(configuration.tags)
    if given is None:
        return Owner(configuration.team, configuration.project, tuple(sorted(tags.items())))
    tags.update(given.tags)
    return Owner(
        given.team if given.team is not None else configuration.team,
        given.project if given.project is not None else configuration.project,
        tuple(sorted(tags.items())),
    )


async def reserve_for(
    owner: Owner, engine: BatchEngine, *, key: str, actor: str, model: str, worst_case_usd: Decimal, at: float
) -> None:
    """Record `key`'s owner and reserve its worst case against the owner's caps, in one transaction of the ledger;
    refused (nothing recorded, nothing sent) with `SpendCapExceededError` when it would cross one."""
    await reserve_all_for(engine, [SpendEntry(key, owner, actor, model, worst_case_usd, at, host_id())])


async def reserve_all_for(engine: BatchEngine, entries: Sequence[SpendEntry]) -> None:
    """Reserve `entries` together against their owners' caps (all or none, one transaction); refused with
    `SpendCapExceededError` (nothing recorded, nothing sent) when together they would cross one."""
    admission = await engine.ledger.spending.reserve_all(entries)
    error = cap_refusal(admission)
    if error is not None:
        raise error


def cap_refusal(admission: Admission) -> SpendCapExceededError | None:
    """The error of a refused admission (None: admitted), naming the cap, its standing and what was asked."""
    refused = admission.refused_by
    if refused is None:
        return None
    return SpendCapExceededError(
        cap=refused.cap.describe(),
        limit_usd=refused.cap.limit_usd,
        spent_usd=refused.spent_usd,
        reserved_usd=refused.reserved_usd,
        estimate_usd=admission.adds_usd,
        requests=admission.requests,
    )
