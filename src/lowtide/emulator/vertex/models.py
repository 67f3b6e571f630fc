"""Vertex AI's Gemini routes: `generateContent`, `streamGenerateContent` and `countTokens` under a project and a
location, and the publisher's models, under both versions google-genai calls on Vertex (`v1beta1`, its default, and
`v1`). Vertex serves Gemini's models with Gemini's bodies: the answers are the Gemini emulation's own, read and
written by its functions, its calls read and answered by Gemini's `ModelCalls` (Vertex is another door to the same
model, as a compatible API is a dialect of OpenAI's)."""

from __future__ import annotations

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.http import Answer, Streamed, read_json
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.gemini.catalogue import MODELS, GeminiModel
from lowtide.emulator.gemini.model import input_tokens, stream_chunks
from lowtide.emulator.gemini.model_calls import ModelCalls
from lowtide.emulator.gemini.request import read_call
from lowtide.http.sse import data_line

__all__ = ["VERSIONS", "bearer", "publisher_model", "vertex_model_routes"]

VERSIONS = ("v1beta1", "v1")
_PLACE = "projects/{project}/locations/{location}"


def vertex_model_routes(shared: Shared) -> list[RouteRow]:
    """Every Gemini model route of Vertex AI, under each version."""
    api = _Models(shared)
    rows: list[RouteRow] = []
    for version in VERSIONS:
        model = f"/{version}/{_PLACE}/publishers/google/models/{{model_id}}"
        rows += [
            (f"{model}:generateContent", "POST", "vertex.generate_content", api.generate_content),
            (f"{model}:streamGenerateContent", "POST", "vertex.stream_generate_content", api.stream_generate_content),
            (f"{model}:countTokens", "POST", "vertex.count_tokens", api.count_tokens),
            (f"/{version}/publishers/google/models/{{model_id}}", "GET", "vertex.models.get", api.get_model),
            (f"/{version}/publishers/google/models", "GET", "vertex.models.list", api.list_models),
        ]
    return rows


def bearer(request: Request) -> str:
    """The caller's OAuth token (any, against the emulator), or ''."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def publisher_model(model: GeminiModel) -> JsonObject:
    """A Gemini model as Vertex's publisher model shows it (no token limits: Vertex's model resource has none)."""
    return {
        "name": f"publishers/google/models/{model.id}",
        "versionId": "001",
        "openSourceCategory": "PROPRIETARY",
        "launchStage": "GA",
    }


class _Models(ModelCalls):
    max_bytes = 30 * 1024 * 1024

    async def stream_generate_content(self, request: Request) -> Answer:
        chunks = stream_chunks(await self._answer(request))
        return Streamed((data_line(chunk) for chunk in chunks), "text/event-stream")

    async def count_tokens(self, request: Request) -> Answer:
        model = self._model(request)
        body = as_object(await read_json(request, self.max_bytes)) or {}
        tokens = input_tokens(read_call(body, model))
        return {"totalTokens": tokens}

    async def get_model(self, request: Request) -> Answer:
        return publisher_model(self._model(request))

    async def list_models(self, request: Request) -> Answer:
        extra = self._shared.settings.extra_models
        known = [*MODELS, *(GeminiModel(name, name, 1_048_576, 65_536, True) for name in extra)]
        return {"publisherModels": [publisher_model(model) for model in known]}
