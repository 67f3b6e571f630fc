"""Steps for what responses cost: rates per million tokens, batch against live, cache reads and writes."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from _support import world
from step_context import Context, then, when

from lowtide import ActorResponse, Cost, Usage

MILLION = Decimal(1_000_000)


def _expected(usage: Usage, rates: Any) -> tuple[Decimal, Decimal]:
    """(input cost, output cost) of `usage` at a table row of rates in dollars per million tokens."""
    input_usd = (
        usage.input_tokens * Decimal(rates["input"])
        + usage.cache_creation_input_tokens * Decimal(rates["cache write"])
        + usage.cache_read_input_tokens * Decimal(rates["cache read"])
    ) / MILLION
    return input_usd, usage.output_tokens * Decimal(rates["output"]) / MILLION


def _check_rates(response: ActorResponse[Any], rates: Any) -> None:
    cost = response.cost
    assert cost is not None, "the response has no cost"
    input_usd, output_usd = _expected(response.usage, rates)
    assert (cost.input_usd, cost.output_usd) == (input_usd, output_usd), (cost, input_usd, output_usd)
    assert cost.total_usd == input_usd + output_usd, cost


def _cost(response: ActorResponse[Any] | None) -> Cost:
    assert response is not None, response
    assert response.cost is not None, response
    return response.cost


@then("the cost is what the tokens cost at these rates, in dollars per million tokens:")
def step_cost_rates(context: Context) -> None:
    [rates] = context.table.rows
    _check_rates(world(context).answer(), rates)


@then("the cost of each outcome is what its tokens cost at these rates, in dollars per million tokens:")
def step_outcome_cost_rates(context: Context) -> None:
    w = world(context)
    w.succeeded()
    [rates] = context.table.rows
    for outcome in w.outcomes:
        assert isinstance(outcome, ActorResponse), outcome
        _check_rates(outcome, rates)


@then("the cost is half of its live equivalent, the saving being the other half")
def step_cost_half(context: Context) -> None:
    cost = _cost(world(context).answer())
    assert cost.total_usd > 0, cost
    assert cost.total_usd * 2 == cost.live_equivalent_usd, cost
    assert cost.savings_usd == cost.total_usd, cost


@then("the cost's saving is zero")
def step_cost_no_saving(context: Context) -> None:
    cost = _cost(world(context).answer())
    assert cost.live_equivalent_usd == cost.total_usd > 0, cost
    assert cost.savings_usd == 0, cost


@then("the response has no cost")
def step_no_cost(context: Context) -> None:
    response = world(context).answer()
    assert response.cost is None, response.cost
    assert response.usage.output_tokens > 0, response.usage


@then("both answers used the same tokens")
def step_same_tokens(context: Context) -> None:
    w = world(context)
    w.succeeded()
    live, batch = w.answers[-2:]
    assert live.mode.value == "live", (live.mode, batch.mode)
    assert batch.mode.value == "batch", (live.mode, batch.mode)
    assert live.usage == batch.usage, (live.usage, batch.usage)


@then("the batch answer cost half of the live answer, and its live equivalent is the live answer's cost")
def step_batch_half_of_live(context: Context) -> None:
    live, batch = world(context).answers[-2:]
    assert _cost(batch).total_usd * 2 == _cost(live).total_usd, (batch.cost, live.cost)
    assert _cost(batch).live_equivalent_usd == _cost(live).total_usd, (batch.cost, live.cost)


@when("the actor runs these prompts as a later call of run_many, the earlier outcomes kept:")
def step_later_run_many(context: Context) -> None:
    """A batch of its own: its requests start after the earlier call's were answered, and read what they wrote to
    the prompt cache (requests side by side in one batch do not)."""
    w = world(context)
    actor = w.current_actor()
    earlier_ids, earlier = list(w.custom_ids), list(w.outcomes)
    requests = [actor.request(row["prompt"], custom_id=row["custom_id"]) for row in context.table]
    outcomes = w.attempt_async(lambda: actor.run_many(requests)) or []
    w.custom_ids = earlier_ids + [row["custom_id"] for row in context.table]
    w.outcomes = earlier + list(outcomes)


@then('the outcome of "{cheaper}" cost less than the outcome of "{dearer}"')
def step_cheaper(context: Context, cheaper: str, dearer: str) -> None:
    w = world(context)
    low, high = w.outcome(cheaper), w.outcome(dearer)
    assert isinstance(low, ActorResponse), (low, high)
    assert isinstance(high, ActorResponse), (low, high)
    assert _cost(low).total_usd < _cost(high).total_usd, (low.cost, high.cost)


@when('the usage {usage} of "{model}" is priced in {mode} mode')
def step_price_usage(context: Context, usage: str, model: str, mode: str) -> None:
    from lowtide.config.actors import BatchProcessingMode
    from lowtide.cost.pricing import cost_of

    w = world(context)
    w.value = (json.loads(usage), model, mode, cost_of(json.loads(usage), model, mode=BatchProcessingMode(mode)))


@then("the price equals genai-prices' own calculation for that usage, model and mode")
def step_price_matches_library(context: Context) -> None:
    from genai_prices import calc_price, extract_usage

    usage, model, mode, cost = world(context).value
    extracted = extract_usage({"model": model, "usage": usage}, provider_id="anthropic")
    context_ = {"processing": "batch"} if mode == "batch" else None
    expected = calc_price(extracted.usage, model, provider_id="anthropic", price_context=context_)
    assert cost is not None
    assert (cost.input_usd, cost.output_usd) == (expected.input_price, expected.output_price), (cost, expected)
