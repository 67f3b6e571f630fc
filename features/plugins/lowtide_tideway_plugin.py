"""A third-party OpenAI-compatible provider, as a plugin package would ship it: "tideway" speaks OpenAI's Chat
Completions and has no SDK of its own, so it is reached through the official openai SDK at its own base URL (in the
scenarios, the emulator's OpenAI API stands in for it). Its live provider is the base's `ChatProvider` naming its
`Dialect` and `Sdk`, as docs/providers.md's recipe "Adding a provider" builds one.

Its entry point is `lowtide_tideway_plugin:register`: live mode only (a batch mode adds a backend of its own).
"""

from __future__ import annotations

import openai
from pydantic import BaseModel, ConfigDict

from lowtide import BatchProcessingMode, ProviderRegistry
from lowtide.providers import LazyProvider
from lowtide.providers.openai_compatible.dialect import Dialect
from lowtide.providers.openai_compatible.live import ChatProvider
from lowtide.providers.openai_compatible.sdk import Sdk
from lowtide.providers.openai_compatible.stainless import stainless_errors
from lowtide.providers.openai_compatible.usage import chat_usage_shape


class TidewayOptions(BaseModel):
    """Tideway has no settings of its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)


TIDEWAY = Dialect(
    name="tideway",
    owner="Tideway",
    # Priced as OpenAI's models, read by genai-prices' OpenAI extractor (its Chat Completions flavour).
    usage=chat_usage_shape("openai", "Tideway", flavor=lambda _: "chat", extracted_as="openai"),
    options=TidewayOptions,
    api_key_env="TIDEWAY_API_KEY",
    base_url_env="TIDEWAY_BASE_URL",
)


async def _listing(client: openai.AsyncOpenAI) -> list[str]:
    return [model.id async for model in client.models.list()]


async def _lookup(client: openai.AsyncOpenAI, name: str) -> object:
    return await client.models.retrieve(name)


TIDEWAY_SDK = Sdk(
    client=openai.AsyncOpenAI,
    errors=stainless_errors(
        client="Tideway",
        api="Tideway API",
        status=openai.APIStatusError,
        connection=openai.APIConnectionError,
        base=openai.OpenAIError,
        timeout=openai.APITimeoutError,
    ),
    listing=_listing,
    lookup=_lookup,
)


class TidewayProvider(ChatProvider[openai.AsyncOpenAI]):
    """Tideway's live Chat Completions through the async openai client."""

    name = TIDEWAY.name
    dialect = TIDEWAY
    sdk = TIDEWAY_SDK


def register(registry: ProviderRegistry) -> None:
    registry.register_parameters(TIDEWAY.name, TIDEWAY.check_parameters)
    registry.register_pricing(TIDEWAY.name, TIDEWAY.usage)
    registry.register(TIDEWAY.name, BatchProcessingMode.LIVE, LazyProvider(__name__, "TidewayProvider"))
