"""`TogetherProvider`: one call, one answer, through Together AI's live Chat Completions, with the official together
SDK."""

from __future__ import annotations

from typing import ClassVar

from lowtide import ActorRequest, ActorResponse, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import InputLimits, credential_of, split_for_sdk
from lowtide.providers.openai_compatible.chat import chat_response
from lowtide.providers.together.checks import check_model, input_limits, preflight
from lowtide.providers.together.client import build_client
from lowtide.providers.together.errors import translate_errors
from lowtide.providers.together.requests import TOGETHER, encode_request
from lowtide.structured import parse_response

__all__ = ["TogetherProvider"]


class TogetherProvider(Provider):
    """Together's live Chat Completions through the async SDK client."""

    name: ClassVar[str] = "together"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self._client, self._owns_client = build_client(options)

    async def preflight(self, request: ActorRequest) -> None:
        preflight(request)
        await check_model(self._client, owned=self._owns_client, request=request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return input_limits(request)

    def quota_scope(self) -> str:
        credential = credential_of(self._client.api_key, owned=self._owns_client, client=self._client)
        return f"together:{self._client.base_url}:{credential}"

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        body = encode_request(request)
        named, extra = split_for_sdk(body, self._client.chat.completions.create)
        with translate_errors():
            raw = await self._client.chat.completions.with_raw_response.create(
                **named, stream=False, extra_body=extra or None
            )
            answer = await raw.parse()
        request_id = raw.headers.get("x-request-id")
        response = chat_response(
            answer.to_dict(mode="json"),
            dialect=TOGETHER,
            mode=BatchProcessingMode.LIVE,
            ids={"batch_id": None, "custom_id": request.custom_id, "request_id": request_id},
        )
        return response if request.response_model is None else parse_response(response, request.response_model)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()
