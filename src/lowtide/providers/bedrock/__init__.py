"""The built-in Amazon Bedrock providers (live: bedrock-runtime's Converse; batch: batch inference, records and
outputs in S3; both through boto3) and their plugin registration. The provider classes (and boto3, which the
`lowtide[bedrock]` extra installs) are imported when first used, so registering them needs no SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers import LazyCheck
from lowtide.providers.bedrock import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide import ProviderRegistry
    from lowtide.providers.bedrock.batch import BedrockBatchProvider
    from lowtide.providers.bedrock.live import BedrockProvider
    from lowtide.providers.bedrock.options import BedrockOptions

__all__ = ["BedrockBatchProvider", "BedrockOptions", "BedrockProvider", "register"]

_REGISTRATION = Registration(
    "bedrock",
    __name__,
    live="BedrockProvider",
    batch="BedrockBatchProvider",
    usage=rules.USAGE,
    parameters=LazyCheck(f"{__name__}.parameters", "check_parameters"),
    lends={"BedrockOptions": "options"},
)


def register(registry: ProviderRegistry) -> None:
    _REGISTRATION.register(registry)


def __getattr__(name: str) -> object:
    return _REGISTRATION.lent(name)
