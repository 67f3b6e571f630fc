"""A bulk run's deadline route (`routing.routes`): the provider's venues, its batches' history in this ledger, and the
run's live time and cost (its live plan), before anything is sent."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from lowtide.bulk.planning.live_plan import live_plan
from lowtide.core.modes import BatchProcessingMode
from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError
from lowtide.routing.deadlines import Deadline, DeadlineInput, parse_deadline
from lowtide.routing.history import batch_history, expected
from lowtide.routing.routes import Route, choose_route
from lowtide.routing.venues import LIVE_CALL_SECONDS

if TYPE_CHECKING:
    from lowtide.bulk.running.definition import Prepared
    from lowtide.bulk.running.runner import BulkRun

__all__ = ["MOVE_MARGIN_SECONDS", "check_deadline", "run_route"]

MOVE_MARGIN_SECONDS = 30.0
"""Besides two polls of the batch, the time a move keeps in hand: the cancel taking, the canceled results read."""


def check_deadline(
    deadline: DeadlineInput | Deadline | None, now: float, *, live: bool, time_limit: float | None
) -> Deadline | None:
    """A run's `deadline` parsed and checked when the run is made: in the future, and not beside what it replaces."""
    if deadline is None:
        return None
    if live:
        raise ConfigurationError(
            f"{argument('deadline')} chooses a run's venue itself (batch, a cheaper live tier, or live); leave out"
            f' {argument("mode")}="live", or give a live run a {argument("time_limit")} instead.',
            field="deadline",
        )
    if time_limit is not None:
        raise ConfigurationError(
            f"Give a run {argument('deadline')} or {argument('time_limit')}, not both: a deadline moves late work to a"
            " faster route, a time limit gives it up.",
            field="deadline",
        )
    return parse_deadline(deadline, now=now)


async def run_route(run: BulkRun, prepared: Prepared, deadline: Deadline) -> Route:
    """The cheapest route expected to answer `prepared`'s items still to send by `deadline`; `ConfigurationError` when
    none is (or the deadline has passed)."""
    actor = run.actor
    now = actor.clock.now()
    deadline = parse_deadline(deadline, now=now)  # (given before: it may have passed since)
    await actor.ready(BatchProcessingMode.BATCH)
    venues = actor.provider(BatchProcessingMode.BATCH).venues()
    ledger = actor.existing_ledger()
    history = batch_history(ledger, run.codec.name) if ledger is not None else expected(())
    plan = live_plan(run, prepared)
    live = actor.configuration.live
    waves = math.ceil(plan.items / max(1, live.max_concurrency)) if plan.items else 0
    live_seconds = max(plan.seconds or 0.0, waves * LIVE_CALL_SECONDS)
    cost = (
        (plan.cost_low_usd, plan.cost_high_usd)
        if plan.cost_low_usd is not None and plan.cost_high_usd is not None
        else None
    )
    margin = 2 * actor.configuration.batch.poll_interval + MOVE_MARGIN_SECONDS
    return choose_route(venues, deadline=deadline, now=now, batch=history, live_seconds=live_seconds, margin=margin,
                        live_cost=cost)  # fmt: skip
