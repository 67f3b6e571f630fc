"""`OpenRouterProvider`: one call, one answer, through OpenRouter's live Chat Completions with the `openai` SDK."""

from __future__ import annotations

import dataclasses

from openai import AsyncOpenAI

from lowtide.providers.openai.errors import SDK_ERRORS
from lowtide.providers.openai_compatible.live import ChatProvider
from lowtide.providers.openai_compatible.sdk import Sdk
from lowtide.providers.openrouter.dialect import OPENROUTER

__all__ = ["OPENROUTER_SDK", "OpenRouterProvider"]


async def _listing(client: AsyncOpenAI) -> list[str]:
    return [model.id async for model in client.models.list()]


OPENROUTER_SDK = Sdk(
    client=AsyncOpenAI,
    errors=dataclasses.replace(SDK_ERRORS, client="OpenRouter", api="OpenRouter API"),
    listing=_listing,
)
"""The `openai` SDK at OpenRouter's base URL. OpenRouter answers no question for one model: `GET /api/v1/models` is
read once per endpoint and key in a process, a name it does not list refused with the closest names it does."""


class OpenRouterProvider(ChatProvider[AsyncOpenAI]):
    """OpenRouter's live Chat Completions through the async `openai` client at its base URL."""

    dialect = OPENROUTER
    sdk = OPENROUTER_SDK
