"""`ClaudeProvider`: one call, one answer, through the live Messages API (streamed, so long answers never idle out)."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from lowtide.config import BatchProcessingMode
from lowtide.providers.anthropic.checks import ModelDirectory, directory_for, preflight
from lowtide.providers.anthropic.client import build_client
from lowtide.providers.anthropic.mapping import to_message_params, to_response, translate_errors
from lowtide.providers.base import Capability, Provider, ProviderOptions
from lowtide.providers.sdk import split_for_sdk
from lowtide.types import ActorRequest, ActorResponse, ProviderIds

__all__ = ["ClaudeProvider"]


class ClaudeProvider(Provider):
    """Anthropic's live Messages API through the async SDK client."""

    name: ClassVar[str] = "anthropic"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.LIVE,
            Capability.STRUCTURED_OUTPUT,
            Capability.TOOLS,
            Capability.THINKING,
            Capability.PROMPT_CACHING,
        }
    )

    def __init__(self, options: ProviderOptions) -> None:
        self._client, self._owns_client = build_client(options)

    @functools.cached_property
    def _models(self) -> ModelDirectory:
        return directory_for(self._client, owned=self._owns_client)

    async def preflight(self, request: ActorRequest) -> None:
        await preflight(self._client, self._models, request)

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        named, extra_body = split_for_sdk(to_message_params(request), self._client.messages.stream)
        with translate_errors():
            async with self._client.messages.stream(**named, extra_body=extra_body or None) as stream:
                message = await stream.get_final_message()
                request_id = stream.request_id
        return to_response(
            message,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(request_id=request_id, custom_id=request.custom_id),
            response_model=request.response_model,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()
