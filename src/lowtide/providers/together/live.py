"""`TogetherProvider`: one call, one answer, through Together AI's live Chat Completions, with its official SDK."""

from __future__ import annotations

from together import AsyncTogether

from lowtide.providers.openai_compatible.live import ChatProvider
from lowtide.providers.together.dialect import TOGETHER
from lowtide.providers.together.sdk import TOGETHER_SDK

__all__ = ["TogetherProvider"]


class TogetherProvider(ChatProvider[AsyncTogether]):
    """Together's live Chat Completions through the async SDK client."""

    dialect = TOGETHER
    sdk = TOGETHER_SDK
