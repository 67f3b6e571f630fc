"""The built-in Azure OpenAI providers (live: Chat Completions at a deployment; batch: global batch deployments) and
their plugin registration, through `openai`'s `AsyncAzureOpenAI`. Azure's wire shapes are OpenAI's: the request and
answer mapping, the batch codec and backend are OpenAI's (`lowtide.providers.openai`), with Azure's paths,
deployments, API versions, limits and prices.

`register` is the entry point of the `lowtide.providers` group. The provider classes (and the SDK with them) are
imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowtide.providers.azure_openai import rules
from lowtide.providers.registration import Registration

if TYPE_CHECKING:
    from lowtide.providers.azure_openai.batch import AzureOpenAIBatchProvider
    from lowtide.providers.azure_openai.live import AzureOpenAIProvider

__all__ = ["AzureOpenAIBatchProvider", "AzureOpenAIProvider", "register"]

_NAME = "azure_openai"
_REGISTRATION = Registration.built_in(_NAME, __name__, "AzureOpenAI", rules.USAGE, options=False)
register = _REGISTRATION.register
"""The package's entry point of the `lowtide.providers` group."""
__getattr__ = _REGISTRATION.lent
