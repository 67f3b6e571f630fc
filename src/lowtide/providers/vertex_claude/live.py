"""`VertexClaudeProvider`: one call, one answer, from a Claude model on Vertex AI through the anthropic SDK's
`AsyncAnthropicVertex` (`rawPredict`, or `streamRawPredict` for a streamed answer, under the actor's project and
location). The calls, the request, the answer and the errors are the Anthropic provider's (`MessagesCalls`); the
client and the checks before sending are Vertex's."""

from __future__ import annotations

from typing import ClassVar

from anthropic.lib.vertex import AsyncAnthropicVertex

from lowtide import ActorRequest, ProviderOptions
from lowtide.messages.limits import body_json, byte_size
from lowtide.providers import InputLimits
from lowtide.providers.anthropic.live import MessagesCalls
from lowtide.providers.anthropic.mapping import MessagesDialect, to_message_params
from lowtide.providers.vertex_claude.checks import VertexClaudeChecks
from lowtide.providers.vertex_claude.client import build_client, scope_of
from lowtide.providers.vertex_claude.mapping import VERTEX_CLAUDE
from lowtide.providers.vertex_claude.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME

__all__ = ["VertexClaudeProvider"]


class VertexClaudeProvider(MessagesCalls[AsyncAnthropicVertex]):
    """Claude on Vertex AI, live: Anthropic's Messages calls through a client made for the actor's project and
    location."""

    name: ClassVar[str] = PROVIDER_NAME
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    dialect: ClassVar[MessagesDialect] = VERTEX_CLAUDE

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client, _ = build_client(options)
        super().__init__(client, owns_client=owns_client)
        self._checks = VertexClaudeChecks(client, where="Vertex AI's rawPredict")

    async def preflight(self, request: ActorRequest) -> None:
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return self._checks.limits_of(request, byte_size(body_json(to_message_params(request), ascii_json=False)))

    def quota_scope(self) -> str:
        return scope_of(self._client, owned=self._owns_client)
