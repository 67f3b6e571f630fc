"""What a Chat Completions API cannot carry, and what its caller is told to do instead.

OpenAI's remedy is its Responses endpoint. A provider that reuses OpenAI's Chat Completions encoder without offering
that endpoint (Azure OpenAI's deployments, Groq, Together) hands the encoder its own `ChatLimits`: its remedies, and
whether its API takes documents at all."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from lowtide.errors import ConfigurationError
from lowtide.messages.content import ContentRules
from lowtide.providers.openai.rules import CONTENT

__all__ = ["OPENAI_CHAT", "ChatLimit", "ChatLimits"]

ChatLimit = Literal["tool_result_media", "image_file_id", "document_url", "document", "reasoning_summary"]


@dataclass(frozen=True)
class ChatLimits:
    """One API's Chat Completions: who it is in an error (`api`), whether it takes documents (`file` parts), and
    the remedy it gives for each thing it cannot carry."""

    api: str
    remedies: Mapping[ChatLimit, str]
    documents: bool = True
    content: ContentRules = CONTENT
    """What it can carry of lowtide's content blocks, its name in a refusal (OpenAI's, by default)."""

    def refusal(self, limit: ChatLimit, problem: str, *, field: str, where: str | None = None) -> ConfigurationError:
        """`{api} {problem} ({where}); {remedy}.`, naming `field`."""
        located = f" ({where})" if where else ""
        return ConfigurationError(f"{self.api} {problem}{located}; {self.remedies[limit]}.", field=field)


OPENAI_CHAT = ChatLimits(
    api="Chat Completions",
    remedies={
        "tool_result_media": "use the Responses endpoint for images and files",
        "image_file_id": "use the Responses endpoint",
        "document_url": "use the Responses endpoint, or send the file inline",
        "document": "use the Responses endpoint",
        "reasoning_summary": "use the Responses endpoint for them",
    },
)
