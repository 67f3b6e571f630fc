"""The built-in Anthropic providers and their plugin registration.

`register` is the entry point of the `lowtide.providers` group: the built-ins load exactly as a plugin would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.config import BatchProcessingMode
from lowtide.providers.anthropic.batch import ClaudeBatchProvider
from lowtide.providers.anthropic.live import ClaudeProvider

if TYPE_CHECKING:
    from lowtide.registry import ProviderRegistry

__all__ = ["ClaudeBatchProvider", "ClaudeProvider", "register"]


def register(registry: ProviderRegistry) -> None:
    registry.register("anthropic", BatchProcessingMode.LIVE, ClaudeProvider)
    registry.register("anthropic", BatchProcessingMode.BATCH, ClaudeBatchProvider)
