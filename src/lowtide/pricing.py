"""What a call cost, through genai-prices, at batch or live prices, with cache reads and writes included.

genai-prices knows Anthropic's and OpenAI's batch prices (its `processing: batch` price context) for current models,
and OpenAI's flex and priority service tiers. For a model it lists without a batch variant, the provider's published
rule applies: batch is half of every live rate. Each provider reports usage in its own shape; genai-prices' own
extractor for that provider reads it.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from genai_prices import calc_price, extract_usage
from genai_prices.data_snapshot import get_snapshot
from genai_prices.types import PriceCalculation, TieredPrices

from lowtide.config import BatchProcessingMode
from lowtide.types import Cost, Usage

__all__ = [
    "BATCH_DISCOUNT",
    "PRICED_PROVIDERS",
    "cost_of",
    "estimate_input_tokens",
    "forget_unpriced",
    "load_prices_in_background",
    "worst_case_cost",
]

log = logging.getLogger(__name__)

BATCH_DISCOUNT = Decimal("0.5")
_BATCH_CONTEXT = {"processing": "batch"}
_PROBE_TOKENS = 1000
# Service tiers genai-prices prices apart from the standard one (OpenAI's).
_PRICED_TIERS = frozenset({"flex", "priority"})


# Models genai-prices has no price for: each is reported once in a process, not once per response.
_UNPRICED: set[str] = set()


def cost_of(
    usage: Usage | Mapping[str, Any],
    model: str,
    *,
    mode: BatchProcessingMode,
    provider: str = "anthropic",
    service_tier: str | None = None,
) -> Cost | None:
    """Price one response's usage at the rates of `mode`; `None` (never $0) when genai-prices does not know the
    model, which is logged once per model in a process.

    `usage` is the neutral `Usage` or the usage object as `provider`'s API reported it. `service_tier` is the tier
    that answered a live call, when the provider prices tiers apart (OpenAI's `flex` and `priority`).
    """
    if model in _UNPRICED:
        return None
    shape = _SHAPES.get(provider)
    if shape is None:
        log.warning("No usage shape known for provider %r; the cost of model %r is not recorded.", provider, model)
        return None
    raw = shape.from_neutral(usage) if isinstance(usage, Usage) else dict(usage)
    try:
        if mode is BatchProcessingMode.LIVE:
            tier = ("service_tier", service_tier) if service_tier in _PRICED_TIERS else None
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
            _loading = threading.Thread(target=get_snapshot, name="lowtide-prices", daemon=False)
            _loading.start()


def forget_unpriced() -> None:
    """Report unpriced models again, as a new process would (for tests)."""
    _UNPRICED.clear()


_Context = tuple[str, str] | None
"""One genai-prices price context entry (`processing: batch`, `service_tier: flex`), or none: standard live."""
_BATCH: _Context = ("processing", "batch")


@dataclass(frozen=True, eq=False)
class _Shape:
    """How one provider reports usage: genai-prices' name for it, the token kinds priced apart (`fields`), a usage
    of that shape with 1,000 tokens of each kind (`probes`), and the usage a neutral `Usage` stands for."""

    provider: str
    owner: str
    """The provider's name as its users write it, for the batch discount's note."""
    fields: Callable[[Mapping[str, Any]], dict[str, int]]
    probes: tuple[tuple[str, dict[str, Any]], ...]
    from_neutral: Callable[[Usage], dict[str, Any]]
    flavor: Callable[[Mapping[str, Any]], str]
    """genai-prices' `api_flavor` of a usage (OpenAI's Chat Completions and Responses shapes differ)."""


# Anthropic: the usage fields genai-prices' Anthropic extractor reads, as the Messages API reports them.
_ZERO = {"input_tokens": 0, "output_tokens": 0}
_ANTHROPIC_PROBES: tuple[tuple[str, dict[str, Any]], ...] = (
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


def _anthropic_fields(raw: Mapping[str, Any]) -> dict[str, int]:
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


def _anthropic_usage(usage: Usage) -> dict[str, Any]:
    return usage.model_dump()


# OpenAI: input tokens include the cached ones and those written to the cache; the Responses API reports
# `input_tokens`/`output_tokens` with `input_tokens_details`, Chat Completions `prompt_tokens`/`completion_tokens`
# with `prompt_tokens_details`.
def _openai_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
        "output_tokens": usage.output_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_input_tokens,
            "cache_write_tokens": usage.cache_creation_input_tokens,
        },
    }


def _openai_flavor(raw: Mapping[str, Any]) -> str:
    return "chat" if "prompt_tokens" in raw else "responses"


def _openai_fields(raw: Mapping[str, Any]) -> dict[str, int]:
    chat = "prompt_tokens" in raw
    details: Mapping[str, Any] = raw.get("prompt_tokens_details" if chat else "input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    written = int(details.get("cache_write_tokens") or 0)
    return {
        "input_tokens": int(raw.get("prompt_tokens" if chat else "input_tokens") or 0) - cached - written,
        "output_tokens": int(raw.get("completion_tokens" if chat else "output_tokens") or 0),
        "cached_tokens": cached,
        "cache_write_tokens": written,
    }


def _openai_probe(**counts: int) -> dict[str, Any]:
    return _openai_usage(Usage(**counts))


_OPENAI_PROBES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("input_tokens", _openai_probe(input_tokens=_PROBE_TOKENS)),
    ("output_tokens", _openai_probe(output_tokens=_PROBE_TOKENS)),
    ("cached_tokens", _openai_probe(cache_read_input_tokens=_PROBE_TOKENS)),
    ("cache_write_tokens", _openai_probe(cache_creation_input_tokens=_PROBE_TOKENS)),
)

_SHAPES: dict[str, _Shape] = {
    "anthropic": _Shape(
        "anthropic", "Anthropic", _anthropic_fields, _ANTHROPIC_PROBES, _anthropic_usage, lambda _: "default"
    ),
    "openai": _Shape("openai", "OpenAI", _openai_fields, _OPENAI_PROBES, _openai_usage, _openai_flavor),
}
PRICED_PROVIDERS = frozenset(_SHAPES)
"""The providers whose usage `cost_of` can read."""


@dataclass(frozen=True)
class _Rates:
    """Per-token (input, output) USD for each usage field, valid while total input stays under `linear_below`."""

    per_token: dict[str, tuple[Decimal, Decimal]]
    linear_below: int


def _price(raw: Mapping[str, Any], model: str, shape: _Shape, *, context: _Context) -> tuple[Decimal, Decimal]:
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
def _rates(model: str, shape: _Shape, context: _Context) -> _Rates:
    per_token: dict[str, tuple[Decimal, Decimal]] = {}
    thresholds: list[int] = []
    for name, probe in shape.probes:
        calculation = _calc(probe, model, shape, context)
        per_token[name] = (calculation.input_price / _PROBE_TOKENS, calculation.output_price / _PROBE_TOKENS)
        for value in vars(calculation.model_price).values():
            if isinstance(value, TieredPrices):
                thresholds.extend(tier.start for tier in value.tiers)
    return _Rates(per_token, min(thresholds, default=2**62))


def _calc(raw: Mapping[str, Any], model: str, shape: _Shape, context: _Context) -> PriceCalculation:
    extracted = extract_usage(
        {"model": model, "usage": dict(raw)}, provider_id=shape.provider, api_flavor=shape.flavor(raw)
    )
    price_context = dict([context]) if context is not None else None
    return calc_price(extracted.usage, model, provider_id=shape.provider, price_context=price_context)


# Fewer bytes per token than typical English (about 4) so the estimate errs high, as a budget check must.
_BYTES_PER_TOKEN = 3


def estimate_input_tokens(params: Mapping[str, Any]) -> int:
    """A deliberately high estimate of a request's input tokens, from the size of what it sends."""
    sent = {name: params.get(name) for name in ("system", "messages", "tools")}
    size = len(json.dumps(sent, separators=(",", ":"), default=str).encode())
    return max(1, -(-size // _BYTES_PER_TOKEN))


def worst_case_cost(
    params: Mapping[str, Any], *, mode: BatchProcessingMode, provider: str = "anthropic"
) -> Decimal | None:
    """The most a request can cost: estimated input, and output at `max_tokens`; `None` for an unpriced model.

    `params` are the neutral request's `model`, `max_tokens`, `system`, `messages` and `tools` (the Messages API
    names them the same way).
    """
    usage = Usage(input_tokens=estimate_input_tokens(params), output_tokens=int(params.get("max_tokens", 0)))
    cost = cost_of(usage, str(params.get("model", "")), mode=mode, provider=provider)
    return cost.total_usd if cost is not None else None


# Input tokens at about four bytes each: the low end of an estimate (the budget check's high end uses three).
_LOW_BYTES_PER_TOKEN = 4


def cost_range(
    model: str, *, input_tokens: int, max_output_tokens: int, mode: BatchProcessingMode, provider: str = "anthropic"
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
