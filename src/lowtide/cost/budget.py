"""A request's worst case, and checked against budgets: pure, so that live and batch calls (and their tests) share
it."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.pricing import estimate_input_tokens, worst_case_cost
from lowtide.errors import BudgetExceededError, ConfigurationError
from lowtide.types import ActorRequest, Usage

__all__ = ["Limit", "within_limits", "worst_case_of"]

_PRICED = frozenset({"model", "max_tokens", "messages", "system", "tools"})
"""The fields of a request that its worst case is priced from."""

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


def worst_case_of(request: ActorRequest, *, mode: BatchProcessingMode, provider: str) -> Decimal | None:
    """What `request` could cost at most sent outside the ledger (a live call, or a provider with no batch backend),
    at `mode`'s prices: its input as estimated and its `max_tokens` answered; None when its model has no price."""
    sent = request.model_dump(mode="json", include=set(_PRICED))
    from lowtide.registry import default_registry  # the registry loads the plugins that register prices

    configured = default_registry().configured_prices(provider)
    if configured is None:
        return worst_case_cost(sent, mode=mode, provider=provider)
    # Prices the actor configures (an endpoint genai-prices cannot know) are in the request's provider options.
    usage = Usage(input_tokens=estimate_input_tokens(sent), output_tokens=request.max_tokens)
    cost = configured(request.provider_options, usage, request.model, mode)
    return cost.total_usd if cost is not None else None
