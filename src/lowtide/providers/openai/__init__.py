"""The built-in OpenAI providers (live: the Responses and Chat Completions APIs; batch: the Batch API over either)
and their plugin registration.

`register` is the entry point of the `lowtide.providers` group, as for the Anthropic built-ins. The provider classes
(and the OpenAI SDK with them) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.core.parameters import LazyCheck
from lowtide.providers.openai import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.openai.batch import OpenAIBatchProvider
    from lowtide.providers.openai.live import OpenAIProvider
    from lowtide.providers.openai.options import OpenAIOptions
    from lowtide.registry import ProviderRegistry

__all__ = ["OpenAIBatchProvider", "OpenAIOptions", "OpenAIProvider", "register"]

_REGISTRATION = Registration(
    "openai",
    __name__,
    live="OpenAIProvider",
    batch="OpenAIBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    lends={"OpenAIOptions": "options"},
)


def register(registry: ProviderRegistry) -> None:
    _REGISTRATION.register(registry)


def __getattr__(name: str) -> object:
    return _REGISTRATION.lent(name)
