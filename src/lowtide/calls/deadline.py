"""A single call's deadline: the venue it goes by, chosen as a bulk run's route is (`routing.routes`), for one call:
its batch time from the ledger's history, a live call's time the conservative default (`LIVE_CALL_SECONDS`) at each
venue's pace. Gives the call's mode and the provider options its venue adds; refused when no venue meets it. A call
routed to a batch travels in its deadline's lane (`deadline_lane`) and is moved, when its batch is late, to the
route's fastest live venue: only once the API confirmed its request canceled (docs/bulk.md, "Deadlines")."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Protocol, cast

from pydantic import BaseModel

from lowtide.calls.deadline_lane import LANE, lane_settings
from lowtide.calls.face import ActorFace
from lowtide.calls.path import Calls
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import BatchRequestCanceled, BatchTimeoutError, ConfigurationError
from lowtide.ledger.interface import LedgerStore
from lowtide.routing.deadlines import Deadline, DeadlineInput, parse_deadline
from lowtide.routing.history import BatchHistory, batch_history, expected
from lowtide.routing.routes import Route, choose_route
from lowtide.routing.venues import LIVE_CALL_SECONDS
from lowtide.types import ActorResponse

__all__ = ["CALL_MOVE_MARGIN_SECONDS", "DeadlineActor", "by_deadline", "call_route", "fastest", "routed"]

CALL_MOVE_MARGIN_SECONDS = 30.0
"""Besides two polls of the batch, the time a batch route of a call keeps in hand."""


class DeadlineActor(ActorFace, Protocol):
    """What a call's route needs of its actor besides its face: the ledger it would go through, if there is one."""

    def existing_ledger(self) -> LedgerStore | None: ...


async def call_route(actor: DeadlineActor, deadline: DeadlineInput | Deadline, *, calls: int = 1) -> Route:
    """The cheapest venue expected to answer `calls` calls of `actor` made at once by `deadline` (`ConfigurationError`
    when none): live, in waves of `live.max_concurrency`."""
    now = actor.clock.now()
    due = parse_deadline(deadline, now=now)
    provider = await actor.ready(BatchProcessingMode.LIVE)
    backend = (await actor.ready(BatchProcessingMode.BATCH)).batch_backend()
    history = None
    if backend is not None:
        history = await asyncio.to_thread(_history, actor, backend.codec.name)
    margin = 2 * actor.configuration.batch.poll_interval + CALL_MOVE_MARGIN_SECONDS
    waves = math.ceil(calls / actor.configuration.live.max_concurrency)
    return choose_route(provider.venues(), deadline=due, now=now, batch=history,
                        live_seconds=waves * LIVE_CALL_SECONDS, margin=margin)  # fmt: skip


def _history(actor: DeadlineActor, provider: str) -> BatchHistory:
    """The provider's batch times in the actor's ledger (none without one): read off the event loop, since a remote
    store's blocking read must not stand the loop still while its other calls hold the store's connections."""
    ledger = actor.existing_ledger()
    return batch_history(ledger, provider) if ledger is not None else expected(())


def routed(route: Route, options: Mapping[str, Any]) -> tuple[BatchProcessingMode, dict[str, Any]]:
    """The call's mode by `route`, and its keyword arguments with the venue's provider options added."""
    given: object = options.get("provider_options")
    sections: Mapping[str, Mapping[str, Any]] = cast(
        "Mapping[str, Mapping[str, Any]]", given if isinstance(given, Mapping) else {}
    )
    merged = route.venue.applied(sections)
    return route.venue.mode, {**options, "provider_options": merged} if merged else dict(options)


async def by_deadline(
    actor: DeadlineActor,
    calls: Calls,
    prompt: str | None,
    response_model: type[BaseModel] | None,
    mode: BatchProcessingMode | str | None,
    key: str | None,
    max_cost_usd: float | None,
    kwargs: dict[str, Any],
    deadline: DeadlineInput,
) -> ActorResponse[object]:
    """`actor.run(..., deadline=)`: the call, in the mode its deadline's route chooses."""
    if mode is not None:
        raise ConfigurationError("Give a call a mode or a deadline, not both: the deadline chooses the mode.",
                                 field="deadline")  # fmt: skip
    route = await call_route(actor, deadline)
    chosen, options = routed(route, kwargs)
    if route.move_at is None:
        return await calls.run(prompt, response_model, chosen, key, max_cost_usd, options)
    lane = lane_settings(actor.configuration.batch, now=actor.clock.now(), move_at=route.move_at)
    token = LANE.set(lane)
    try:
        return await calls.run(prompt, response_model, chosen, key, max_cost_usd, options)
    except BatchTimeoutError as late:
        if not late.canceled:  # the API refused the cancel: the batch ends on its own, and nothing is sent twice
            raise
    except BatchRequestCanceled:
        pass  # canceled before (an earlier move of this key, or the API's own cancel): never answered, never paid
    finally:
        LANE.reset(token)
    try:  # the cancel confirmed: the batch ended, on the actor's own engine; an answer it gave before is kept
        return await calls.run(prompt, response_model, chosen, key, max_cost_usd, options)
    except BatchRequestCanceled:
        pass
    live, moved = routed(fastest(route), kwargs)
    return await calls.run(prompt, response_model, live, key, max_cost_usd, moved)


def fastest(route: Route) -> Route:
    """`route` with its fallback, the fastest live venue, chosen: where a late call's canceled request moves."""
    return dataclasses.replace(route, chosen=route.fallback, move_at=None)
