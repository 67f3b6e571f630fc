"""A deadline's move: a batch run's items that will not make the deadline in their batch, sent by the route's faster
venue instead (`routing.routes.Route.fallback`), each answer stored before it is handed on.

Only items the run never sent, or whose batch result says `canceled` (never answered, never charged), are moved: an
item the API answered before its cancel took keeps that answer, so nothing is paid twice. A canceled item is moved
under a new attempt's key (its first attempt, the canceled request, stays on record, as `retry` leaves it); one never
sent keeps its key. At most `live.max_concurrency` calls are in flight, through the actor's live caller (its quota,
retries, middleware, spend cap); under a cost limit each call's live worst case must fit, or the item is `not-run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Protocol

from lowtide.batching.records import error_to_json
from lowtide.bulk.outputs.results import ItemStatus
from lowtide.bulk.recorded.items import item_key
from lowtide.bulk.running.budget import RunBudget
from lowtide.core.clock import Clock
from lowtide.errors import ActorError
from lowtide.ledger.run_ledger import AsyncRunLedger, RunLedger
from lowtide.ledger.runs import LiveAnswer
from lowtide.ledger.store import RequestState
from lowtide.live.caller import LiveCaller
from lowtide.live.timing import finishing
from lowtide.routing.venues import Venue
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["Mover", "MovingRun", "next_attempt"]


class MovingRun(Protocol):
    """What a move needs of its run: each item's live request and its worst case."""

    def live_request(self, index: int, key: str) -> ActorRequest: ...

    def live_worst_case(self, request: ActorRequest) -> Decimal | None: ...


Moved = Callable[[int, ActorResponse[object] | ActorError], None]
"""Told each moved item's outcome once it is stored."""
Refused = Callable[[int, str], None]
"""Told an item that could not be moved (its worst case crosses the cost limit), with the reason."""


def next_attempt(run_id: str, index: int, key: str) -> str:
    """The key of the attempt after the one keyed `key` (`bulk.recorded.items.item_key`'s forms)."""
    head = f"{run_id}-{index}"
    attempt = int(key[len(head) + 2 :]) if key.startswith(f"{head}-a") else 1
    return item_key(run_id, index, attempt + 1)


class Mover:
    """Sends moved items by `venue`, `concurrency` at once, and stores each answer before telling `moved`."""

    def __init__(
        self,
        run: MovingRun,
        *,
        run_id: str,
        actor: str,
        keys: Sequence[str],
        venue: Venue,
        caller: Callable[[], LiveCaller],
        runs: AsyncRunLedger,
        attempts: RunLedger,
        budget: RunBudget,
        clock: Clock,
        concurrency: int,
    ) -> None:
        self.run = run
        self.run_id = run_id
        self.actor = actor
        self.keys = keys
        self.venue = venue
        self._caller = caller
        self.runs = runs
        self.attempts = attempts
        self.budget = budget
        self.clock = clock
        self.slots = asyncio.Semaphore(max(1, concurrency))
        self.count = 0
        """How many items were sent by the venue."""
        self.canceled_moved = 0
        """How many of them had been canceled in their batch (the rest were never sent)."""

    async def move(self, index: int, *, canceled: bool, moved: Moved, refused: Refused) -> None:
        """Send item `index` by the venue (a new attempt's key if `canceled`), store its outcome, then tell `moved`."""
        async with self.slots:
            key = self.keys[index]
            if canceled:
                key = next_attempt(self.run_id, index, key)
                # (a blocking write, off the event loop: on PostgreSQL the loop's own transactions may hold its rows)
                await asyncio.to_thread(self.attempts.new_attempts, self.run_id, [(index, key)], now=self.clock.now())
            request = self.run.live_request(index, key)
            request = request.model_copy(update={"provider_options": self.venue.applied(request.provider_options)})
            worst = self.run.live_worst_case(request)
            if not self.budget.fits([worst]):
                reason = f"not moved to {self.venue.name}: {self.budget.refusal(worst)}"
                await self.runs.decide(self.run_id, [(index, ItemStatus.NOT_RUN.value, reason)], now=self.clock.now())
                refused(index, reason)
                return
            self.budget.reserve(index, worst)
            self.count += 1
            self.canceled_moved += canceled
            outcome: ActorResponse[object] | ActorError
            try:
                outcome = await self._caller().call(request)
            except ActorError as exc:
                outcome = exc
            await finishing(self.runs.record_live(self.run_id, [self._answer(index, key, request, outcome)],
                                                  now=self.clock.now()))  # fmt: skip
            moved(index, outcome)

    def _answer(
        self, index: int, key: str, request: ActorRequest, outcome: ActorResponse[object] | ActorError
    ) -> LiveAnswer:
        params = request.model_dump(mode="json", exclude={"response_model", "custom_id"}, exclude_none=True)
        if isinstance(outcome, ActorError):
            return LiveAnswer(index, key, self.actor, request.model, params, RequestState.FAILED, None,
                              error_to_json(outcome), None)  # fmt: skip
        answer = outcome.model_dump(mode="json", exclude={"parsed"})
        cost = outcome.cost.total_usd if outcome.cost is not None else None
        return LiveAnswer(index, key, self.actor, request.model, params, RequestState.SUCCEEDED, answer, None, cost)
