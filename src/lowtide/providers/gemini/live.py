"""`GeminiProvider`: one call, one answer, through the Gemini API's `generateContent`, with the official google-genai
SDK (`client.aio.models.generate_content`)."""

from __future__ import annotations

from typing import ClassVar, Protocol, cast

from google.genai import types

from lowtide import ActorRequest, ActorResponse, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import parse_response, response_of
from lowtide.providers.gemini.answers import answer_and_json, blocked_error
from lowtide.providers.gemini.client import build_client
from lowtide.providers.gemini.errors import translate_errors
from lowtide.providers.gemini.requests import encode_request

__all__ = ["GeminiProvider"]


class _Models(Protocol):
    """The SDK's `AsyncModels.generate_content` as lowtide calls it (its own signature names types of optional
    packages, PIL's images, that pyright cannot see)."""

    async def generate_content(
        self, *, model: str, contents: list[types.ContentDict], config: types.GenerateContentConfigDict
    ) -> types.GenerateContentResponse: ...


class GeminiProvider(Provider):
    """The Gemini API's live `generateContent` through the SDK's async client."""

    name: ClassVar[str] = "gemini"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        owned = build_client(options)
        self._client = owned.client
        self._http = owned.http
        self._scope = owned.scope

    def quota_scope(self) -> str:
        return self._scope

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        encoded = encode_request(request)
        with translate_errors():
            models = cast("_Models", self._client.aio.models)
            answer = await models.generate_content(
                model=encoded.model, contents=encoded.contents, config=encoded.config
            )
        body = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        body.pop("sdkHttpResponse", None)
        body.setdefault("modelVersion", request.model)
        headers = answer.sdk_http_response.headers if answer.sdk_http_response is not None else None
        request_id = (headers or {}).get("x-request-id")
        error = blocked_error(body, request_id=request_id)
        if error is not None:
            raise error
        ids = {"batch_id": None, "custom_id": request.custom_id, "request_id": request_id}
        held, _ = answer_and_json(body, mode=BatchProcessingMode.LIVE, ids=ids)
        response = response_of(held)
        model = request.response_model
        return response if model is None else parse_response(response, model)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
