"""The venues a provider offers for a call (its batch API, its live API, a cheaper slower live tier such as OpenAI's
`service_tier="flex"`), declared by the provider as data (`Provider.venues`): how each is sent, what it costs against
the live price, and how long it is expected to take."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lowtide.core.modes import BatchProcessingMode

__all__ = ["BATCH", "DEFAULT_VENUES", "LIVE", "LIVE_CALL_SECONDS", "Venue"]

LIVE_CALL_SECONDS = 30.0
"""How long one live call is expected to take, conservatively, when nothing better is known (a long answer at a
model's slowest pace): a live route's expected time is its waves of calls at `live.max_concurrency` times this, or
the time the configured per-minute limits allow, whichever is longer."""


@dataclass(frozen=True)
class Venue:
    """One way to send a call. `price_factor` is its price against the live price (0.5: half); `mode` the engine that
    sends it; `provider_options` what each of its requests adds to its provider options (`{"openai": {"service_tier":
    "flex"}}`: the provider's own section, read by its own request builder); `pace` how much longer than a live
    call one of its calls takes (a live venue), or None for a batch venue, whose time is the ledger's history of the
    provider's batches (`routing.history`)."""

    name: str
    mode: BatchProcessingMode
    price_factor: float
    provider_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict[str, Mapping[str, Any]])
    pace: float | None = 1.0

    def applied(self, options: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """`options` (a request's provider options) with this venue's added, its own winning."""
        merged = {name: dict(section) for name, section in options.items()}
        for name, section in self.provider_options.items():
            merged[name] = {**merged.get(name, {}), **section}
        return merged

    @property
    def batched(self) -> bool:
        """Whether the venue is a batch API (its time from history, its late batches moved)."""
        return self.mode is BatchProcessingMode.BATCH


BATCH = Venue("batch", BatchProcessingMode.BATCH, 0.5, pace=None)
"""A provider's batch API: half the live price, within its 24 hours."""
LIVE = Venue("live", BatchProcessingMode.LIVE, 1.0)
"""A provider's live API at its standard price."""
DEFAULT_VENUES = (BATCH, LIVE)
"""What a provider offers unless it says otherwise (the batch venue only where it has a batch backend)."""
