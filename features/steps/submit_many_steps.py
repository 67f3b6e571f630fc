"""Steps of parking many prompts at once (`Actor.submit` called together, as a `resume` pass of durable agents does):
how often the provider's pre-send checks ran, and the tickets each call was handed."""

from __future__ import annotations

import asyncio
from typing import Any

from _support import world
from step_context import Context, then, when

from lowtide import ActorError, BatchProcessingMode, Ticket


@when("the actor parks {count:d} numbered prompts at once, its provider's pre-send checks counted")
def step_park_many_counted(context: Context, count: int) -> None:
    w = world(context)
    actor = w.current_actor()
    checked: list[str] = []

    async def park_all() -> list[Ticket | BaseException]:
        provider: Any = await actor.ready(BatchProcessingMode.BATCH)
        preflight = provider.preflight

        async def counted(request: Any) -> None:
            checked.append(request.model)
            await preflight(request)

        provider.preflight = counted
        try:
            calls = (actor.submit(f"Plan issue {i}", key=f"plan-{i}") for i in range(count))
            return await asyncio.gather(*calls, return_exceptions=True)
        finally:
            del provider.preflight

    parked = w.run(park_all())
    w.witnessed["pre-send checks"] = checked
    for i, ticket in enumerate(parked):
        if isinstance(ticket, ActorError):
            w.error = ticket
        elif isinstance(ticket, BaseException):
            raise ticket
        else:
            w.tickets[f"plan-{i}"] = ticket


@then("the provider's pre-send checks ran {times:d} time")
@then("the provider's pre-send checks ran {times:d} times")
def step_checks_ran(context: Context, times: int) -> None:
    checked = world(context).witnessed["pre-send checks"]
    assert len(checked) == times, checked


@then("each of the {count:d} calls was handed a ticket of that one batch, waiting on it")
def step_tickets_of_one_batch(context: Context, count: int) -> None:
    w = world(context)
    assert w.error is None, w.error
    tickets = [w.tickets[f"plan-{i}"] for i in range(count)]
    assert {t.state for t in tickets} == {"waiting-on-batch"}, {t.state for t in tickets}
    assert len({t.batch_id for t in tickets}) == 1, {t.batch_id for t in tickets}
