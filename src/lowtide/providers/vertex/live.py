"""`VertexProvider`: one call, one answer, from a Gemini model on Vertex AI through the official google-genai SDK
(`vertexai=True`): Gemini's `generateContent` (streamed above 4,096 `max_tokens`) under the actor's project and
location. The request, the answer, the checks and the errors are the Gemini provider's; the client is Vertex's."""

from __future__ import annotations

from typing import ClassVar

from lowtide import ProviderOptions
from lowtide.providers.gemini.client import OwnedClient
from lowtide.providers.gemini.live import GeminiProvider
from lowtide.providers.vertex.client import build_client
from lowtide.providers.vertex.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME

__all__ = ["VertexProvider"]


class VertexProvider(GeminiProvider):
    """Gemini on Vertex AI, live: Gemini's calls through a client made for the actor's project and location."""

    name: ClassVar[str] = PROVIDER_NAME
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    api: ClassVar[str] = "Vertex AI API"

    def _build_client(self, options: ProviderOptions) -> OwnedClient:
        return build_client(options)[0]
