"""The built-in Azure OpenAI providers (live: Chat Completions at a deployment; batch: global batch deployments) and
their plugin registration, through `openai`'s `AsyncAzureOpenAI`. Azure's wire shapes are OpenAI's: the request and
answer mapping, the batch codec and backend are OpenAI's (`lowtide.providers.openai`), with Azure's paths,
deployments, API versions, limits and prices.

`register` is the entry point of the `lowtide.providers` group. The provider classes (and the SDK with them) are
imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide.core.modes import BatchProcessingMode
from lowtide.core.parameters import LazyCheck
from lowtide.providers.azure_openai import rules
from lowtide.providers.lazy import LazyProvider

if TYPE_CHECKING:
    from lowtide.providers.azure_openai.batch import AzureOpenAIBatchProvider
    from lowtide.providers.azure_openai.live import AzureOpenAIProvider
    from lowtide.registry import ProviderRegistry

__all__ = ["AzureOpenAIBatchProvider", "AzureOpenAIProvider", "register"]

_NAME = "azure_openai"
_CLASSES = {
    "AzureOpenAIProvider": "lowtide.providers.azure_openai.live",
    "AzureOpenAIBatchProvider": "lowtide.providers.azure_openai.batch",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters(_NAME, LazyCheck("lowtide.providers.azure_openai.parameters", "check_parameters"))
    registry.register_pricing(_NAME, rules.USAGE)
    registry.register(
        _NAME, BatchProcessingMode.LIVE, LazyProvider(_CLASSES["AzureOpenAIProvider"], "AzureOpenAIProvider")
    )
    registry.register(
        _NAME,
        BatchProcessingMode.BATCH,
        LazyProvider(_CLASSES["AzureOpenAIBatchProvider"], "AzureOpenAIBatchProvider"),
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
