"""A run's budget (`Agent.start(..., max_cost_usd=...)`) over all its model turns: each turn not sent yet is given
what is left of it as its own budget, so that the existing check refuses a turn whose worst case would cross it
before anything is sent; the refusal is then said as the run's, naming its budget and what it has spent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from lowtide.errors import BudgetExceededError

__all__ = ["over", "turn_arguments"]


def over(run_id: str, budget: Decimal, spent: Decimal, estimate: Decimal) -> BudgetExceededError:
    """The run's refusal: its next turn's worst case `estimate` and its `spent` would cross its `budget`."""
    return BudgetExceededError(
        scope=f"agent run {run_id!r} (its next turn)", limit_usd=budget, spent_usd=spent, estimate_usd=estimate
    )


def turn_arguments(run_id: str, budget: Decimal | None, spent: Decimal, arguments: dict[str, Any]) -> dict[str, Any]:
    """The turn's arguments with the tighter of its own `max_cost_usd` and what is left of the run's budget (raising
    the run's refusal at once when nothing is left)."""
    if budget is None:
        return arguments
    left = budget - spent
    own = arguments.get("max_cost_usd")
    if own is not None and Decimal(str(own)) <= left:
        return arguments
    if left <= 0:
        raise over(run_id, budget, spent, Decimal(0))
    return {**arguments, "max_cost_usd": float(left)}
