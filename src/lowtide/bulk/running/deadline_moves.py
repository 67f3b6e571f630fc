"""A batch execution's deadline route as it goes: at the route's move (at once for a live or flex route), what is out
is canceled, and what is not answered is sent by the faster venue (`moving.Mover`), counted out until stored."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Protocol

from lowtide.bulk.outputs.results import ItemResult, ItemStatus
from lowtide.bulk.running.budget import RunBudget
from lowtide.bulk.running.definition import Prepared, RunDefinition
from lowtide.bulk.running.moving import Mover
from lowtide.bulk.running.state import RunState
from lowtide.core.clock import Clock
from lowtide.ledger.run_ledger import AsyncRunLedger
from lowtide.messages.answers import Settled

__all__ = ["DeadlineMoves", "MovingExecution", "Steps", "deadline_moves"]

log = logging.getLogger(__name__)


class MovingExecution(Protocol):
    """What the moves need of the batch execution they belong to (its own steps are handed over as `Steps`)."""

    run: RunDefinition
    prepared: Prepared
    state: RunState
    budget: RunBudget
    clock: Clock
    outstanding: int
    decided: set[int]


@dataclass(frozen=True)
class Steps:
    """The execution's own steps the moves take: spawning a task, an answer settled, canceling what is out, its tick."""

    spawn: Callable[[Coroutine[object, None, None]], asyncio.Task[None]]
    answered: Callable[[int, Settled], None]
    cancel_outstanding: Callable[[], Awaitable[None]]
    tick: Callable[[], float]


def deadline_moves(execution: MovingExecution, runs: AsyncRunLedger, steps: Steps) -> DeadlineMoves | None:
    """The moves of `execution`'s run, if it has a deadline's route."""
    return DeadlineMoves(execution, runs, steps) if execution.run.route is not None else None


class DeadlineMoves:
    """One go's deadline route: when it moves, and the items it moves."""

    def __init__(self, execution: MovingExecution, runs: AsyncRunLedger, steps: Steps) -> None:
        self.execution = execution
        self.steps = steps
        run = execution.run
        route = run.route
        assert route is not None
        self.route = route
        actor = run.actor
        self.mover = Mover(
            run, run_id=execution.prepared.run_id, actor=actor.name, keys=execution.prepared.keys,
            venue=route.fallback.venue if route.move_at is not None else route.venue, caller=actor.live_caller,
            runs=runs, attempts=actor.ledger.run_store, budget=execution.budget, clock=execution.clock,
            concurrency=actor.configuration.live.max_concurrency,
        )  # fmt: skip
        self.again: list[int] = []
        """Items a batch canceled before this go (found so as it began): moved once it has begun."""
        self.moving = route.move_at is None
        """Set at the move (from the start for a route that is not a batch): nothing more goes in a batch."""

    async def timer(self) -> None:
        """At the route's move (at once for a route that is not a batch), cancel what is out and start moving."""
        execution, route = self.execution, self.route
        move_at = route.move_at if route.move_at is not None else execution.clock.now()
        while (left := move_at - execution.clock.now()) > 0:
            await execution.clock.sleep(min(left, self.steps.tick()))
        if execution.state.done >= len(execution.prepared.keys):
            return
        self.moving = True
        if route.move_at is not None:
            why = "its batches will not make the deadline %r; canceling them, moving what is not answered to %s"
            log.warning("Run %s: " + why, execution.prepared.run_id, route.deadline.given, route.fallback.venue.name)
        await self.steps.cancel_outstanding()
        execution.state.change()

    def move(self, indexes: Sequence[int], *, canceled: bool) -> None:
        """Send `indexes` by the faster venue, each counted out until its outcome is stored."""
        execution = self.execution
        for index in indexes:
            if execution.state.has(index):
                continue
            execution.outstanding += 1
            self.steps.spawn(self._moved(index, canceled=canceled))
        execution.state.change()

    async def _moved(self, index: int, *, canceled: bool) -> None:
        execution = self.execution
        try:
            await self.mover.move(index, canceled=canceled, moved=self.steps.answered, refused=self._not_moved)
        finally:
            execution.outstanding -= 1
            execution.state.change()
            execution.state.report()

    def _not_moved(self, index: int, reason: str) -> None:
        execution = self.execution
        execution.decided.add(index)
        result: ItemResult = execution.state.item(index, ItemStatus.NOT_RUN, reason=reason)
        execution.state.settle([result])
