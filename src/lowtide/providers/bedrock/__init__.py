"""The built-in Amazon Bedrock providers (live: bedrock-runtime's Converse; batch: batch inference, records and
outputs in S3; both through boto3) and their plugin registration. The provider classes (and boto3, which the
`lowtide[bedrock]` extra installs) are imported when first used, so registering them needs no SDK."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from lowtide import BatchProcessingMode
from lowtide.providers import LazyProvider
from lowtide.providers.bedrock import rules

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.bedrock.batch import BedrockBatchProvider
    from lowtide.providers.bedrock.live import BedrockProvider
    from lowtide.providers.bedrock.options import BedrockOptions

__all__ = ["BedrockBatchProvider", "BedrockOptions", "BedrockProvider", "register"]

_CLASSES = {
    "BedrockProvider": "lowtide.providers.bedrock.live",
    "BedrockBatchProvider": "lowtide.providers.bedrock.batch",
    "BedrockOptions": "lowtide.providers.bedrock.options",
}


def register(registry: ProviderRegistry) -> None:
    registry.register_pricing("bedrock", rules.USAGE)
    registry.register("bedrock", BatchProcessingMode.LIVE, LazyProvider(_CLASSES["BedrockProvider"], "BedrockProvider"))
    registry.register(
        "bedrock", BatchProcessingMode.BATCH, LazyProvider(_CLASSES["BedrockBatchProvider"], "BedrockBatchProvider")
    )


def __getattr__(name: str) -> object:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
