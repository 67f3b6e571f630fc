"""`ClaudeProvider`: one call, one answer, through the live Messages API (streamed, so long answers never idle out)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import anthropic

from lowtide.batching.backend import credential_of
from lowtide.config import BatchProcessingMode
from lowtide.live.reports import LimitListener, LimitWatchers
from lowtide.providers.anthropic.checks import ModelDirectory, directory_for, preflight
from lowtide.providers.anthropic.client import build_client
from lowtide.providers.anthropic.mapping import to_message_params, to_response, translate_errors
from lowtide.providers.anthropic.ratelimits import quota_report
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
        self._watchers = LimitWatchers()

    @functools.cached_property
    def _models(self) -> ModelDirectory:
        return directory_for(self._client, owned=self._owns_client)

    async def preflight(self, request: ActorRequest) -> None:
        await preflight(self._client, self._models, request)

    def quota_scope(self) -> str:
        credential = credential_of(self._client.api_key or "", owned=self._owns_client, client=self._client)
        return f"anthropic:{self._client.base_url}:{credential}"

    def watch_limits(self, listener: LimitListener) -> None:
        self._watchers.add(listener)

    def _tell(self, headers: Mapping[str, str]) -> None:
        if self._watchers:
            self._watchers.tell(quota_report(headers))

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        named, extra_body = split_for_sdk(to_message_params(request), self._client.messages.stream)
        with translate_errors():
            try:
                async with self._client.messages.stream(**named, extra_body=extra_body or None) as stream:
                    message = await stream.get_final_message()
                    request_id = stream.request_id
                    self._tell(stream.response.headers)
            except anthropic.APIStatusError as exc:
                self._tell(exc.response.headers)
                raise
        return to_response(
            message,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(request_id=request_id, custom_id=request.custom_id),
            response_model=request.response_model,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()
