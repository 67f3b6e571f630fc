"""`TokenPricedCodec`: a `BatchCodec` whose budgets and dry-run estimates come from each stored request's token
bounds (its input estimated from the bytes it sends, its output limit) and the provider's `UsageShape`.

A provider's codec says how to read those bounds from its own body (`token_bounds`); the prices, the modes and the
low/high estimate are the same for every provider (`lowtide.cost.pricing`)."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Collection, Mapping
from decimal import Decimal

from lowtide.batching.backend import BatchCodec
from lowtide.core.modes import BatchProcessingMode
from lowtide.cost.pricing import cost_of, cost_range
from lowtide.cost.usage_shape import UsageShape
from lowtide.types import Usage

__all__ = ["TokenPricedCodec", "sent_tokens"]

# Fewer bytes per token than typical text (about 4), so that a budget's estimate errs high.
_BYTES_PER_TOKEN = 3


def sent_tokens(body: Mapping[str, object], *, leaving_out: Collection[str] = ()) -> int:
    """A deliberately high estimate of a body's input tokens, from the size of everything it sends but the fields
    named in `leaving_out` (its output limit, its generation settings)."""
    sent = {name: value for name, value in body.items() if name not in leaving_out}
    size = len(json.dumps(sent, separators=(",", ":"), default=str).encode())
    return max(1, -(-size // _BYTES_PER_TOKEN))


class TokenPricedCodec(BatchCodec):
    """A codec whose requests are priced from their token bounds at `usage_shape`'s prices."""

    usage_shape: UsageShape
    """How the provider's answers report usage, which is how its prices are read."""

    @abstractmethod
    def token_bounds(self, params: Mapping[str, object]) -> tuple[int, int]:
        """A stored request's (input, output) tokens at most: the input estimated high (`sent_tokens`), the output
        its limit (0 when it sets none)."""

    def worst_case_usd(
        self, params: Mapping[str, object], params_json: str | None, *, mode: BatchProcessingMode
    ) -> Decimal | None:
        inputs, outputs = self.token_bounds(params)
        cost = cost_of(
            Usage(input_tokens=inputs, output_tokens=outputs),
            self.model_of(params),
            mode=mode,
            provider=self.usage_shape,
        )
        return cost.total_usd if cost is not None else None

    def cost_range(self, params: Mapping[str, object]) -> tuple[Decimal, Decimal] | None:
        inputs, outputs = self.token_bounds(params)
        return cost_range(
            self.model_of(params),
            input_tokens=inputs,
            max_output_tokens=outputs,
            mode=BatchProcessingMode.BATCH,
            provider=self.usage_shape,
        )
