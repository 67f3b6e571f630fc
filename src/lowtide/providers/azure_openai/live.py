"""`AzureOpenAIProvider`: one call, one answer, through Azure OpenAI's Chat Completions API at the actor's deployment
(`POST /openai/deployments/{deployment}/chat/completions?api-version=...`), with the official SDK's
`AsyncAzureOpenAI`, whole or streamed (`stream`). OpenAI's mapping of requests and answers; Azure's prices."""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Mapping
from contextlib import contextmanager
from typing import ClassVar

import openai
from openai.types.chat import ChatCompletion

from lowtide.batching.backend import credential_of
from lowtide.core.modes import BatchProcessingMode
from lowtide.live.reports import LimitListener, LimitWatchers
from lowtide.messages.limits import InputLimits, body_json, byte_size
from lowtide.provider import Provider, ProviderOptions
from lowtide.providers.azure_openai.checks import MAX_REQUEST_BYTES, check_request, limits_of
from lowtide.providers.azure_openai.client import build_client
from lowtide.providers.azure_openai.options import GEN_AI_PROVIDER_NAME, PROVIDER_NAME
from lowtide.providers.azure_openai.requests import encode_request
from lowtide.providers.azure_openai.rules import USAGE
from lowtide.providers.chat_stream import INCLUDE_USAGE
from lowtide.providers.openai.codec import to_response
from lowtide.providers.openai.errors import translate_errors
from lowtide.providers.openai.ratelimits import quota_report
from lowtide.providers.openai.stream_pieces import chat_pieces
from lowtide.providers.sdk import split_for_sdk
from lowtide.streaming import StreamEvent, TextDelta, ToolCallDelta
from lowtide.types import ActorRequest, ActorResponse, ProviderIds

__all__ = ["AzureOpenAIProvider"]

_WHERE = "Azure OpenAI"


class AzureOpenAIProvider(Provider):
    """Azure OpenAI's live Chat Completions through the async SDK client."""

    name: ClassVar[str] = PROVIDER_NAME
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._client, self._owns_client = build_client(options)
        self._clock = options.clock
        self._watchers = LimitWatchers()

    async def preflight(self, request: ActorRequest) -> None:
        await check_request(request, max_bytes=MAX_REQUEST_BYTES, where=_WHERE, ascii_json=False)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        body = body_json(encode_request(request).body, ascii_json=False)
        return limits_of(request, body_bytes=byte_size(body), max_bytes=MAX_REQUEST_BYTES, where=_WHERE)

    def quota_scope(self) -> str:
        credential = credential_of(self._client.api_key, owned=self._owns_client, client=self._client)
        return f"{PROVIDER_NAME}:{self._client.base_url}:{credential}"

    def watch_limits(self, listener: LimitListener) -> None:
        self._watchers.add(listener)

    def _tell(self, headers: Mapping[str, str]) -> None:
        if self._watchers:
            self._watchers.tell(quota_report(headers, now=self._clock.now()))

    @contextmanager
    def _calling(self) -> Generator[None]:
        """A call's SDK errors as lowtide's, the rate-limit headers of a refusal told to the quota first."""
        with translate_errors():
            try:
                yield
            except openai.APIStatusError as exc:
                self._tell(exc.response.headers)
                raise

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        body = encode_request(request).body
        named, extra = split_for_sdk(body, self._client.chat.completions.create)
        with self._calling():
            # The SDK sends a body naming `model` to `/deployments/{model}/chat/completions`.
            raw = await self._client.chat.completions.with_raw_response.create(
                **named, stream=False, extra_body=extra or None
            )
            self._tell(raw.headers)
            answer = raw.parse()
        return self._response(request, answer, raw.headers)

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer through the streamed Chat Completions: its chunks' pieces as they come, then the answer."""
        named, extra = split_for_sdk(
            {**encode_request(request).body, **INCLUDE_USAGE}, self._client.chat.completions.create
        )
        with self._calling():
            raw = await self._client.chat.completions.with_raw_response.create(
                **named, stream=True, extra_body=extra or None
            )
            self._tell(raw.headers)
            async for piece in chat_pieces(raw.parse()):
                whole = not isinstance(piece, TextDelta | ToolCallDelta)
                yield self._response(request, piece, raw.headers) if whole else piece

    def _response(
        self, request: ActorRequest, answer: ChatCompletion, headers: Mapping[str, str]
    ) -> ActorResponse[object]:
        request_id = (
            getattr(answer, "_request_id", None) or headers.get("apim-request-id") or headers.get("x-request-id")
        )
        return to_response(
            answer,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(
                request_id=request_id if isinstance(request_id, str) else None, custom_id=request.custom_id
            ),
            response_model=request.response_model,
            provider=PROVIDER_NAME,
            usage_shape=USAGE,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()
