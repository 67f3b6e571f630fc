"""What a store answers about a batch's results already stored: the part of `LedgerStore` (and `AsyncLedgerStore`) a
collection reads once, before it stores a batch's results, so that a batch collected again (its collection cut short
by a crash, or a download that stayed broken) stores only what it lacks; and the results a batch brought since a
cursor, which a process watching a batch another polls reads at each of its notices (`Waiting._watch_batch`), and
those results' answers, which it hands to its calls; and which of its calls a batch holds. Kept apart from
`interface`, which holds the rest of the protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from lowtide.ledger.records import KeyAnswer

__all__ = ["AsyncCollectedResults", "CollectedResults"]


class CollectedResults(Protocol):
    def stored_finals(self, batch_id: str) -> set[str]:
        """The keys whose latest result from `batch_id` is stored and final (succeeded, failed, canceled or expired;
        a result that sends its request on to another attempt is not): the lines of the batch a collection need not
        read or store again. One read of the batch's results, however many members it has."""
        ...

    def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        """The keys of the results stored from `batch_id` after the cursor `after`, in the order stored, and the cursor
        past them (`after` itself when there are none). With `after` None, no keys and the cursor past every result
        stored so far, from any batch: a watch takes it before it reads its calls' states, then asks for what came
        since. A cursor is the results' arrival order (`seq`): on SQLite and in memory a result is stored and seen in
        that order; on PostgreSQL a transaction given an earlier `seq` may commit after one given a later (a batch's
        results are stored by its one poller, chunk after chunk, so only a poller that lost its lease while storing
        could), so a watch there reads its calls' states too when its timer runs out."""
        ...

    def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        """The latest result from `batch_id` of each of `keys` that has one, in the order given: its state, answer and
        error, read from the batch's results alone (by `(batch_id, key)`: no parameters, no request's record). A final
        one is the request's outcome, as its record would give it: what a process watching a batch another polls hands
        its calls (`Waiting._hand_over`), reading the records only of the calls a result sent on to another attempt."""
        ...

    def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` are in `batch_id` now (the batch a request's state reads: its latest membership, unless a
        result sent it on from there), each looked up by key: no state, no record. A process whose calls another
        gathered reads it once that process's intent is written, to watch them in its batch from the results' cursor
        taken before it first read their states (`LeftOut._attach_left_out`)."""
        ...


class AsyncCollectedResults(Protocol):
    async def stored_finals(self, batch_id: str) -> set[str]:
        """As `CollectedResults.stored_finals`, awaited."""
        ...

    async def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        """As `CollectedResults.results_since`, awaited."""
        ...

    async def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        """As `CollectedResults.answers_of`, awaited."""
        ...

    async def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        """As `CollectedResults.members_among`, awaited."""
        ...
