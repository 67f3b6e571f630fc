"""The checks a call passes before anything is recorded or sent, besides its arguments': the provider's pre-send checks
of a batch-mode call the ledger does not know, and the budgets (the call's own `max_cost_usd`, and the actor's against
what its ledger holds as spent or committed), at the mode's prices."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from lowtide.batching.engine.batch_engine import BatchEngine
from lowtide.calls.owners import owner_of, reserve_for
from lowtide.calls.prompt_calls import DurableCall
from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.cost.budget import Limit, within_limits, worst_case_of
from lowtide.ledger.spend_records import Owner
from lowtide.provider import Provider
from lowtide.types import ActorRequest

__all__ = ["durable_call", "refuse_over"]


async def durable_call(
    configuration: ActorConfiguration,
    engine: BatchEngine,
    params: dict[str, object],
    *,
    key: str,
    max_cost_usd: float | None,
    checked: tuple[Provider, ActorRequest] | None,
    now: Callable[[], float],
) -> DurableCall:
    """A batch-mode call with `params` under `key`, past the provider's pre-send checks of the request to be
    `checked` (None: checked already) and the budget checks, its worst case reserved in `engine`, and, when it has
    an owner (`calls.owners`), against its owner's caps in the ledger.

    A key the ledger already knows costs nothing more (it attaches), so it is not checked again.
    """
    owner = owner_of(configuration)
    budgeted = max_cost_usd is not None or configuration.max_cost_usd is not None
    known = (checked is not None or budgeted or owner.known) and await engine.knows(key)
    if checked is not None and not known:
        provider, request = checked
        await provider.preflight(request)
    estimate = None
    if budgeted and not known:
        # Checked and reserved in one step (no await between): calls of one moment count against each other before
        # any is recorded, even while an earlier one awaits its owner's caps below.
        estimate = await _check_budget(configuration, engine, params, max_cost_usd)
        if estimate is not None:
            engine.reserve(configuration.name, estimate)
    owned = owner.known and not known
    if owned:
        try:
            await _reserve_owned(configuration, engine, params, owner, key=key, estimate=estimate, at=now())
        except BaseException:
            if estimate is not None:  # refused by a cap (or cancelled): its budget's reservation let go
                engine.reserve(configuration.name, -estimate)
            raise
    return DurableCall(engine, params, key, estimate, owned)


async def _reserve_owned(
    configuration: ActorConfiguration,
    engine: BatchEngine,
    params: dict[str, object],
    owner: Owner,
    *,
    key: str,
    estimate: Decimal | None,
    at: float,
) -> None:
    """Reserve a new call's worst case against its owner's caps in the ledger."""
    codec = engine.backend.codec
    model = codec.model_of(params)
    worst = estimate if estimate is not None else codec.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)
    worst = within_limits(worst, model, [])  # an unpriced model refused: its owner's caps could not be kept
    await reserve_for(owner, engine, key=key, actor=configuration.name, model=model, worst_case_usd=worst, at=at)


def refuse_over(
    configuration: ActorConfiguration, request: ActorRequest, max_cost_usd: float, *, mode: BatchProcessingMode
) -> None:
    """The budget of a call outside the ledger (a live call), at the mode's prices."""
    estimate = worst_case_of(request, mode=mode, provider=configuration.provider)
    within_limits(estimate, request.model, [(_call(configuration), max_cost_usd, Decimal(0))])


async def _check_budget(
    configuration: ActorConfiguration, engine: BatchEngine, params: dict[str, object], max_cost_usd: float | None
) -> Decimal | None:
    """Refuse a request whose worst case would cross the call's or the actor's budget."""
    name = configuration.name
    limits: list[Limit] = [(_call(configuration), max_cost_usd, Decimal(0))]
    if configuration.max_cost_usd is not None:
        committed = await engine.ledger.committed_usd(name) + engine.reserved(name)
        limits.append((f"actor {name!r}", configuration.max_cost_usd, committed))
    if all(limit is None for _, limit, _ in limits):
        return None  # no budget to keep: no estimate to record either
    estimate = engine.backend.codec.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)
    return within_limits(estimate, engine.backend.codec.model_of(params), limits)


def _call(configuration: ActorConfiguration) -> str:
    return f"this call to actor {configuration.name!r}"
