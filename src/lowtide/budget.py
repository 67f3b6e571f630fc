"""A request's worst case checked against budgets: pure, so that live and batch calls (and their tests) share it."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from lowtide.errors import BudgetExceededError, ConfigurationError

__all__ = ["Limit", "within_limits"]

Limit = tuple[str, float | None, Decimal]
"""A budget: its scope (as the error names it), its limit in dollars (None: no limit), and what is committed in it."""


def within_limits(estimate: Decimal | None, model: str, limits: Sequence[Limit], *, requests: int = 1) -> Decimal:
    """The request's worst case `estimate` (the provider's, at the call's prices; None when `model` has no price), or
    that of `requests` requests together, after checking it against every (scope, limit, committed)."""
    if estimate is None:
        raise ConfigurationError(
            f"No price is known for model {model!r}, so a budget cannot be checked.", field="max_cost_usd"
        )
    for scope, limit, committed in limits:
        if limit is not None and committed + estimate > Decimal(str(limit)):
            raise BudgetExceededError(
                scope=scope,
                limit_usd=Decimal(str(limit)),
                spent_usd=committed,
                estimate_usd=estimate,
                requests=requests,
            )
    return estimate
