"""`OpenAIProvider`: one call, one answer, through OpenAI's live Responses or Chat Completions API (the actor's
`provider_options.openai.endpoint` picks which), with the official SDK; `stream` reads the endpoint's stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import ClassVar

import openai
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from lowtide.batching.backend import credential_of
from lowtide.core.modes import BatchProcessingMode
from lowtide.live.reports import LimitListener, LimitWatchers
from lowtide.messages.limits import InputLimits
from lowtide.messages.structured import parse_response
from lowtide.provider import Provider, ProviderOptions
from lowtide.providers.chat_stream import INCLUDE_USAGE
from lowtide.providers.openai.checks import MAX_REQUEST_BYTES, Checks
from lowtide.providers.openai.client import build_client
from lowtide.providers.openai.codec import Encoded, encode_request, to_response
from lowtide.providers.openai.errors import translate_errors
from lowtide.providers.openai.options import GEN_AI_PROVIDER_NAME
from lowtide.providers.openai.ratelimits import quota_report
from lowtide.providers.openai.stream_pieces import chat_pieces, response_pieces
from lowtide.providers.openai.venues import OPENAI_VENUES
from lowtide.providers.sdk import split_for_sdk
from lowtide.providers.stop_sequences import StopCutter, cut_at_stop
from lowtide.routing.venues import Venue
from lowtide.streaming import StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorRequest, ActorResponse, ProviderIds

__all__ = ["OpenAIProvider"]


class OpenAIProvider(Provider):
    """OpenAI's live APIs through the async SDK client."""

    name: ClassVar[str] = "openai"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._client, self._owns_client = build_client(options)
        self._clock = options.clock
        self._watchers = LimitWatchers()
        self._checks = Checks(
            self._client,
            owned=self._owns_client,
            checking=self._client,
            ascii_json=False,
            max_bytes=MAX_REQUEST_BYTES,
            where="OpenAI",
        )

    async def preflight(self, request: ActorRequest) -> None:
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    def quota_scope(self) -> str:
        credential = credential_of(self._client.api_key, owned=self._owns_client, client=self._client)
        return f"openai:{self._client.base_url}:{credential}"

    def venues(self) -> Sequence[Venue]:
        return OPENAI_VENUES

    def watch_limits(self, listener: LimitListener) -> None:
        self._watchers.add(listener)

    def _tell(self, headers: Mapping[str, str]) -> None:
        if self._watchers:
            self._watchers.tell(quota_report(headers, now=self._clock.now()))

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        encoded = encode_request(request)
        answer: Response | ChatCompletion
        with translate_errors():
            try:
                if encoded.endpoint == "responses":
                    named, extra = split_for_sdk(encoded.body, self._client.responses.create)
                    raw = await self._client.responses.with_raw_response.create(
                        **named, stream=False, extra_body=extra or None
                    )
                else:
                    named, extra = split_for_sdk(encoded.body, self._client.chat.completions.create)
                    raw = await self._client.chat.completions.with_raw_response.create(
                        **named, stream=False, extra_body=extra or None
                    )
            except openai.APIStatusError as exc:
                self._tell(exc.response.headers)
                raise
            self._tell(raw.headers)
            answer = raw.parse()
        return self._response(request, answer, raw.headers.get("x-request-id"), stops=_own_stops(request, encoded))

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer as the endpoint streams it: its text and function-call argument deltas, then the response."""
        encoded = encode_request(request)
        stops = _own_stops(request, encoded)
        cutter = StopCutter(stops)
        with translate_errors():
            try:
                if encoded.endpoint == "responses":
                    named, extra = split_for_sdk(encoded.body, self._client.responses.create)
                    raw = await self._client.responses.with_raw_response.create(
                        **named, stream=True, extra_body=extra or None
                    )
                    events = raw.parse()
                    pieces = response_pieces(events)
                else:
                    body = {**encoded.body, **INCLUDE_USAGE}
                    named, extra = split_for_sdk(body, self._client.chat.completions.create)
                    raw = await self._client.chat.completions.with_raw_response.create(
                        **named, stream=True, extra_body=extra or None
                    )
                    events = raw.parse()
                    pieces = chat_pieces(events)
            except openai.APIStatusError as exc:
                self._tell(exc.response.headers)
                raise
            self._tell(raw.headers)
            # Closed here, on this loop, however the stream ends: the Responses pieces stop at `response.completed`
            # with the SDK's stream still open, and a consumer may stop early; left to the garbage collector, their
            # generators' closing was scheduled on a loop that might never run it again ("Task was destroyed but it
            # is pending", or "Event loop is closed" once it had ended).
            async with events, aclosing(pieces):
                async for piece in pieces:
                    if isinstance(piece, TextDelta | ToolCallDelta | ThinkingDelta):
                        for handed in cutter.pieces(piece):
                            yield handed
                    else:
                        for handed in cutter.flush():
                            yield handed
                        yield self._response(request, piece, raw.headers.get("x-request-id"), stops=stops)

    def _response(
        self,
        request: ActorRequest,
        answer: Response | ChatCompletion,
        header_id: str | None,
        *,
        stops: tuple[str, ...],
    ) -> ActorResponse[object]:
        """The answer as an `ActorResponse`, cut at the first of `stops` (those lowtide applies itself) before it
        is parsed into the request's response model."""
        request_id = getattr(answer, "_request_id", None) or header_id
        response = to_response(
            answer,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(
                request_id=request_id if isinstance(request_id, str) else None, custom_id=request.custom_id
            ),
            response_model=None if stops else request.response_model,
        )
        if not stops:
            return response
        response = cut_at_stop(response, stops)
        return response if request.response_model is None else parse_response(response, request.response_model)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()


def _own_stops(request: ActorRequest, encoded: Encoded) -> tuple[str, ...]:
    """The stop sequences lowtide applies itself: the request's, on the Responses API (which has none; Chat
    Completions is sent them as `stop`)."""
    return tuple(request.stop_sequences) if encoded.endpoint == "responses" else ()
