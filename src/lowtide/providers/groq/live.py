"""`GroqProvider`: one call, one answer, through Groq's live Chat Completions API with the official groq SDK."""

from __future__ import annotations

from groq import AsyncGroq

from lowtide.providers.groq.dialect import GROQ
from lowtide.providers.groq.sdk import GROQ_SDK
from lowtide.providers.openai_compatible.live import ChatProvider

__all__ = ["GroqProvider"]


class GroqProvider(ChatProvider[AsyncGroq]):
    """Groq's live Chat Completions through the async SDK client."""

    dialect = GROQ
    sdk = GROQ_SDK
