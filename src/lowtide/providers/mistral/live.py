"""`MistralProvider`: one call, one answer, through Mistral's chat completions with the official mistralai SDK: in
one response (`chat.complete_async`) when it is short, streamed (`chat.stream_async`) when it may be long, so that a
long generation never idles out; the streamed chunks make the same answer. Before sending, the model and size are
checked (`checks.py`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

from lowtide import (
    ActorRequest,
    ActorResponse,
    APIConnectionError,
    BatchProcessingMode,
    ConfigurationError,
    Provider,
    ProviderOptions,
)
from lowtide.providers import InputLimits, JSONObject, parse_response, response_of, split_for_sdk
from lowtide.providers.chat_stream import ChatChunks
from lowtide.providers.mistral.answers import answer_and_json, finish_error
from lowtide.providers.mistral.checks import Checks
from lowtide.providers.mistral.client import build_client
from lowtide.providers.mistral.errors import translate_errors
from lowtide.providers.mistral.options import GEN_AI_PROVIDER_NAME
from lowtide.providers.mistral.requests import encode_request
from lowtide.providers.mistral.stream import finished, merged
from lowtide.streaming import StreamEvent

__all__ = ["WHOLE_ANSWER_MAX_TOKENS", "MistralProvider"]

WHOLE_ANSWER_MAX_TOKENS = 4096
"""The largest `max_tokens` answered in one response (as for the other providers' live calls); above it, the answer
is streamed."""


class MistralProvider(Provider):
    """Mistral's live chat completions through the SDK's async client."""

    name: ClassVar[str] = "mistral"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        owned = build_client(options)
        self._client = owned.client
        self._http = owned.http
        self._scope = owned.scope
        self._checks = Checks(owned.client, scope=owned.scope, endpoint=owned.endpoint)

    def quota_scope(self) -> str:
        return self._scope

    async def preflight(self, request: ActorRequest) -> None:
        """What the SDK cannot send is refused first, then the checks of `checks.py` (the model looked up)."""
        self._sdk_arguments(encode_request(request))
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        named = self._sdk_arguments(encode_request(request))
        with translate_errors():
            if request.max_tokens <= WHOLE_ANSWER_MAX_TOKENS:
                answer = await self._client.chat.complete_async(**named)
                raw = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
            else:
                raw = await self._streamed(named)
        return _response(request, raw)

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer through `chat.stream_async`: each chunk's text and tool-call pieces as they come, then the
        answer the chunks make."""
        named = self._sdk_arguments(encode_request(request))
        chunks: list[JSONObject] = []
        pieces = ChatChunks()
        with translate_errors():
            async for chunk in self._chunks(named):
                chunks.append(chunk)
                for piece in pieces.add(chunk):
                    yield piece
        yield _response(request, _finished(chunks))

    def _sdk_arguments(self, body: dict[str, object]) -> dict[str, Any]:
        """The body as the SDK's `chat.complete_async` arguments; a field it has no argument for is refused."""
        named, extra = split_for_sdk(body, self._client.chat.complete_async)
        if extra:
            raise ConfigurationError(
                f"extra_params: the mistralai SDK cannot send {', '.join(sorted(extra))} in a live call.",
                field="extra_params",
            )
        return named

    async def _streamed(self, named: dict[str, object]) -> dict[str, object]:
        return _finished([chunk async for chunk in self._chunks(named)])

    async def _chunks(self, named: dict[str, object]) -> AsyncIterator[JSONObject]:
        """The stream's chunks, each as the API's JSON."""
        stream = await self._client.chat.stream_async(**named)  # pyright: ignore[reportArgumentType]
        async with stream as events:
            async for event in events:
                yield event.data.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()


def _finished(chunks: list[JSONObject]) -> dict[str, object]:
    """The chunks of a stream as one body; `APIConnectionError` when they stopped before the answer finished."""
    body = merged(chunks)
    if not finished(body):
        # The connection closed between chunks, cleanly: the answer is cut short, as if it had broken.
        raise APIConnectionError(
            f"Mistral's stream ended after {len(chunks)} chunk(s), before its answer was finished."
        )
    return body


def _response(request: ActorRequest, raw: dict[str, object]) -> ActorResponse[object]:
    error = finish_error(raw, request_id=None)
    if error is not None:
        raise error
    ids = {"batch_id": None, "custom_id": request.custom_id, "request_id": None}
    held, _ = answer_and_json(raw, mode=BatchProcessingMode.LIVE, ids=ids)
    response = response_of(held)
    model = request.response_model
    return response if model is None else parse_response(response, model)
