"""What a call cost, through genai-prices, at batch or live prices, with cache reads and writes included.

genai-prices knows Anthropic's batch prices (its `processing: batch` price context) for current models. For a
model it lists without a batch variant, Anthropic's published rule applies: batch is half of every live rate.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from genai_prices import calc_price, extract_usage

from lowtide.config import BatchProcessingMode
from lowtide.types import Cost, Usage

__all__ = ["BATCH_DISCOUNT", "cost_of", "estimate_input_tokens", "worst_case_cost"]

log = logging.getLogger(__name__)

BATCH_DISCOUNT = Decimal("0.5")
_PROVIDER = "anthropic"
_BATCH_CONTEXT = {"processing": "batch"}


def cost_of(usage: Usage | Mapping[str, Any], model: str, *, mode: BatchProcessingMode) -> Cost | None:
    """Price one response's usage at the rates of `mode`; `None` when genai-prices does not know the model."""
    raw = usage.model_dump() if isinstance(usage, Usage) else dict(usage)
    try:
        extracted = extract_usage({"model": model, "usage": raw}, provider_id=_PROVIDER)
        live = calc_price(extracted.usage, model, provider_id=_PROVIDER)
        batch = calc_price(extracted.usage, model, provider_id=_PROVIDER, price_context=_BATCH_CONTEXT)
    except LookupError:
        log.warning("No price known for model %r; its cost is not recorded.", model)
        return None
    if mode is BatchProcessingMode.LIVE:
        return Cost(
            total_usd=live.total_price,
            input_usd=live.input_price,
            output_usd=live.output_price,
            pricing="live",
            live_equivalent_usd=live.total_price,
        )
    note: str | None = None
    input_usd, output_usd = batch.input_price, batch.output_price
    if batch.total_price == live.total_price and live.total_price > 0:
        input_usd, output_usd = live.input_price * BATCH_DISCOUNT, live.output_price * BATCH_DISCOUNT
        note = "genai-prices lists no batch price for this model; Anthropic's 50% batch discount was applied."
    return Cost(
        total_usd=input_usd + output_usd,
        input_usd=input_usd,
        output_usd=output_usd,
        pricing="batch",
        live_equivalent_usd=live.total_price,
        note=note,
    )


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
