"""The built-in OpenAI provider (live: the Responses and Chat Completions APIs) and its plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the Anthropic built-ins. OpenAI's batch mode
is not registered yet: an actor with `batch_processing: batch` gets `ProviderCapabilityError` (or, with
`fallback_to_live`, its live answer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.config import BatchProcessingMode
from lowtide.providers.openai.live import OpenAIProvider
from lowtide.providers.openai.options import OpenAIOptions

if TYPE_CHECKING:
    from lowtide.registry import ProviderRegistry

__all__ = ["OpenAIOptions", "OpenAIProvider", "register"]


def register(registry: ProviderRegistry) -> None:
    registry.register("openai", BatchProcessingMode.LIVE, OpenAIProvider)
