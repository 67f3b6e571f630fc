"""`OpenAIProvider`: one call, one answer, through OpenAI's live Responses or Chat Completions API (the actor's
`provider_options.openai.endpoint` picks which), with the official SDK."""

from __future__ import annotations

from typing import Any, ClassVar

from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from lowtide.config import BatchProcessingMode
from lowtide.providers.base import Capability, Provider, ProviderOptions
from lowtide.providers.openai.client import build_client
from lowtide.providers.openai.codec import encode_request, to_response, translate_errors
from lowtide.providers.sdk import split_for_sdk
from lowtide.types import ActorRequest, ActorResponse, ProviderIds

__all__ = ["OpenAIProvider"]


class OpenAIProvider(Provider):
    """OpenAI's live APIs through the async SDK client."""

    name: ClassVar[str] = "openai"
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

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        encoded = encode_request(request)
        answer: Response | ChatCompletion
        with translate_errors():
            if encoded.endpoint == "responses":
                create = self._client.responses.create
                named, extra = split_for_sdk(encoded.body, create)
                answer = await create(**named, stream=False, extra_body=extra or None)
            else:
                complete = self._client.chat.completions.create
                named, extra = split_for_sdk(encoded.body, complete)
                answer = await complete(**named, stream=False, extra_body=extra or None)
        request_id = getattr(answer, "_request_id", None)
        return to_response(
            answer,
            mode=BatchProcessingMode.LIVE,
            ids=ProviderIds(
                request_id=request_id if isinstance(request_id, str) else None, custom_id=request.custom_id
            ),
            response_model=request.response_model,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()
