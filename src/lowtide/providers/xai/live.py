"""`XaiProvider`: one call, one answer, through xAI's live Chat Completions with the `openai` SDK."""

from __future__ import annotations

from openai import AsyncOpenAI

from lowtide.providers.openai_compatible.live import ChatProvider
from lowtide.providers.xai.dialect import XAI
from lowtide.providers.xai.sdk import XAI_SDK

__all__ = ["XaiProvider"]


class XaiProvider(ChatProvider[AsyncOpenAI]):
    """xAI's live Chat Completions through the async `openai` client at xAI's base URL."""

    dialect = XAI
    sdk = XAI_SDK
