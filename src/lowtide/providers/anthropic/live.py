"""`ClaudeProvider`: one call, one answer, through the live Messages API: in one response when it is short, streamed
when it may be long (so that a long answer never idles out, and the API does not refuse it unstreamed); `stream`
gives the answer's pieces as they arrive. `MessagesCalls` is those calls over any client of the anthropic SDK that
speaks the Messages API (`AsyncAnthropic`, or `AsyncAnthropicVertex` for Claude on Vertex AI:
`providers/vertex_claude`)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar, cast

import anthropic
from anthropic import AsyncAnthropic, AsyncAPIResponse
from anthropic.lib.streaming import ParsedMessageStreamEvent
from anthropic.lib.vertex import AsyncAnthropicVertex
from anthropic.types import Message

from lowtide.batching.backend import credential_of
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import APIConnectionError
from lowtide.live.reports import LimitListener, LimitWatchers
from lowtide.messages.limits import InputLimits, body_json, byte_size
from lowtide.provider import Provider, ProviderOptions
from lowtide.providers.anthropic.checks import ModelDirectory, directory_for, preflight
from lowtide.providers.anthropic.client import build_client
from lowtide.providers.anthropic.inputs import MAX_REQUEST_BYTES, check_request_input, input_limits
from lowtide.providers.anthropic.mapping import (
    ANTHROPIC,
    MessagesDialect,
    to_message_params,
    to_response,
    translate_errors,
)
from lowtide.providers.anthropic.options import GEN_AI_PROVIDER_NAME
from lowtide.providers.anthropic.ratelimits import quota_report
from lowtide.providers.sdk import split_for_sdk
from lowtide.streaming import StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorRequest, ActorResponse, ProviderIds

__all__ = ["ClaudeProvider", "MessagesCalls"]

WHOLE_ANSWER_MAX_TOKENS = 4096
"""The largest `max_tokens` answered in one response: a short answer is quick, and decoding a stream's events costs
more CPU than the answer itself; above it, the answer is streamed."""


ClientT = TypeVar("ClientT", AsyncAnthropic, AsyncAnthropicVertex)
"""A client of the anthropic SDK whose `messages` reach the Messages API."""


class MessagesCalls(Provider, Generic[ClientT]):
    """Live calls of the Messages API through one anthropic SDK client: `complete`, `stream`, the rate limits its
    answers report. A subclass builds the client (`_client`, `_owns_client`) and says what is checked before sending."""

    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE
    dialect: ClassVar[MessagesDialect] = ANTHROPIC
    """The provider named on the answers, and their prices."""
    _client: ClientT
    _owns_client: bool

    def __init__(self, client: ClientT, *, owns_client: bool) -> None:
        self._client, self._owns_client = client, owns_client
        self._watchers = LimitWatchers()

    def watch_limits(self, listener: LimitListener) -> None:
        self._watchers.add(listener)

    def _tell(self, headers: Mapping[str, str]) -> None:
        if self._watchers:
            self._watchers.tell(quota_report(headers))

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        params = to_message_params(request)
        with translate_errors(self.dialect):
            try:
                if request.max_tokens <= WHOLE_ANSWER_MAX_TOKENS:
                    message, request_id = await self._answer_whole(params)
                else:
                    message, request_id = await self._answer_streamed(params)
            except anthropic.APIStatusError as exc:
                self._tell(exc.response.headers)
                raise
        return to_response(
            message,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(request_id=request_id, custom_id=request.custom_id),
            response_model=request.response_model,
            dialect=self.dialect,
        )

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer through `messages.stream`: its text, tool-input and thinking deltas as they arrive, then the
        message."""
        params = to_message_params(request)
        named, extra_body = split_for_sdk(params, self._client.messages.stream)
        with translate_errors(self.dialect):
            try:
                async with self._client.messages.stream(**named, extra_body=extra_body or None) as stream:
                    async for event in stream:
                        piece = _piece(event)
                        if piece is not None:
                            yield piece
                    message = await stream.get_final_message()
                    self._tell(stream.response.headers)
                    request_id = stream.request_id
            except anthropic.APIStatusError as exc:
                self._tell(exc.response.headers)
                raise
        if message.stop_reason is None:  # the events stopped before message_delta said why the message ended
            raise APIConnectionError("The Messages stream ended before its message did (no stop reason came).")
        yield to_response(
            message,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(request_id=request_id, custom_id=request.custom_id),
            response_model=request.response_model,
            dialect=self.dialect,
        )

    async def _answer_whole(self, params: dict[str, Any]) -> tuple[Message, str | None]:
        named, extra_body = split_for_sdk(params, self._client.messages.create)
        # The SDK's overloads cannot be resolved from a dict of parameters: say what comes back.
        raw = cast(
            AsyncAPIResponse[Message],
            await self._client.messages.with_raw_response.create(**named, extra_body=extra_body or None),
        )
        self._tell(raw.headers)
        return await raw.parse(), raw.request_id

    async def _answer_streamed(self, params: dict[str, Any]) -> tuple[Message, str | None]:
        named, extra_body = split_for_sdk(params, self._client.messages.stream)
        async with self._client.messages.stream(**named, extra_body=extra_body or None) as stream:
            message = await stream.get_final_message()
            self._tell(stream.response.headers)
            return message, stream.request_id

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()


class ClaudeProvider(MessagesCalls[AsyncAnthropic]):
    """Anthropic's live Messages API through the async SDK client."""

    name: ClassVar[str] = "anthropic"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME

    def __init__(self, options: ProviderOptions) -> None:
        client, owns_client = build_client(options)
        super().__init__(client, owns_client=owns_client)

    @functools.cached_property
    def _models(self) -> ModelDirectory:
        return directory_for(self._client, owned=self._owns_client)

    async def preflight(self, request: ActorRequest) -> None:
        params = await preflight(self._client, self._models, request)
        body = body_json(params, ascii_json=False)
        limits = await self._limits(request, byte_size(body))
        await check_request_input(self._client, self._models, request, params, body, limits=limits)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._limits(request, byte_size(body_json(to_message_params(request), ascii_json=False)))

    async def _limits(self, request: ActorRequest, body_bytes: int) -> InputLimits:
        return await input_limits(
            self._client,
            self._models,
            request,
            body_bytes=body_bytes,
            max_bytes=MAX_REQUEST_BYTES,
            where="the Messages API",
        )

    def quota_scope(self) -> str:
        credential = credential_of(self._client.api_key or "", owned=self._owns_client, client=self._client)
        return f"anthropic:{self._client.base_url}:{credential}"


def _piece(event: ParsedMessageStreamEvent[Any]) -> TextDelta | ToolCallDelta | ThinkingDelta | None:
    """The piece of the answer a stream event carries, if it carries one: text, tool input, extended thinking and
    its signature (redacted thinking and citations wait for the message)."""
    if event.type == "content_block_start" and event.content_block.type == "tool_use":
        block = event.content_block
        return ToolCallDelta(event.index, id=block.id, name=block.name)
    if event.type == "content_block_delta":
        if event.delta.type == "text_delta":
            return TextDelta(event.delta.text, event.index)
        if event.delta.type == "input_json_delta" and event.delta.partial_json:
            return ToolCallDelta(event.index, event.delta.partial_json)
        if event.delta.type == "thinking_delta" and event.delta.thinking:
            return ThinkingDelta(event.delta.thinking, event.index)
        if event.delta.type == "signature_delta":
            return ThinkingDelta("", event.index, signature=event.delta.signature)
    return None
