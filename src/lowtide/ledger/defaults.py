"""`StoreDefaults` and `AsyncStoreDefaults`: what a store gets for nothing, written once: the methods of the roles
that follow from the others (`claim` from `claim_new`, `take_over` from `take_over_many`, `members` from
`members_and_attempts`), and what a store in one process or on one host does not need (no notices, no leases kept
alive, nothing to close). A store inherits them and writes its own only where it can do better."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from lowtide.ledger.records import NewRequest, RequestRecord, claimed_records
from lowtide.ledger.roles import BatchNotices

__all__ = ["AsyncStoreDefaults", "StoreDefaults"]


class _Derives(Protocol):
    """The methods the defaults are made of."""

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]: ...

    def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]: ...

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]: ...


class _AsyncDerives(Protocol):
    async def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]: ...


class StoreDefaults:
    """The defaults of a sync store (`LedgerStore`)."""

    @property
    def notices(self) -> BatchNotices | None:
        """None: a process waiting on another's work reads the store every `watch_interval`."""
        return None

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        """Nothing: the processes sharing the store tell each other's liveness otherwise (one host: a dead pid,
        `batching.keys`; one process: it is alive while it reads the store)."""

    def let_go(self, owner: str) -> None:
        """Nothing (see `keep_alive`)."""

    def close(self) -> None:
        """Nothing to close."""

    def claim(
        self: _Derives, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> list[RequestRecord]:
        """`claim_new`, answered as every request's record: a key the ledger already has is left as it is (the caller
        attaches to it instead of sending it again)."""
        inserted, known = self.claim_new(requests, owner=owner, until=until, now=now)
        return claimed_records(requests, inserted, known, owner=owner, until=until, now=now)

    def take_over(
        self: _Derives, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None
    ) -> bool:
        """`take_over_many` of one key."""
        return bool(self.take_over_many([(key, dead_owner)], owner=owner, until=until, now=now))

    def members(self: _Derives, batch_id: str) -> dict[str, str]:
        """`members_and_attempts`' members."""
        return self.members_and_attempts(batch_id)[0]


class AsyncStoreDefaults:
    """The defaults of an awaited store (`AsyncLedgerStore`)."""

    async def claim(
        self: _AsyncDerives, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> list[RequestRecord]:
        """As `StoreDefaults.claim`, awaited."""
        inserted, known = await self.claim_new(requests, owner=owner, until=until, now=now)
        return claimed_records(requests, inserted, known, owner=owner, until=until, now=now)
