"""A bulk run's deadline route (`routing.routes`): the provider's venues, its batches' history in this ledger, and the
run's live time and cost (its live plan), before anything is sent."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from lowtide.bulk.planning.live_plan import live_plan
from lowtide.bulk.running.definition import LiveRunDefinition
from lowtide.core.modes import BatchProcessingMode
from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError
from lowtide.routing.deadlines import Deadline, DeadlineInput, parse_deadline
from lowtide.routing.history import batch_history, expected
from lowtide.routing.routes import Route, choose_route
from lowtide.routing.venues import LIVE_CALL_SECONDS

if TYPE_CHECKING:
    from lowtide.batching.backend import BatchCodec
    from lowtide.bulk.running.definition import Prepared

__all__ = [
    "DEADLINE_OPTION",
    "MOVE_MARGIN_SECONDS",
    "RoutedRun",
    "check_deadline",
    "deadline_option",
    "recorded_deadline",
    "run_route",
]

DEADLINE_OPTION = "deadline"
"""The run option that keeps a run's deadline (its moment and what the user gave), for a resume or a retry."""

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


def deadline_option(deadline: Deadline | None) -> dict[str, Any] | None:
    """A run's deadline as its recorded options keep it: the moment itself, so that a duration given as `2h` means the
    same moment when the run is resumed the next day."""
    return None if deadline is None else {"at": deadline.at, "given": deadline.given}


def recorded_deadline(options: Mapping[str, Any], run_id: str, now: float) -> Deadline | None:
    """The deadline a run was recorded with (None: none), kept by a resume or a retry given none of its own; one that
    has passed since is refused, before anything is sent, asking for a new one."""
    kept: object = options.get(DEADLINE_OPTION)
    if not isinstance(kept, dict):
        return None
    fields = cast("dict[str, object]", kept)
    at, given = fields.get("at"), fields.get("given")
    if not isinstance(at, int | float) or not isinstance(given, str):
        return None
    deadline = Deadline(float(at), given)
    if deadline.at <= now:
        when = datetime.fromtimestamp(deadline.at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        raise ConfigurationError(
            f"Run {run_id!r} was given the deadline {deadline.given!r} ({when}), which has passed: give it a new"
            f" one ({argument('deadline')}, `--deadline` on the command line) to resume it. Nothing was sent.",
            field="deadline",
        )
    return deadline


class RoutedRun(LiveRunDefinition, Protocol):
    """What a deadline's route needs of a run (`BulkRun` is one): what its live plan needs, and its batch codec."""

    @property
    def codec(self) -> BatchCodec: ...


def kept_deadline(run: RoutedRun, run_id: str) -> Deadline | None:
    """The deadline run `run_id` was recorded with, for a go at it given none (`recorded_deadline`)."""
    record = run.actor.ledger.run_store.run(run_id)
    return recorded_deadline(record.options, run_id, run.actor.clock.now()) if record is not None else None


async def run_route(run: RoutedRun, prepared: Prepared, deadline: Deadline) -> Route:
    """The cheapest route expected to answer `prepared`'s items still to send by `deadline`; `ConfigurationError` when
    none is (or the deadline has passed)."""
    actor = run.actor
    now = actor.clock.now()
    deadline = parse_deadline(deadline, now=now)  # (given before: it may have passed since)
    await actor.ready(BatchProcessingMode.BATCH)
    venues = actor.provider(BatchProcessingMode.BATCH).venues()
    ledger = actor.existing_ledger()
    # Off the event loop: a remote store's blocking read there stands still the run's other work on the loop,
    # transactions holding the store's connections included (`lowtide.calls.deadline._history`).
    history = await asyncio.to_thread(batch_history, ledger, run.codec.name) if ledger is not None else expected(())
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
