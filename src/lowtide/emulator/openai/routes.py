"""The OpenAI `/v1` routes (Files, Batches, Responses, Chat Completions, Embeddings), each counted in `calls`,
authenticated by bearer key and exposed to faults before it touches any state, saved to the state file after it
did, and exposed to after-commit and slow faults before its answer goes out: as the Anthropic routes are, under
route names starting `openai.`.

`/v1/files` and `/v1/models` are paths both providers use. A dispatcher in front of each sends each call to the OpenAI
routes or to the Anthropic ones by its headers, as the two services would see it: an Anthropic client sends
`x-api-key` or `anthropic-version`, an OpenAI client neither. Give the Anthropic routes to
`openai_routes(anthropic_files=..., anthropic_models=...)`; without them, an Anthropic caller of those paths gets the
404 of an unknown route."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from lowtide.emulator.backend import Backend
from lowtide.emulator.errors import ApiError
from lowtide.emulator.jsonutil import JsonObject, as_object
from lowtide.emulator.openai.backend import expires_after
from lowtide.emulator.openai.errors import from_api_error
from lowtide.emulator.openai.http import authenticate, is_anthropic_caller, read_upload
from lowtide.emulator.web import IN_PROCESS, DroppedResponse, api_key, chunked, cut_off, read_json, request_id
from lowtide.http.sse import data_line, encode_event
from lowtide.providers.openai.stream_events import completion_chunks, response_events

__all__ = ["openai_routes"]

Wait = Callable[[float], Awaitable[None]]
_BATCH_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True)
class _Stream:
    """A streamed answer, piece by piece: gathered into large chunks (`gather`), or sent one piece at a time."""

    pieces: Iterable[bytes]
    media_type: str
    gather: bool = False
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class _Headed:
    """A JSON body with headers of its own (a live answer's rate-limit headers)."""

    body: JsonObject
    headers: dict[str, str]


_Answer = JsonObject | _Stream | _Headed
_Handler = Callable[[Request], Awaitable[_Answer]]


def openai_routes(
    backend: Backend, anthropic_files: Sequence[BaseRoute] = (), anthropic_models: Sequence[BaseRoute] = ()
) -> list[BaseRoute]:
    """The OpenAI routes, `/v1/files` and `/v1/models` behind the dispatchers that give Anthropic callers
    `anthropic_files` and `anthropic_models`."""
    return _OpenAIApi(backend).routes(anthropic_files, anthropic_models)


class _ByCaller:
    """An ASGI app sending each call to the OpenAI or the Anthropic app, by the caller's headers."""

    def __init__(self, openai: ASGIApp, anthropic: ASGIApp) -> None:
        self._openai = openai
        self._anthropic = anthropic

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._anthropic if is_anthropic_caller(Headers(scope=scope)) else self._openai
        await app(scope, receive, send)


class _OpenAIApi:
    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._openai = backend.openai

    def routes(self, anthropic_files: Sequence[BaseRoute], anthropic_models: Sequence[BaseRoute]) -> list[BaseRoute]:
        batch = "/v1/batches/{batch_id}"
        table: list[tuple[str, str, str, _Handler]] = [
            ("/v1/responses", "POST", "openai.responses.create", self.create_response),
            ("/v1/responses/input_tokens", "POST", "openai.responses.input_tokens", self.count_input_tokens),
            ("/v1/chat/completions", "POST", "openai.chat.completions.create", self.create_chat_completion),
            ("/v1/embeddings", "POST", "openai.embeddings.create", self.create_embeddings),
            ("/v1/batches", "POST", "openai.batches.create", self.create_batch),
            ("/v1/batches", "GET", "openai.batches.list", self.list_batches),
            (batch, "GET", "openai.batches.retrieve", self.retrieve_batch),
            (f"{batch}/cancel", "POST", "openai.batches.cancel", self.cancel_batch),
        ]
        file = "/v1/files/{file_id}"
        files: list[tuple[str, str, str, _Handler]] = [
            ("/v1/files", "POST", "openai.files.create", self.create_file),
            ("/v1/files", "GET", "openai.files.list", self.list_files),
            (file, "GET", "openai.files.retrieve", self.retrieve_file),
            (file, "DELETE", "openai.files.delete", self.delete_file),
            (f"{file}/content", "GET", "openai.files.content", self.file_content),
        ]
        models: list[tuple[str, str, str, _Handler]] = [
            ("/v1/models", "GET", "openai.models.list", self.list_models),
            ("/v1/models/{model_id}", "GET", "openai.models.retrieve", self.retrieve_model),
        ]
        shared_files = _ByCaller(Router(routes=self._routes(files)), Router(routes=list(anthropic_files)))
        shared_models = _ByCaller(Router(routes=self._routes(models)), Router(routes=list(anthropic_models)))
        return [
            *self._routes(table),
            Route("/v1/files{rest:path}", shared_files),
            Route("/v1/models{rest:path}", shared_models),
        ]

    def _routes(self, table: list[tuple[str, str, str, _Handler]]) -> list[BaseRoute]:
        return [Route(path, self._endpoint(name, handler), methods=[method]) for path, method, name, handler in table]

    def _endpoint(self, route: str, handler: _Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                self._begin(request, route)
                answer = await handler(request)
            except ApiError as error:
                # A fault, or a body the shared plumbing refused: in OpenAI's terms.
                raise from_api_error(error) from None
            finally:
                # Every call counts, failed ones included, and may have changed files, batches or the cache.
                self._backend.save()
            return await self._deliver(request, route, answer)

        return endpoint

    def _begin(self, request: Request, route: str) -> None:
        self._backend.calls[route] += 1
        authenticate(request, self._backend.settings.api_keys)
        fault = self._backend.faults.take(route)
        if fault is not None:
            raise fault

    async def _deliver(self, request: Request, route: str, answer: _Answer) -> Response:
        """The answer of a call that did its work, as the after-commit and slow faults armed for `route` let it go."""
        faults = self._backend.faults
        wait = self._wait(request)
        headers = {"x-request-id": request_id(request)}
        after = faults.take_after_commit(route)
        if after is not None and after.kind == "drop":
            return DroppedResponse(_response(answer, None, wait, headers))
        if after is not None:
            await wait(after.seconds)
        pause = faults.take_slow(route)
        if pause is not None and not isinstance(answer, _Stream):
            await wait(pause)
        cut = faults.take_cut(route) if isinstance(answer, _Stream) else None
        if isinstance(answer, _Stream) and cut is not None:  # each line sent as it comes, up to the cut
            answer = _Stream(cut_off(answer.pieces, cut), answer.media_type, headers=answer.headers)
        return _response(answer, pause, wait, headers)

    def _wait(self, request: Request) -> Wait:
        in_process = IN_PROCESS in (as_object(request.scope.get("extensions")) or {})
        return self._backend.clock.sleep if in_process else asyncio.sleep

    async def _json(self, request: Request, limit: int | None = None) -> object:
        return await read_json(request, limit if limit is not None else self._openai.limits.max_request_bytes)

    # -- the model -----------------------------------------------------------------------------------------------

    async def create_response(self, request: Request) -> _Answer:
        body = await self._json(request)
        response, stream = self._openai.create_response(body)
        headers = await self._live(request, body, response, ("input_tokens", "output_tokens"), "max_output_tokens")
        if stream:
            events = (encode_event(event["type"], event) for event in response_events(response))
            return _Stream(events, "text/event-stream", headers=headers)
        return _Headed(response, headers) if headers else response

    async def create_chat_completion(self, request: Request) -> _Answer:
        body = await self._json(request)
        completion, call = self._openai.create_chat_completion(body)
        headers = await self._live(
            request, body, completion, ("prompt_tokens", "completion_tokens"), "max_completion_tokens", "max_tokens"
        )
        if call.stream:
            return _Stream(_chat_stream(completion, call.include_usage), "text/event-stream", headers=headers)
        return _Headed(completion, headers) if headers else completion

    async def _live(
        self, request: Request, body: object, answer: JsonObject, usage_names: tuple[str, str], *maximums: str
    ) -> dict[str, str]:
        """A live answer's rate limits (a 429 when over them; else its headers) and its latency, as configured."""
        usage = as_object(answer.get("usage")) or {}
        used_in, used_out = (usage.get(name) for name in usage_names)
        input_tokens = used_in if isinstance(used_in, int) else 0
        output_tokens = used_out if isinstance(used_out, int) else 0
        settings = self._backend.settings
        headers: dict[str, str] = {}
        if settings.rate_limits.any:
            fields = as_object(body) or {}
            maximum = next((v for name in maximums if isinstance(v := fields.get(name), int)), output_tokens)
            quotas, now = self._backend.quotas, self._backend.clock.now()
            try:
                admitted = quotas.admit(
                    api_key(request), input_tokens=input_tokens, max_tokens=maximum, now=now, provider="openai"
                )
            except ApiError as error:
                raise from_api_error(error) from None
            headers = quotas.settle(admitted, output_tokens=output_tokens, now=now)
        latency = settings.latency
        if latency.fixed or latency.per_output_token:
            await self._wait(request)(latency.of(output_tokens))
        return headers

    async def count_input_tokens(self, request: Request) -> _Answer:
        return self._openai.count_input_tokens(await self._json(request))

    async def list_models(self, request: Request) -> _Answer:
        return self._openai.list_models()

    async def retrieve_model(self, request: Request) -> _Answer:
        return self._openai.retrieve_model(request.path_params["model_id"])

    async def create_embeddings(self, request: Request) -> _Answer:
        return self._openai.create_embeddings(await self._json(request))

    # -- batches -------------------------------------------------------------------------------------------------

    async def create_batch(self, request: Request) -> _Answer:
        return self._openai.create_batch(await self._json(request, _BATCH_BODY_BYTES))

    async def list_batches(self, request: Request) -> _Answer:
        query = request.query_params
        return self._openai.list_batches(after=query.get("after"), limit=query.get("limit"))

    async def retrieve_batch(self, request: Request) -> _Answer:
        return self._openai.retrieve_batch(request.path_params["batch_id"])

    async def cancel_batch(self, request: Request) -> _Answer:
        return self._openai.cancel_batch(request.path_params["batch_id"])

    # -- files ---------------------------------------------------------------------------------------------------

    async def create_file(self, request: Request) -> _Answer:
        upload = await read_upload(request, self._openai.limits.max_file_bytes)
        lifetime = expires_after(upload.fields)
        return self._openai.upload(upload.filename, upload.content, upload.fields.get("purpose"), lifetime)

    async def list_files(self, request: Request) -> _Answer:
        query = request.query_params
        return self._openai.list_files(
            after=query.get("after"), limit=query.get("limit"), order=query.get("order"), purpose=query.get("purpose")
        )

    async def retrieve_file(self, request: Request) -> _Answer:
        return self._openai.retrieve_file(request.path_params["file_id"])

    async def delete_file(self, request: Request) -> _Answer:
        return self._openai.delete_file(request.path_params["file_id"])

    async def file_content(self, request: Request) -> _Answer:
        return _Stream(self._openai.file_content(request.path_params["file_id"]), "application/octet-stream", True)


def _chat_stream(completion: JsonObject, include_usage: bool) -> Iterator[bytes]:
    for chunk in completion_chunks(completion, include_usage=include_usage):
        yield data_line(chunk)
    yield b"data: [DONE]\n\n"


def _response(answer: _Answer, pause: float | None, wait: Wait, headers: dict[str, str]) -> Response:
    if isinstance(answer, _Headed):
        return JSONResponse(answer.body, headers={**headers, **answer.headers})
    if not isinstance(answer, _Stream):
        return JSONResponse(answer, headers=headers)
    headers = {**headers, **(answer.headers or {})}
    if pause is not None:
        body = _paced(answer.pieces, pause, wait)
    elif answer.gather:
        body = chunked(answer.pieces)
    else:
        body = _each(answer.pieces)
    stream_headers = {**headers, "cache-control": "no-cache"} if answer.media_type == "text/event-stream" else headers
    return StreamingResponse(body, media_type=answer.media_type, headers=stream_headers)


async def _each(pieces: Iterable[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


async def _paced(pieces: Iterable[bytes], pause: float, wait: Wait) -> AsyncIterator[bytes]:
    """One piece (a file's line, an event) at a time, each `pause` seconds after the one before."""
    for piece in pieces:
        await wait(pause)
        yield piece
