"""`Actor.run_many(..., deadline=)`: the requests by the route their deadline chooses (`calls.deadline`), timed for all
of them at once. A batch route travels in the deadline's lane (`deadline_lane`); when its batch is late, the requests
the API confirmed canceled go by the route's fastest live venue, and those it answered keep their answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from lowtide.calls.deadline import DeadlineActor, call_route, fastest
from lowtide.calls.deadline_lane import LANE, lane_settings
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import BatchRequestCanceled, BatchTimeoutError, ConfigurationError
from lowtide.provider import Outcome
from lowtide.routing.deadlines import DeadlineInput
from lowtide.routing.routes import Route
from lowtide.types import ActorRequest

__all__ = ["many_by_deadline"]


class RunMany(Protocol):
    """`run_many` without a deadline: the actor's own."""

    def __call__(
        self,
        requests: Sequence[ActorRequest | str],
        *,
        mode: BatchProcessingMode | str | None,
        keys: Sequence[str | None] | None,
        max_cost_usd: float | None,
    ) -> Awaitable[list[Outcome]]: ...


async def many_by_deadline(
    actor: DeadlineActor,
    run_many: RunMany,
    request_of: Callable[[str], ActorRequest],
    requests: Sequence[ActorRequest | str],
    *,
    mode: BatchProcessingMode | str | None,
    keys: Sequence[str | None] | None,
    max_cost_usd: float | None,
    deadline: DeadlineInput,
) -> list[Outcome]:
    """The outcomes of `requests`, in input order, each answered by its deadline's route, moved live if late."""
    if mode is not None:
        raise ConfigurationError("Give run_many a mode or a deadline, not both: the deadline chooses the mode.",
                                 field="deadline")  # fmt: skip
    route = await call_route(actor, deadline, calls=len(requests))
    if route.move_at is None:
        venued = [_by_venue(route, request, request_of) for request in requests]
        return await run_many(venued, mode=route.venue.mode, keys=keys, max_cost_usd=max_cost_usd)
    token = LANE.set(lane_settings(actor.configuration.batch, now=actor.clock.now(), move_at=route.move_at))
    try:
        outcomes = await run_many(requests, mode=BatchProcessingMode.BATCH, keys=keys, max_cost_usd=max_cost_usd)
    except BatchTimeoutError as late:
        if not late.canceled:  # the API refused the cancel: the batch ends on its own, and nothing is sent twice
            raise
        outcomes = None
    finally:
        LANE.reset(token)
    if outcomes is None:  # the cancel confirmed: the batch's end, on the actor's own engine; its answers kept
        outcomes = await run_many(requests, mode=BatchProcessingMode.BATCH, keys=keys, max_cost_usd=max_cost_usd)
    moved = [index for index, outcome in enumerate(outcomes) if isinstance(outcome, BatchRequestCanceled)]
    if moved:
        live = fastest(route)
        again = [_by_venue(live, requests[index], request_of) for index in moved]
        for index, outcome in zip(
            moved, await run_many(again, mode=live.venue.mode, keys=None, max_cost_usd=max_cost_usd), strict=True
        ):
            outcomes[index] = outcome
    return outcomes


def _by_venue(
    route: Route, request: ActorRequest | str, request_of: Callable[[str], ActorRequest]
) -> ActorRequest | str:
    """`request` with its route's venue's provider options (a prompt alone stays one where the venue adds none)."""
    if not route.venue.provider_options:
        return request
    built = request_of(request) if isinstance(request, str) else request
    return built.model_copy(update={"provider_options": route.venue.applied(built.provider_options)})
