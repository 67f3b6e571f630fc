"""How a call reaches the model: live, or through a provider's batch API. A module of its own, so that the request
and response types need nothing of the configuration."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["BatchProcessingMode"]


class BatchProcessingMode(StrEnum):
    """How an actor's calls reach the model: the provider's live API or its batch API."""

    LIVE = "live"
    BATCH = "batch"
