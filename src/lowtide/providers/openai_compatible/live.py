"""`ChatProvider`: one call, one answer, through an OpenAI-compatible API's live Chat Completions with its official
SDK (`stream`: streamed); a dialect's live provider is this class naming its `Dialect` and `Sdk`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import ClassVar, cast

from pydantic import BaseModel

from lowtide import ActorRequest, ActorResponse, BatchProcessingMode, ProviderOptions
from lowtide.errors import APIConnectionError
from lowtide.messages.structured import parse_response
from lowtide.providers import InputLimits, credential_of, split_for_sdk
from lowtide.providers.chat_stream import INCLUDE_USAGE, ChatChunks
from lowtide.providers.openai_compatible.chat import chat_response, encode_request
from lowtide.providers.openai_compatible.checks import input_limits, preflight
from lowtide.providers.openai_compatible.provider_base import DialectProvider
from lowtide.providers.openai_compatible.sdk import C, build_client, check_model
from lowtide.streaming import StreamEvent

__all__ = ["ChatProvider"]


class ChatProvider(DialectProvider[C]):
    """A live Chat Completions API through its async SDK client."""

    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._client, self._owns_client = build_client(options, self.dialect, self.sdk)

    async def preflight(self, request: ActorRequest) -> None:
        preflight(request, self.dialect)
        await check_model(self._client, self.sdk, self.dialect, owned=self._owns_client, request=request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return input_limits(request, self.dialect)

    def quota_scope(self) -> str:
        credential = credential_of(self._client.api_key, owned=self._owns_client, client=self._client)
        return f"{self.name}:{self._client.base_url}:{credential}"

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        body = encode_request(request, self.dialect)
        completions = self._client.chat.completions
        named, extra = split_for_sdk(body, completions.create)
        with self.sdk.translate():
            raw = await completions.with_raw_response.create(**named, stream=False, extra_body=extra or None)
            parsed = raw.parse()
            answer = await parsed if isinstance(parsed, Awaitable) else parsed
        request_id = raw.headers.get("x-request-id")
        response = chat_response(
            answer.to_dict(mode="json"),
            dialect=self.dialect,
            mode=BatchProcessingMode.LIVE,
            ids={"batch_id": None, "custom_id": request.custom_id, "request_id": request_id},
        )
        return response if request.response_model is None else parse_response(response, request.response_model)

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer through the streamed Chat Completions: its chunks' pieces as they come, then the answer they
        make, read as an unstreamed one is."""
        body = {**encode_request(request, self.dialect), **INCLUDE_USAGE}
        completions = self._client.chat.completions
        named, extra = split_for_sdk(body, completions.create)
        joined = ChatChunks()
        with self.sdk.translate():
            raw = await completions.with_raw_response.create(**named, stream=True, extra_body=extra or None)
            parsed = raw.parse()
            chunks = await parsed if isinstance(parsed, Awaitable) else parsed
            async for chunk in cast(AsyncIterator[BaseModel], chunks):
                for piece in joined.add(chunk.model_dump(mode="json")):
                    yield piece
        whole = joined.body()
        if whole is None:
            raise APIConnectionError(f"The {self.name} stream ended before its answer did (no finish_reason came).")
        response = chat_response(
            whole,
            dialect=self.dialect,
            mode=BatchProcessingMode.LIVE,
            ids={"batch_id": None, "custom_id": request.custom_id, "request_id": raw.headers.get("x-request-id")},
        )
        yield response if request.response_model is None else parse_response(response, request.response_model)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()
