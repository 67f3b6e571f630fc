"""The Gemini API's routes (Models, generateContent, streamGenerateContent, countTokens) under both API versions
the google-genai SDK calls (`v1beta`, and `v1`, its default), as rows of (path, method, route name, handler) that
the core serves as it serves every API's, under route names starting `gemini.`. `/v1/models` and
`/v1/models/{model_id}` are paths other APIs use too: the core sends there the calls `GeminiEmulation` claims."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.endpoints import waiter
from lowtide.emulator.core.http import Answer, Streamed, read_json, request_id
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.core.ratelimits import BucketState, QuotaStyle, RateLimits
from lowtide.emulator.gemini.catalogue import listed, model_info
from lowtide.emulator.gemini.http import gemini_key
from lowtide.emulator.gemini.model import generate, input_tokens, stream_chunks
from lowtide.emulator.gemini.model_calls import ModelCalls
from lowtide.emulator.gemini.request import read_call
from lowtide.emulator.gemini.wire import GenerateContentResponse
from lowtide.http.sse import compact, data_line

__all__ = ["QUOTAS", "VERSIONS", "gemini_routes"]

VERSIONS = ("v1beta", "v1")


def _buckets(limits: RateLimits) -> dict[str, int | None]:
    return {"requests": limits.rpm, "tokens": limits.tpm}


def _no_headers(bucket: BucketState) -> dict[str, str]:
    return {}


QUOTAS = QuotaStyle("gemini", _buckets, _no_headers)
"""Gemini's rate limits: requests and tokens per minute; its answers carry no rate-limit headers, and its 429 says
how long to wait in the error's `RetryInfo` detail."""


def gemini_routes(shared: Shared) -> list[RouteRow]:
    """Every route of the Gemini API, under each version."""
    api = _GeminiApi(shared)
    rows: list[RouteRow] = []
    for version in VERSIONS:
        model = f"/{version}/models/{{model_id}}"
        rows += [
            (f"/{version}/models", "GET", "gemini.models.list", api.list_models),
            (model, "GET", "gemini.models.get", api.get_model),
            (f"{model}:generateContent", "POST", "gemini.generate_content", api.generate_content),
            (f"{model}:streamGenerateContent", "POST", "gemini.stream_generate_content", api.stream_generate_content),
            (f"{model}:countTokens", "POST", "gemini.count_tokens", api.count_tokens),
        ]
    return rows


class _GeminiApi(ModelCalls):
    def _limit(self) -> int:
        return self._shared.settings.max_request_bytes or self.max_bytes

    async def list_models(self, request: Request) -> Answer:
        query = request.query_params
        size = query.get("pageSize")
        page = listed(
            self._shared.settings.extra_models, int(size) if size and size.isdigit() else None, query.get("pageToken")
        )
        return cast(JsonObject, page)

    async def get_model(self, request: Request) -> Answer:
        return cast(JsonObject, model_info(self._model(request)))

    async def _answer(self, request: Request) -> GenerateContentResponse:
        call = await self._call(request)
        shared = self._shared
        now = shared.clock.now()
        prompt = input_tokens(call)
        admitted = None
        if shared.settings.rate_limits.any:
            # Over the limits, a 429 in the core's terms, which the route's endpoint answers in Gemini's.
            admitted = shared.quotas.admit(
                QUOTAS, gemini_key(request), input_tokens=prompt, max_tokens=int(call.params["max_tokens"]), now=now
            )
        response = generate(call, request_id(request), cache=shared.cache, now=now)
        usage = response["usageMetadata"]
        output = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
        if admitted is not None:
            shared.quotas.settle(admitted, output_tokens=output, now=now)
        latency = shared.settings.latency
        if latency.fixed or latency.per_output_token:
            await waiter(shared.clock, request)(latency.of(output))
        return response

    async def stream_generate_content(self, request: Request) -> Answer:
        response = await self._answer(request)
        if request.query_params.get("alt") == "sse":
            return Streamed((data_line(chunk) for chunk in stream_chunks(response)), "text/event-stream")
        return Streamed(_json_array(stream_chunks(response)), "application/json")

    async def count_tokens(self, request: Request) -> Answer:
        model = self._model(request)
        body = as_object(await read_json(request, self._limit())) or {}
        inner = as_object(body.get("generateContentRequest"))
        if inner is not None:
            inner = {key: value for key, value in inner.items() if key != "model"}
        call = read_call(inner if inner is not None else body, model)
        tokens = input_tokens(call)
        return {"totalTokens": tokens, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens}]}


def _json_array(chunks: Iterator[GenerateContentResponse]) -> Iterator[bytes]:
    """Without `alt=sse`, the stream is one JSON array, its elements sent as they come."""
    yield b"["
    for number, chunk in enumerate(chunks):
        yield (b"," if number else b"") + compact(chunk).encode()
    yield b"]"
