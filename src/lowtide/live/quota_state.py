"""A live quota scope's state kept in this process alone (`LocalQuotaStore`); the records it keeps, and the
`QuotaStore` interface a ledger's store implements too, live below both in `lowtide.ledger.quota_records`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from lowtide.ledger.quota_records import ScopeState

__all__ = ["LocalQuotaStore"]

T = TypeVar("T")


class LocalQuotaStore:
    """The state of each scope in this process alone."""

    shared: str | None = None

    def __init__(self) -> None:
        self._states: dict[str, ScopeState] = {}

    async def update(self, scope: str, change: Callable[[ScopeState], T]) -> T:
        state = self._states.get(scope)
        if state is None:
            state = self._states[scope] = ScopeState()
        return change(state)
