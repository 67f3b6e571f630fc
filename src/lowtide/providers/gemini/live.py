"""`GeminiProvider`: one call, one answer, through the Gemini API with the official google-genai SDK: in one
response (`client.aio.models.generate_content`) when it is short, streamed (`generate_content_stream`) when it may
be long, so that a long generation never idles out; the streamed chunks make the same answer. Before sending, the
model, `max_tokens`, size and input tokens are checked (`checks.py`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import ClassVar, Protocol, cast

from google.genai import types

from lowtide import ActorRequest, ActorResponse, APIConnectionError, BatchProcessingMode, Provider, ProviderOptions
from lowtide.providers import InputLimits, parse_response, response_of
from lowtide.providers.gemini.answers import answer_and_json, blocked_error
from lowtide.providers.gemini.checks import Checks
from lowtide.providers.gemini.client import OwnedClient, build_client
from lowtide.providers.gemini.errors import translate_errors
from lowtide.providers.gemini.options import GEN_AI_PROVIDER_NAME
from lowtide.providers.gemini.requests import Encoded, encode_request
from lowtide.providers.gemini.stream import StreamPieces, finished, merged
from lowtide.streaming import StreamEvent

__all__ = ["WHOLE_ANSWER_MAX_TOKENS", "GeminiProvider"]

WHOLE_ANSWER_MAX_TOKENS = 4096
"""The largest `max_tokens` answered in one response (as for Anthropic's live calls): a short answer is quick, and
decoding a stream's chunks costs more CPU than the answer; above it, the answer is streamed."""


class _Models(Protocol):
    """The SDK's `AsyncModels` as lowtide calls it (its own signatures name types of optional packages, PIL's
    images, that pyright cannot see)."""

    async def generate_content(
        self, *, model: str, contents: list[types.ContentDict], config: types.GenerateContentConfigDict
    ) -> types.GenerateContentResponse: ...

    async def generate_content_stream(
        self, *, model: str, contents: list[types.ContentDict], config: types.GenerateContentConfigDict
    ) -> AsyncIterator[types.GenerateContentResponse]: ...


class GeminiProvider(Provider):
    """The Gemini API's live `generateContent` (and its streamed form) through the SDK's async client."""

    name: ClassVar[str] = "gemini"
    gen_ai_provider_name: ClassVar[str | None] = GEN_AI_PROVIDER_NAME
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE
    api: ClassVar[str] = "Gemini API"
    """The API's name in error messages."""

    def __init__(self, options: ProviderOptions) -> None:
        self._owned = owned = self._build_client(options)
        self._checks = Checks(owned)
        self._client = owned.client
        self._http = owned.http
        self._scope = owned.scope

    def _build_client(self, options: ProviderOptions) -> OwnedClient:
        """The SDK client its calls go through (the Gemini API's; Vertex AI's provider builds its own)."""
        return build_client(options)

    def quota_scope(self) -> str:
        return self._scope

    async def preflight(self, request: ActorRequest) -> None:
        await self._checks.preflight(request)

    async def input_limits(self, request: ActorRequest) -> InputLimits:
        return await self._checks.input_limits(request)

    async def complete(self, request: ActorRequest) -> ActorResponse[object]:
        encoded = encode_request(request)
        with translate_errors(self.api):
            if request.max_tokens <= WHOLE_ANSWER_MAX_TOKENS:
                body, request_id = await self._answer_whole(encoded)
            else:
                body, request_id = await self._answer_streamed(encoded)
        return _response(request, body, request_id, self.name)

    async def stream(self, request: ActorRequest) -> AsyncIterator[StreamEvent]:
        """The answer through `generate_content_stream`: each chunk's text, thoughts and function calls as they come,
        then the answer the chunks make."""
        encoded = encode_request(request)
        chunks: list[dict[str, object]] = []
        pieces = StreamPieces()
        request_id: str | None = None
        with translate_errors(self.api):
            async for chunk, chunk_id in self._chunks(encoded):
                request_id = request_id or chunk_id
                chunks.append(chunk)
                for piece in pieces.add(chunk):
                    yield piece
            body = _finished(chunks, request_id, self.api)
        yield _response(request, body, request_id, self.name)

    async def _answer_whole(self, encoded: Encoded) -> tuple[dict[str, object], str | None]:
        models = cast("_Models", self._client.aio.models)
        answer = await models.generate_content(model=encoded.model, contents=encoded.contents, config=encoded.config)
        return _json(answer), _request_id(answer)

    async def _answer_streamed(self, encoded: Encoded) -> tuple[dict[str, object], str | None]:
        chunks: list[dict[str, object]] = []
        request_id: str | None = None
        async for chunk, chunk_id in self._chunks(encoded):
            request_id = request_id or chunk_id
            chunks.append(chunk)
        return _finished(chunks, request_id, self.api), request_id

    async def _chunks(self, encoded: Encoded) -> AsyncIterator[tuple[dict[str, object], str | None]]:
        """The stream's chunks as the API's JSON, each with the request id its headers gave."""
        models = cast("_Models", self._client.aio.models)
        stream = await models.generate_content_stream(
            model=encoded.model, contents=encoded.contents, config=encoded.config
        )
        async for chunk in stream:
            yield _json(chunk), _request_id(chunk)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()


def _finished(chunks: list[dict[str, object]], request_id: str | None, api: str) -> dict[str, object]:
    """The chunks of a stream as one body; `APIConnectionError` when they stopped before the answer finished."""
    body = merged(chunks)
    if not finished(body):
        # The connection closed between chunks, cleanly: the answer is cut short, as if it had broken.
        raise APIConnectionError(
            f"The {api}'s stream ended after {len(chunks)} chunk(s), before its answer was finished.",
            request_id=request_id,
        )
    return body


def _response(
    request: ActorRequest, body: dict[str, object], request_id: str | None, provider: str
) -> ActorResponse[object]:
    body.setdefault("modelVersion", request.model)
    error = blocked_error(body, request_id=request_id)
    if error is not None:
        raise error
    ids = {"batch_id": None, "custom_id": request.custom_id, "request_id": request_id}
    held, _ = answer_and_json(body, mode=BatchProcessingMode.LIVE, ids=ids, provider=provider)
    response = response_of(held)
    model = request.response_model
    return response if model is None else parse_response(response, model)


def _json(answer: types.GenerateContentResponse) -> dict[str, object]:
    body = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    body.pop("sdkHttpResponse", None)
    return body


def _request_id(answer: types.GenerateContentResponse) -> str | None:
    headers: Mapping[str, str] | None = answer.sdk_http_response.headers if answer.sdk_http_response else None
    return (headers or {}).get("x-request-id")
