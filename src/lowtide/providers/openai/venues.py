"""OpenAI's venues for a deadline's route: its Batch API, its live APIs, and between them the flex tier
(`service_tier="flex"`): batch prices, answered live but more slowly (OpenAI: "slower response times and occasional
resource unavailability")."""

from __future__ import annotations

from lowtide.core.modes import BatchProcessingMode
from lowtide.routing.venues import BATCH, LIVE, Venue

__all__ = ["FLEX", "OPENAI_VENUES"]

FLEX = Venue(
    "flex",
    BatchProcessingMode.LIVE,
    0.5,
    provider_options={"openai": {"service_tier": "flex"}},
    pace=3.0,
)
"""Flex processing: the Batch API's prices, each call expected to take three times a standard one's."""
OPENAI_VENUES = (BATCH, FLEX, LIVE)
