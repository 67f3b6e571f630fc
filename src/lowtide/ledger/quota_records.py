"""What a live quota scope shares between the processes that call through it (its token buckets and its pause) and
the `QuotaStore` interface that keeps it: records below both the stores that keep them and `live/` that changes them.

Pure: the state changes here are plain functions of the state and the time; a store runs each one atomically (in
this process, under the event loop; in the ledger, inside one transaction).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, cast

__all__ = ["BucketState", "QuotaStore", "ScopeState", "TellsBudget"]

T = TypeVar("T")


class TellsBudget(Protocol):
    """What an API's rate-limit headers told of one budget (`live.reports.Budget`): its limit and what remains."""

    @property
    def limit(self) -> int: ...

    @property
    def remaining(self) -> int: ...


@dataclass
class BucketState:
    """One per-minute budget (requests, input tokens, output tokens, or all tokens) of a scope."""

    learned: int | None = None
    """The limit the API's headers last told (None: never told)."""
    level: float | None = None
    """What remains now (None: no process has had a limit for it yet)."""
    untracked: float = 0.0
    """What calls took while no limit was known: counted against the first budget the API tells, since that budget
    may have been reckoned before the API saw them."""

    def limit(self, configured: int | None) -> int | None:
        """The limit in force for a process configured with `configured`: the lower of it and the API's."""
        if configured is None:
            return self.learned
        return configured if self.learned is None else min(configured, self.learned)

    def refill(self, limit: int | None, elapsed: float) -> None:
        if limit is None:
            return
        if self.level is None:
            self.level = float(limit) - self.untracked
            self.untracked = 0.0
        self.level = min(float(limit), self.level + elapsed * limit / 60.0)

    def full(self, limit: int | None) -> bool:
        """At its limit (a refill now would be lost)."""
        return limit is not None and self.level is not None and self.level >= limit

    def wait_for(self, limit: int | None, amount: int) -> float:
        if limit is None or self.level is None:
            return 0.0
        return max(0.0, (min(amount, limit) - self.level) * 60.0 / limit)

    def take(self, limit: int | None, amount: int) -> None:
        if limit is None or self.level is None:
            self.untracked += amount
        else:
            self.level -= min(amount, limit)

    def give(self, limit: int | None, amount: float) -> None:
        if limit is not None and self.level is not None:
            self.level = min(float(limit), self.level + amount)

    def learn(self, configured: int | None, budget: TellsBudget, since: float = 0.0) -> None:
        """What an answer's headers told, `since` seconds ago, with the bucket already refilled to now.

        The API said what remained when it answered, before the answer travelled here: it has refilled since, but by
        no more than `since` seconds' worth (the refill before the answer left is in what it said). Counting the
        refill from this process's last look instead, as if the API had said it then, believes in refill the API
        already counted: on a loaded machine the first answers come seconds after their calls were taken, and the
        bucket believed in calls the API did not have (a 429 where the quota saw room).
        """
        self.learned = budget.limit
        limit = min(budget.limit, configured) if configured is not None else budget.limit
        told = float(min(budget.remaining, limit)) + max(0.0, since) * limit / 60.0
        if self.level is None:
            # The first budget told may not count the other calls sent before it: count them (at worst twice, for
            # a moment, until the next answers tell).
            self.level = max(0.0, min(told, float(limit)) - self.untracked)
            self.untracked = 0.0
        if told <= self.level - 1:
            # Lowered only by a whole call or more: the API rounds what remains down to a whole number, so a header
            # a fraction below is the same budget, and taking it as less would slow every call for nothing.
            self.level = told
        self.level = min(self.level, float(limit))

    def as_json(self) -> list[float | int | None]:
        return [self.learned, self.level, self.untracked]

    @classmethod
    def from_json(cls, value: list[float | int | None]) -> BucketState:
        learned, level, untracked = value
        return cls(None if learned is None else int(learned), level, float(untracked or 0.0))


@dataclass
class ScopeState:
    """A scope's buckets and pause, as every process calling through it sees them."""

    at: float | None = None
    """When the buckets were last refilled (lowtide's clock: wall time, the same in every process of a machine)."""
    paused_until: float = 0.0
    pauses: int = 0
    """How many pauses the scope has had: a process that sees it grow starts slowly again."""
    requests: BucketState = field(default_factory=BucketState)
    input: BucketState = field(default_factory=BucketState)
    output: BucketState = field(default_factory=BucketState)
    tokens: BucketState = field(default_factory=BucketState)

    def elapsed(self, now: float) -> float:
        """Seconds since the last refill (never negative: another process's clock may be a little behind)."""
        last = self.at
        self.at = now if last is None else max(last, now)
        return 0.0 if last is None else max(0.0, now - last)

    def as_json(self) -> dict[str, object]:
        return {
            "at": self.at,
            "paused_until": self.paused_until,
            "pauses": self.pauses,
            "requests": self.requests.as_json(),
            "input": self.input.as_json(),
            "output": self.output.as_json(),
            "tokens": self.tokens.as_json(),
        }

    @classmethod
    def from_json(cls, value: dict[str, object]) -> ScopeState:
        def bucket(name: str) -> BucketState:
            stored = value.get(name)
            if not isinstance(stored, list):
                return BucketState()
            return BucketState.from_json(cast("list[float | int | None]", stored))

        at, paused, pauses = value.get("at"), value.get("paused_until"), value.get("pauses")
        return cls(
            at=float(at) if isinstance(at, int | float) else None,
            paused_until=float(paused) if isinstance(paused, int | float) else 0.0,
            pauses=int(pauses) if isinstance(pauses, int) else 0,
            requests=bucket("requests"),
            input=bucket("input"),
            output=bucket("output"),
            tokens=bucket("tokens"),
        )


class QuotaStore(Protocol):
    """Where a scope's state lives. `update` runs `change` on the scope's state atomically (no other change to that
    scope runs in between, in any process sharing the store) and keeps what it left; one round trip per call."""

    @property
    def shared(self) -> str | None:
        """What the state is shared through (a ledger's path), or None for this process alone."""
        ...

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T: ...
