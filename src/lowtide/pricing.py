"""What a call cost, through genai-prices, at batch or live prices, with cache reads and writes included.

genai-prices knows Anthropic's batch prices (its `processing: batch` price context) for current models. For a
model it lists without a batch variant, Anthropic's published rule applies: batch is half of every live rate.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from genai_prices import calc_price, extract_usage
from genai_prices.types import PriceCalculation, TieredPrices

from lowtide.config import BatchProcessingMode
from lowtide.types import Cost, Usage

__all__ = ["BATCH_DISCOUNT", "cost_of", "estimate_input_tokens", "forget_unpriced", "worst_case_cost"]

log = logging.getLogger(__name__)

BATCH_DISCOUNT = Decimal("0.5")
_PROVIDER = "anthropic"
_BATCH_CONTEXT = {"processing": "batch"}
_PROBE_TOKENS = 1000


# Models genai-prices has no price for: each is reported once in a process, not once per response.
_UNPRICED: set[str] = set()


def cost_of(usage: Usage | Mapping[str, Any], model: str, *, mode: BatchProcessingMode) -> Cost | None:
    """Price one response's usage at the rates of `mode`; `None` (never $0) when genai-prices does not know the
    model, which is logged once per model in a process."""
    if model in _UNPRICED:
        return None
    raw = usage.model_dump() if isinstance(usage, Usage) else dict(usage)
    try:
        live = _price(raw, model, batch=False)
        batch = _price(raw, model, batch=True)
    except LookupError:
        _UNPRICED.add(model)
        log.warning("No price is known for model %r: its cost is unknown, not $0, and is not recorded.", model)
        return None
    if mode is BatchProcessingMode.LIVE:
        return Cost(
            total_usd=live[0] + live[1],
            input_usd=live[0],
            output_usd=live[1],
            pricing="live",
            live_equivalent_usd=live[0] + live[1],
        )
    note: str | None = None
    input_usd, output_usd = batch
    live_total = live[0] + live[1]
    if input_usd + output_usd == live_total and live_total > 0:
        input_usd, output_usd = live[0] * BATCH_DISCOUNT, live[1] * BATCH_DISCOUNT
        note = "genai-prices lists no batch price for this model; Anthropic's 50% batch discount was applied."
    return Cost(
        total_usd=input_usd + output_usd,
        input_usd=input_usd,
        output_usd=output_usd,
        pricing="batch",
        live_equivalent_usd=live_total,
        note=note,
    )


def forget_unpriced() -> None:
    """Report unpriced models again, as a new process would (for tests)."""
    _UNPRICED.clear()


# The usage fields genai-prices' Anthropic extractor reads, as the Messages API reports them.
_ZERO = {"input_tokens": 0, "output_tokens": 0}
_PROBES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("input_tokens", {**_ZERO, "input_tokens": _PROBE_TOKENS}),
    ("output_tokens", {**_ZERO, "output_tokens": _PROBE_TOKENS}),
    ("cache_read_input_tokens", {**_ZERO, "cache_read_input_tokens": _PROBE_TOKENS}),
    ("cache_creation_input_tokens", {**_ZERO, "cache_creation_input_tokens": _PROBE_TOKENS}),
    (
        "ephemeral_1h_input_tokens",
        {
            **_ZERO,
            "cache_creation_input_tokens": _PROBE_TOKENS,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": _PROBE_TOKENS},
        },
    ),
)


@dataclass(frozen=True)
class _Rates:
    """Per-token (input, output) USD for each usage field, valid while total input stays under `linear_below`."""

    per_token: dict[str, tuple[Decimal, Decimal]]
    linear_below: int


def _price(raw: Mapping[str, Any], model: str, *, batch: bool) -> tuple[Decimal, Decimal]:
    """(input, output) USD for `raw` usage. genai-prices is exact but slow (about 0.3 ms a call), so below the
    first long-context tier, where every token of a kind costs the same, its own per-token rates are used."""
    rates = _rates(model, batch)
    fields = _fields(raw)
    total_input = fields["input_tokens"] + fields["cache_read_input_tokens"] + fields["cache_creation_input_tokens"]
    if total_input >= rates.linear_below:
        calculation = _calc(raw, model, batch)
        return calculation.input_price, calculation.output_price
    input_usd = output_usd = Decimal(0)
    for name, count in fields.items():
        if count:
            unit_in, unit_out = rates.per_token[name]
            input_usd += unit_in * count
            output_usd += unit_out * count
    return input_usd, output_usd


def _fields(raw: Mapping[str, Any]) -> dict[str, int]:
    creation = raw.get("cache_creation")
    one_hour = int(cast("Mapping[str, Any]", creation).get("ephemeral_1h_input_tokens") or 0) if creation else 0
    return {
        "input_tokens": int(raw.get("input_tokens") or 0),
        "output_tokens": int(raw.get("output_tokens") or 0),
        "cache_read_input_tokens": int(raw.get("cache_read_input_tokens") or 0),
        # 1 hour cache writes are priced apart from the 5 minute ones they are counted with.
        "cache_creation_input_tokens": int(raw.get("cache_creation_input_tokens") or 0) - one_hour,
        "ephemeral_1h_input_tokens": one_hour,
    }


@functools.cache
def _rates(model: str, batch: bool) -> _Rates:
    per_token: dict[str, tuple[Decimal, Decimal]] = {}
    thresholds: list[int] = []
    for name, probe in _PROBES:
        calculation = _calc(probe, model, batch)
        per_token[name] = (calculation.input_price / _PROBE_TOKENS, calculation.output_price / _PROBE_TOKENS)
        for value in vars(calculation.model_price).values():
            if isinstance(value, TieredPrices):
                thresholds.extend(tier.start for tier in value.tiers)
    return _Rates(per_token, min(thresholds, default=2**62))


def _calc(raw: Mapping[str, Any], model: str, batch: bool) -> PriceCalculation:
    extracted = extract_usage({"model": model, "usage": dict(raw)}, provider_id=_PROVIDER)
    context = _BATCH_CONTEXT if batch else None
    return calc_price(extracted.usage, model, provider_id=_PROVIDER, price_context=context)


# Fewer bytes per token than typical English (about 4) so the estimate errs high, as a budget check must.
_BYTES_PER_TOKEN = 3


def estimate_input_tokens(params: Mapping[str, Any]) -> int:
    """A deliberately high estimate of a request's input tokens, from the size of what it sends."""
    sent = {name: params.get(name) for name in ("system", "messages", "tools")}
    size = len(json.dumps(sent, separators=(",", ":"), default=str).encode())
    return max(1, -(-size // _BYTES_PER_TOKEN))


def worst_case_cost(params: Mapping[str, Any], *, mode: BatchProcessingMode) -> Decimal | None:
    """The most a request can cost: estimated input, and output at `max_tokens`; `None` for an unpriced model."""
    usage = Usage(input_tokens=estimate_input_tokens(params), output_tokens=int(params.get("max_tokens", 0)))
    cost = cost_of(usage, str(params.get("model", "")), mode=mode)
    return cost.total_usd if cost is not None else None
