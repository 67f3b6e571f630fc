"""A Gemini model's calls as an API serves them, whichever API it is (the Gemini API's routes, Vertex AI's): the
model a route's path names, a call's body read against it, and its answer; each API adds its own limits, its own
count of tokens and its own listing of models."""

from __future__ import annotations

from typing import cast

from starlette.requests import Request

from lowtide.emulator.core.emulation import Shared
from lowtide.emulator.core.http import Answer, read_json, request_id
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.gemini.catalogue import GeminiModel, served
from lowtide.emulator.gemini.model import generate
from lowtide.emulator.gemini.request import GeminiCall, read_call
from lowtide.emulator.gemini.wire import GenerateContentResponse

__all__ = ["ModelCalls"]


class ModelCalls:
    """The calls of the Gemini models `shared` serves (with its settings' extra models), each body read up to
    `max_bytes` unless `_limit` says otherwise."""

    max_bytes = 20 * 1024 * 1024

    def __init__(self, shared: Shared) -> None:
        self._shared = shared

    def _limit(self) -> int:
        """How many bytes a call's body may hold."""
        return self.max_bytes

    def _model(self, request: Request) -> GeminiModel:
        """The served model the route's path names, for the method it calls (`generateContent` by default)."""
        path = request.url.path
        method = path.rpartition(":")[2] if ":" in path else "generateContent"
        name = str(request.path_params["model_id"])
        return served(name, self._shared.settings.extra_models, path.split("/")[1], method)

    async def _call(self, request: Request) -> GeminiCall:
        """The request's body read and checked against its model (the model first: an unknown one is the answer)."""
        model = self._model(request)
        return read_call(await read_json(request, self._limit()), model)

    async def _answer(self, request: Request) -> GenerateContentResponse:
        """The model's answer to the request's call."""
        shared = self._shared
        return generate(await self._call(request), request_id(request), cache=shared.cache, now=shared.clock.now())

    async def generate_content(self, request: Request) -> Answer:
        return cast(JsonObject, await self._answer(request))
