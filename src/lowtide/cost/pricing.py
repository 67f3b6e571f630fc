"""What a call cost, through genai-prices, at batch or live prices, with cache reads and writes included.

genai-prices knows the providers' batch prices (its `processing: batch` price context) for current models, and the
service tiers a provider prices apart (`UsageShape.priced_tiers`). For a model it lists without a batch variant, the
providers' published rule applies: batch is half of every live rate. Each provider reports usage in its own shape,
which it describes in a `UsageShape` (registered with the registry: `ProviderRegistry.register_pricing`), and
genai-prices' own extractor for that provider reads it. A provider without one has no cost recorded.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from lowtide.config.settings import DEFAULT_PROVIDER
from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.usage_shape import PROBE_TOKENS, UsageShape, neutral_probes
from lowtide.errors import ConfigurationError
from lowtide.types import Cost, Usage

if TYPE_CHECKING:
    from genai_prices.types import PriceCalculation

# genai-prices is imported when the first price is asked for: its package imports its price-update machinery (httpx2,
# ssl; about 0.1 s of CPU), which a process that never prices an answer (`lowtide status`, an emulator) need not load.

__all__ = [
    "BATCH_DISCOUNT",
    "PROBE_TOKENS",
    "Catalogued",
    "UsageShape",
    "catalogued",
    "cost_of",
    "cost_range",
    "estimate_input_tokens",
    "forget_unpriced",
    "load_prices_in_background",
    "neutral_probes",
    "worst_case_cost",
]

log = logging.getLogger("lowtide.pricing")

BATCH_DISCOUNT = Decimal("0.5")
# Models genai-prices has no price for: each is reported once in a process, not once per response.
_UNPRICED: set[str] = set()
# Providers that registered no usage shape: each is reported once in a process.
_UNSHAPED: set[str] = set()


def cost_of(
    usage: Usage | Mapping[str, object],
    model: str,
    *,
    mode: BatchProcessingMode,
    provider: str | UsageShape = DEFAULT_PROVIDER,
    service_tier: str | None = None,
) -> Cost | None:
    """Price one response's usage at the rates of `mode`; `None` (never $0) when genai-prices does not know the
    model, which is logged once per model in a process.

    `provider` is the provider's name (its usage shape found through the default registry) or its `UsageShape`;
    `usage` is the neutral `Usage` or the usage object as that provider's API reported it. `service_tier` is the tier
    that answered a live call, when the provider prices tiers apart (`UsageShape.priced_tiers`).
    """
    if model in _UNPRICED:
        return None
    shape = _shape_of(provider)
    if shape is None:
        if provider not in _UNSHAPED:
            _UNSHAPED.add(str(provider))
            log.warning("No usage shape known for provider %r: the costs of its answers are not recorded.", provider)
        return None
    raw = shape.from_neutral(usage) if isinstance(usage, Usage) else dict(usage)
    try:
        if mode is BatchProcessingMode.LIVE:
            tier = ("service_tier", service_tier) if service_tier in shape.priced_tiers else None
            input_usd, output_usd = _price(raw, model, shape, context=tier)
            return Cost(
                total_usd=input_usd + output_usd,
                input_usd=input_usd,
                output_usd=output_usd,
                pricing="live",
                live_equivalent_usd=input_usd + output_usd,
            )
        live = _price(raw, model, shape, context=None)
        batch = _price(raw, model, shape, context=_BATCH)
    except LookupError:
        _UNPRICED.add(model)
        log.warning("No price is known for model %r: its cost is unknown, not $0, and is not recorded.", model)
        return None
    note: str | None = None
    input_usd, output_usd = batch
    live_total = live[0] + live[1]
    if input_usd + output_usd == live_total and live_total > 0:
        input_usd, output_usd = live[0] * BATCH_DISCOUNT, live[1] * BATCH_DISCOUNT
        note = f"genai-prices lists no batch price for this model; {shape.owner}'s 50% batch discount was applied."
    return Cost(
        total_usd=input_usd + output_usd,
        input_usd=input_usd,
        output_usd=output_usd,
        pricing="batch",
        live_equivalent_usd=live_total,
        note=note,
    )


_loading_lock = threading.Lock()
_loading: threading.Thread | None = None


def load_prices_in_background() -> None:
    """Start loading genai-prices' price table (about 0.2 s of CPU, once a process) in a thread of its own, so that
    the first answer priced does not hold up the event loop, and every call waiting on it, for that long. Called as
    live calls begin; a later `cost_of` finds the table loaded, or waits only for what is left of the load."""
    global _loading
    with _loading_lock:
        if _loading is None:
            _loading = threading.Thread(target=_load_snapshot, name="lowtide-prices", daemon=False)
            _loading.start()


def _load_snapshot() -> None:
    from genai_prices.data_snapshot import get_snapshot

    get_snapshot()


def forget_unpriced() -> None:
    """Report unpriced models (and providers with no usage shape) again, as a new process would (for tests)."""
    _UNPRICED.clear()
    _UNSHAPED.clear()


_Context = tuple[str, str] | None
"""One genai-prices price context entry (`processing: batch`, `service_tier: flex`), or none: standard live."""
_BATCH: _Context = ("processing", "batch")


_shapes: dict[str, UsageShape] = {}
"""The usage shapes found through the registry, by provider name."""


def _shape_of(provider: str | UsageShape) -> UsageShape | None:
    """The usage shape given, or the one `provider` registered with the default registry (as its parameter check
    is found); None for a provider that registered none, or when the plugins cannot load (said when an actor
    resolves its provider)."""
    if isinstance(provider, UsageShape):
        return provider
    shape = _shapes.get(provider)
    if shape is None:
        from lowtide.registry import default_registry  # the registry's modules import this one

        try:
            shape = default_registry().usage_shape(provider)
        except ConfigurationError:
            return None
        if shape is not None:
            _shapes[provider] = shape
    return shape


@dataclass(frozen=True)
class _Rates:
    """Per-token (input, output) USD for each usage field, valid while total input stays under `linear_below`."""

    per_token: dict[str, tuple[Decimal, Decimal]]
    linear_below: int


def _price(raw: Mapping[str, object], model: str, shape: UsageShape, *, context: _Context) -> tuple[Decimal, Decimal]:
    """(input, output) USD for `raw` usage. genai-prices is exact but slow (about 0.3 ms a call), so below the
    first long-context tier, where every token of a kind costs the same, its own per-token rates are used."""
    rates = _rates(model, shape, context)
    fields = shape.fields(raw)
    total_input = sum(count for name, count in fields.items() if name != "output_tokens")
    if total_input >= rates.linear_below:
        calculation = _calc(raw, model, shape, context)
        return calculation.input_price, calculation.output_price
    input_usd = output_usd = Decimal(0)
    for name, count in fields.items():
        if count:
            unit_in, unit_out = rates.per_token[name]
            input_usd += unit_in * count
            output_usd += unit_out * count
    return input_usd, output_usd


@functools.cache
def _rates(model: str, shape: UsageShape, context: _Context) -> _Rates:
    from genai_prices.types import TieredPrices

    per_token: dict[str, tuple[Decimal, Decimal]] = {}
    thresholds: list[int] = []
    for name, probe in shape.probes:
        calculation = _calc(probe, model, shape, context)
        per_token[name] = (calculation.input_price / PROBE_TOKENS, calculation.output_price / PROBE_TOKENS)
        for value in vars(calculation.model_price).values():
            if isinstance(value, TieredPrices):
                thresholds.extend(tier.start for tier in value.tiers)
    return _Rates(per_token, min(thresholds, default=2**62))


def _calc(raw: Mapping[str, object], model: str, shape: UsageShape, context: _Context) -> PriceCalculation:
    from genai_prices import calc_price, extract_usage

    # Extracted by another provider's extractor, the usage names no model (that provider need not list it).
    response = {"usage": dict(raw)} if shape.extracted_as else {"model": model, "usage": dict(raw)}
    extracted = extract_usage(
        response, provider_id=shape.extracted_as or shape.genai_provider, api_flavor=shape.flavor(raw)
    )
    price_context = dict([context]) if context is not None else None
    return calc_price(extracted.usage, model, provider_id=shape.genai_provider, price_context=price_context)


# Fewer bytes per token than typical English (about 4) so the estimate errs high, as a budget check must.
_BYTES_PER_TOKEN = 3


def estimate_input_tokens(params: Mapping[str, object]) -> int:
    """A deliberately high estimate of a request's input tokens, from the size of what it sends."""
    sent = {name: params.get(name) for name in ("system", "messages", "tools")}
    size = len(json.dumps(sent, separators=(",", ":"), default=str).encode())
    return max(1, -(-size // _BYTES_PER_TOKEN))


def worst_case_cost(
    params: Mapping[str, Any], *, mode: BatchProcessingMode, provider: str | UsageShape = DEFAULT_PROVIDER
) -> Decimal | None:
    """The most a request can cost: estimated input, and output at `max_tokens`; `None` for an unpriced model.

    `params` are the neutral request's `model`, `max_tokens`, `system`, `messages` and `tools` (a provider whose
    body names them the same way may pass its body).
    """
    usage = Usage(input_tokens=estimate_input_tokens(params), output_tokens=int(params.get("max_tokens", 0)))
    cost = cost_of(usage, str(params.get("model", "")), mode=mode, provider=provider)
    return cost.total_usd if cost is not None else None


# Input tokens at about four bytes each: the low end of an estimate (the budget check's high end uses three).
_LOW_BYTES_PER_TOKEN = 4


def cost_range(
    model: str,
    *,
    input_tokens: int,
    max_output_tokens: int,
    mode: BatchProcessingMode,
    provider: str | UsageShape = DEFAULT_PROVIDER,
) -> tuple[Decimal, Decimal] | None:
    """(low, high) estimate of one request, for a dry run: input alone at about four bytes a token, up to
    `input_tokens` (the high estimate, at three) and output at its maximum; `None` for an unpriced model."""
    low_input = max(1, input_tokens * _BYTES_PER_TOKEN // _LOW_BYTES_PER_TOKEN)
    low = cost_of(Usage(input_tokens=low_input), model, mode=mode, provider=provider)
    high = cost_of(
        Usage(input_tokens=input_tokens, output_tokens=max_output_tokens), model, mode=mode, provider=provider
    )
    if low is None or high is None:
        return None
    return low.total_usd, high.total_usd


@dataclass(frozen=True)
class Catalogued:
    """What genai-prices' catalogue says, offline, of a model a provider's request names."""

    owner: str
    """The provider's name as its users write it."""
    listed: bool
    """Whether the catalogue lists the model for that provider."""
    context_window: int | None
    """The model's context window in tokens, when the catalogue gives one."""
    names: tuple[str, ...]
    """The provider's model names the catalogue lists (for "did you mean")."""


def catalogued(model: str, provider: str | UsageShape) -> Catalogued | None:
    """What the catalogue says of `model` at `provider`, without asking any API; None for a provider with no usage
    shape (whose models the catalogue does not know)."""
    from genai_prices.data_snapshot import get_snapshot

    shape = _shape_of(provider)
    if shape is None:
        return None
    snapshot = get_snapshot()
    listing = next((entry for entry in snapshot.providers if entry.id == shape.genai_provider), None)
    if listing is None:
        return None
    names = tuple(entry.id for entry in listing.models)
    try:
        _, info = snapshot.find_provider_model(model, None, shape.genai_provider, None)
    except LookupError:
        return Catalogued(shape.owner, listed=False, context_window=None, names=names)
    return Catalogued(shape.owner, listed=True, context_window=info.context_window, names=names)
