"""`RunLedger`: what a bulk run asks of its ledger (its runs, items, decisions, live answers and the batches they went
in), whichever store keeps it; `AsyncRunLedger` the part a run calls from the event loop while it runs, awaited. A
store's `run_store` (`interface.LedgerStore`) gives its own; `features/ledger_store.feature` holds every store to the
same scenarios."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any, Protocol

from lowtide.ledger.runs import ItemOutcome, ItemRow, ItemsApart, LiveAnswer, NewItem, RunRecord

__all__ = ["AsyncRunLedger", "RunLedger"]


class RunLedger(Protocol):
    """The bulk runs a ledger keeps: each run's inputs in order, and which request answers each of them."""

    def run(self, run_id: str) -> RunRecord | None: ...

    def runs(self) -> list[RunRecord]:
        """Every run, oldest first."""
        ...

    def create(
        self,
        run_id: str,
        *,
        actor: str,
        configuration: dict[str, Any],
        options: dict[str, Any],
        fingerprint: str,
        items: Sequence[NewItem],
        now: float,
    ) -> bool:
        """Record a new run and all its items at once; False when the run id is already taken (nothing written)."""
        ...

    def update_options(self, run_id: str, options: dict[str, Any], *, now: float) -> None: ...

    def items(self, run_id: str, *, with_jobs: bool = True, start: int = 0, stop: int | None = None) -> list[ItemRow]:
        """Every item of the run in input order (those whose index is from `start` up to `stop`: a run sorted a chunk
        at a time), each with its latest request's state, batch and cost."""
        ...

    def items_apart(self, run_id: str, *, start: int, stop: int) -> ItemsApart:
        """The run's items whose index is from `start` up to `stop`, as sorting a run out needs them: those answered
        with nothing decided by the run (plain successes) as their indexes and costs alone, the others' rows (without
        their jobs) as `items` gives them."""
        ...

    def outcomes(self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None) -> list[ItemOutcome]:
        """The run's items whose index is from `start` up to (not including) `stop`, in input order, each with what the
        run decided and its latest request's state, answer and error: a run's results written a chunk at a time.
        `only`: of those, only the items of these indexes (ascending; at most a thousand), the others not read."""
        ...

    def decide(self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float) -> None:
        """Record what the run decided for items without the API: (index, status, reason); None clears it."""
        ...

    def new_attempts(self, run_id: str, keys: Iterable[tuple[int, str]], *, now: float) -> None:
        """Point items at the keys of a new attempt (a retry), clearing what the run decided for them."""
        ...

    def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None:
        """Store live answers (or final errors) under their items' keys, and the items' decisions, at once."""
        ...

    def outstanding_batches(self, run_id: str) -> list[str]:
        """The ledger ids of batches still out (intent, unknown, processing, ended) holding items of the run."""
        ...

    def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]:
        """(ledger id, API id, state, items of this run in it) of every batch that held an item of the run."""
        ...

    def live_cost(self, run_id: str) -> Decimal:
        """What the run's answers would have cost live."""
        ...


class AsyncRunLedger(Protocol):
    """What a bulk run asks of its ledger's runs while it runs (from the event loop), awaited; each method means
    what `RunLedger`'s of the same name means."""

    async def decide(
        self, run_id: str, decisions: Iterable[tuple[int, str | None, str | None]], *, now: float
    ) -> None: ...

    async def record_live(self, run_id: str, answers: Sequence[LiveAnswer], *, now: float) -> None: ...

    async def outstanding_batches(self, run_id: str) -> list[str]: ...

    async def batches(self, run_id: str) -> list[tuple[str, str | None, str, int]]: ...

    async def outcomes(
        self, run_id: str, *, start: int, stop: int, only: Sequence[int] | None = None
    ) -> list[ItemOutcome]: ...
