"""Vertex AI's routes for Claude models, as the anthropic SDK's `AnthropicVertex` calls them: `rawPredict` (one
answer) and `streamRawPredict` (its server-sent events) under a project and a location, `count-tokens:rawPredict`,
and the publisher model (`GET /v1/publishers/anthropic/models/{model}`). A body is Anthropic's Messages request
without its `model` (the path names it, `claude-sonnet-4-5@20250929`: a name and its version) and with
`anthropic_version: vertex-2023-10-16`; the answer is the Anthropic emulation's own (`AnthropicBackend`, an account of
Vertex's own: its counts are not the Anthropic API's). The emulator's reading where Vertex's reference is silent: a
version after `@` is not checked (the name before it picks the model), and errors come in Google's shape."""

from __future__ import annotations

from collections.abc import Iterator

from starlette.requests import Request

from lowtide.emulator.anthropic.backend import AnthropicBackend
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, Streamed, read_json
from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.gemini.errors import invalid_argument, not_found
from lowtide.http.sse import encode_event
from lowtide.providers.anthropic.stream_events import message_events

__all__ = ["PUBLISHER", "VERTEX_VERSION", "claude_answer", "claude_body", "claude_routes", "model_of"]

VERTEX_VERSION = "vertex-2023-10-16"
"""The `anthropic_version` Vertex AI's Claude models take in a body."""
_MODELS = "/v1/projects/{project}/locations/{location}/publishers/anthropic/models"
PUBLISHER = "publishers/anthropic/models/"
"""How a job's model names a Claude model (`publishers/anthropic/models/claude-sonnet-4-5@20250929`)."""


def claude_routes(backend: AnthropicBackend) -> list[RouteRow]:
    """Claude's routes of Vertex AI (`count-tokens` before the model's own, which would take it for a model)."""
    api = _Claude(backend)
    return [
        (f"{_MODELS}/count-tokens:rawPredict", "POST", "vertex.claude.count_tokens", api.count_tokens),
        (f"{_MODELS}/{{model_id}}:rawPredict", "POST", "vertex.claude.raw_predict", api.raw_predict),
        (f"{_MODELS}/{{model_id}}:streamRawPredict", "POST", "vertex.claude.stream_raw_predict", api.stream),
        ("/v1/publishers/anthropic/models/{model_id}", "GET", "vertex.claude.models.get", api.get_model),
    ]


def model_of(name: str) -> str:
    """The Anthropic emulation's name of a Vertex AI Claude model: its name without the version after `@`."""
    return name.partition("@")[0]


def claude_body(body: object, model: str) -> JsonObject:
    """A Vertex body (no `model`, an `anthropic_version`) as the Messages API's, for the Anthropic emulation's model;
    a 400 without an `anthropic_version` (any is taken: the SDK sends its own, the batch documentation Vertex's)."""
    fields = dict(as_object(body) or {})
    version = fields.pop("anthropic_version", None)
    if not isinstance(version, str) or not version:
        raise invalid_argument(f"anthropic_version: Field required (such as {VERTEX_VERSION!r}).")
    if "model" in fields:
        raise invalid_argument("model: Extra inputs are not permitted (the model is named by the path).")
    return {"model": model_of(model), **fields}


def claude_answer(backend: AnthropicBackend, body: object, model: str) -> JsonObject:
    """The message a Claude model on Vertex AI answers a Vertex body with (a live call's, or a batch row's
    `request`); the Anthropic emulation's `ApiError` when it refuses it."""
    message, _ = backend.create_message(claude_body(body, model))
    return message


class _Claude:
    def __init__(self, backend: AnthropicBackend) -> None:
        self._backend = backend

    async def _message(self, request: Request) -> JsonObject:
        return claude_answer(
            self._backend, await read_json(request, self._backend.limits.max_request_bytes), _model(request)
        )

    async def raw_predict(self, request: Request) -> Answer:
        return await self._message(request)

    async def stream(self, request: Request) -> Answer:
        return Streamed(
            _events(await self._message(request)), "text/event-stream", headers={"cache-control": "no-cache"}
        )

    async def count_tokens(self, request: Request) -> Answer:
        body = as_object(await read_json(request, self._backend.limits.max_request_bytes)) or {}
        model = body.get("model")
        if not isinstance(model, str):
            raise invalid_argument("model: Field required.")
        fields = {name: value for name, value in body.items() if name not in ("model", "anthropic_version")}
        return self._backend.count_tokens({"model": model_of(model), **fields})

    async def get_model(self, request: Request) -> Answer:
        name = _model(request)
        if self._backend.models.serves(model_of(name)) is None:
            raise not_found(f"Publisher Model `publishers/anthropic/models/{name}` was not found.")
        return {"name": f"publishers/anthropic/models/{name}", "versionId": "001", "launchStage": "GA"}


def _model(request: Request) -> str:
    return str(request.path_params["model_id"])


def _events(message: JsonObject) -> Iterator[bytes]:
    for name, data in message_events(message):
        yield encode_event(name, data)
