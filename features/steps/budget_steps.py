"""Steps for budgets: what a budget error says it compared, and calls refused among others."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from _support import World, checked_models, world
from step_context import Context, then, when

from lowtide import ActorError, ActorResponse, BatchProcessingMode, BudgetExceededError
from lowtide.cost.pricing import worst_case_cost
from lowtide.providers.anthropic.mapping import to_message_params


def _worst_case(w: World, prompt: str) -> Decimal:
    estimate = worst_case_cost(to_message_params(w.current_actor().request(prompt)), mode=BatchProcessingMode.BATCH)
    assert estimate is not None
    return estimate


def _spent(w: World, spent: str) -> Decimal:
    match spent:
        case "nothing":
            return Decimal(0)
        case "what its answers cost":
            costs = [answer.cost.total_usd for answer in w.answers if answer.cost is not None]
            assert costs, w.answers
            return sum(costs, Decimal(0))
        case "the worst case of the parked call":
            [record] = w.ledger().requests()
            estimate = worst_case_cost(record.params, mode=BatchProcessingMode.BATCH)
            assert estimate is not None
            return estimate
        case _:
            raise AssertionError(f"unknown spending {spent!r}")


@then('the budget error is for "{scope}", with a limit of ${limit}, {spent} spent, and the worst case of "{prompt}"')
def step_budget_error(context: Context, scope: str, limit: str, spent: str, prompt: str) -> None:
    w = world(context)
    error = w.failure()
    assert isinstance(error, BudgetExceededError), error
    assert error.scope == scope, error.scope
    assert error.limit_usd == Decimal(limit), error.limit_usd
    assert error.spent_usd == _spent(w, spent), (error.spent_usd, _spent(w, spent))
    assert error.estimate_usd == _worst_case(w, prompt), (error.estimate_usd, _worst_case(w, prompt))
    assert error.spent_usd + error.estimate_usd > error.limit_usd, error
    assert f"could cost up to ${error.estimate_usd:.6f}" in str(error), str(error)


@then("{answered:d} call was answered and {refused:d} was refused with {name:w}")
def step_answered_and_refused(context: Context, answered: int, refused: int, name: str) -> None:
    outcomes = list(world(context).asked.values())
    got_answers = [o for o in outcomes if isinstance(o, ActorResponse)]
    got_refusals = [o for o in outcomes if type(o).__name__ == name]
    assert (len(got_answers), len(got_refusals)) == (answered, refused), outcomes


@then("the API was sent {count:d} request")
@then("the API was sent {count:d} requests")
def step_api_sent_requests(context: Context, count: int) -> None:
    created = world(context).emu.created_custom_ids
    assert sum(created.values()) == count, created


@when('the actor\'s run_many is called twice at once, with "{first}" and with "{second}"')
def step_run_many_twice(context: Context, first: str, second: str) -> None:
    """Two `run_many` calls of one prompt each, started together; each outcome kept under its prompt (an answer, or
    the error its call raised)."""
    w = world(context)
    actor = w.current_actor()
    w.run(checked_models({actor}))  # its model looked up first, as in a process that has called before

    async def both() -> list[Any]:
        return list(await asyncio.gather(actor.run_many([first]), actor.run_many([second]), return_exceptions=True))

    for prompt, outcome in zip((first, second), w.run(both()), strict=True):
        if isinstance(outcome, BaseException) and not isinstance(outcome, ActorError):
            raise outcome
        w.asked[prompt] = outcome[0] if isinstance(outcome, list) else outcome
