"""The built-in Amazon Bedrock providers (live: bedrock-runtime's Converse; batch: batch inference, records and
outputs in S3; both through boto3) and their plugin registration. The provider classes (and boto3, which the
`lowtide[bedrock]` extra installs) are imported when first used, so registering them needs no SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.bedrock import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.bedrock.batch import BedrockBatchProvider
    from lowtide.providers.bedrock.live import BedrockProvider
    from lowtide.providers.bedrock.options import BedrockOptions

__all__ = ["BedrockBatchProvider", "BedrockOptions", "BedrockProvider", "register"]

_REGISTRATION = Registration.built_in("bedrock", __name__, "Bedrock", rules.USAGE)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
