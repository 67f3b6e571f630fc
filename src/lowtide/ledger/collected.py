"""What a store answers about a batch's results already stored: the part of `LedgerStore` (and `AsyncLedgerStore`) a
collection reads once, before it stores a batch's results, so that a batch collected again (its collection cut short
by a crash, or a download that stayed broken) stores only what it lacks. Kept apart from `interface`, which holds the
rest of the protocol."""

from __future__ import annotations

from typing import Protocol

__all__ = ["AsyncCollectedResults", "CollectedResults"]


class CollectedResults(Protocol):
    def stored_finals(self, batch_id: str) -> set[str]:
        """The keys whose latest result from `batch_id` is stored and final (succeeded, failed, canceled or expired;
        a result that sends its request on to another attempt is not): the lines of the batch a collection need not
        read or store again. One read of the batch's results, however many members it has."""
        ...


class AsyncCollectedResults(Protocol):
    async def stored_finals(self, batch_id: str) -> set[str]:
        """As `CollectedResults.stored_finals`, awaited."""
        ...
