"""How a call reaches the model: live, or through a provider's batch API. A module of its own, so that the request
and response types need nothing of the configuration."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["MODE_TEXT", "BatchProcessingMode"]


class BatchProcessingMode(StrEnum):
    """How an actor's calls reach the model: the provider's live API or its batch API."""

    LIVE = "live"
    BATCH = "batch"


MODE_TEXT: dict[BatchProcessingMode, str] = {mode: mode.value for mode in BatchProcessingMode}
"""Each mode's text, read once an answer as its stored form is made (an enum's `value` is a property)."""
