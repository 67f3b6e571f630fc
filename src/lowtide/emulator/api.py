"""The `/v1` routes: Messages, Message Batches, Files and Models, each counted, authenticated and exposed to faults
before it touches any state, saved to the state file after it did, and exposed to after-commit and slow faults before
its answer goes out."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lowtide.emulator.backend import Backend
from lowtide.emulator.files import file_routes
from lowtide.emulator.jsonutil import JsonObject, as_object
from lowtide.emulator.web import (
    IN_PROCESS,
    Answer,
    DroppedResponse,
    Handler,
    Headed,
    Streamed,
    api_key,
    authenticate,
    betas,
    chunked,
    cut_off,
    read_json,
    require_version,
)
from lowtide.http.sse import encode_event
from lowtide.providers.anthropic.stream_events import message_events

__all__ = ["anthropic_file_routes", "anthropic_model_routes", "api_routes"]

Wait = Callable[[float], Awaitable[None]]


def api_routes(backend: Backend) -> list[Route]:
    """The Anthropic routes but the Files and Models APIs' (`/v1/files` and `/v1/models` are shared with OpenAI:
    `anthropic_file_routes`, `anthropic_model_routes`)."""
    return _Api(backend).routes()


def anthropic_file_routes(backend: Backend) -> list[Route]:
    """The Anthropic Files API's routes, for the `/v1/files` dispatcher that tells the two providers' callers apart."""
    return _Api(backend).file_routes()


def anthropic_model_routes(backend: Backend) -> list[Route]:
    """The Anthropic Models API's routes, for the `/v1/models` dispatcher that tells the two providers' callers
    apart. The SDK's beta client calls the same paths with `?beta=true`, which routing ignores."""
    return _Api(backend).model_routes()


class _Api:
    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    def routes(self) -> list[Route]:
        batch = "/v1/messages/batches/{batch_id}"
        table: list[tuple[str, str, str, Handler]] = [
            ("/v1/messages", "POST", "messages.create", self.create_message),
            ("/v1/messages/count_tokens", "POST", "messages.count_tokens", self.count_tokens),
            ("/v1/messages/batches", "POST", "batches.create", self.create_batch),
            ("/v1/messages/batches", "GET", "batches.list", self.list_batches),
            (batch, "GET", "batches.retrieve", self.retrieve_batch),
            (batch, "DELETE", "batches.delete", self.delete_batch),
            (f"{batch}/cancel", "POST", "batches.cancel", self.cancel_batch),
            (f"{batch}/results", "GET", "batches.results", self.batch_results),
        ]
        return [Route(path, self._endpoint(name, handler), methods=[method]) for path, method, name, handler in table]

    def model_routes(self) -> list[Route]:
        table: list[tuple[str, str, str, Handler]] = [
            ("/v1/models", "GET", "models.list", self.list_models),
            ("/v1/models/{model_id}", "GET", "models.retrieve", self.retrieve_model),
        ]
        return [Route(path, self._endpoint(name, handler), methods=[method]) for path, method, name, handler in table]

    def file_routes(self) -> list[Route]:
        table = file_routes(self._backend)
        return [Route(path, self._endpoint(name, handler), methods=[method]) for path, method, name, handler in table]

    def _endpoint(self, route: str, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                self._begin(request, route)
                answer = await handler(request)
            finally:
                # Every call counts, failed ones included, and may have changed batches or the cache.
                self._backend.save()
            return await self._deliver(request, route, answer)

        return endpoint

    def _begin(self, request: Request, route: str) -> None:
        # Counted first, so that a call that fails (auth, fault, validation) still shows in `calls`.
        self._backend.calls[route] += 1
        authenticate(request, self._backend.settings.api_keys)
        require_version(request)
        fault = self._backend.faults.take(route)
        if fault is not None:
            raise fault

    async def _deliver(self, request: Request, route: str, answer: Answer) -> Response:
        """The answer of a call that did its work, as the after-commit and slow faults armed for `route` let it go."""
        faults = self._backend.faults
        wait = self._wait(request)
        after = faults.take_after_commit(route)
        if after is not None and after.kind == "drop":
            return DroppedResponse(_response(answer, None, wait))
        if after is not None:
            await wait(after.seconds)
        pause = faults.take_slow(route)
        if pause is not None and not isinstance(answer, Streamed):
            await wait(pause)
        cut = faults.take_cut(route) if isinstance(answer, Streamed) else None
        if isinstance(answer, Streamed) and cut is not None:  # each line sent as it comes, up to the cut
            answer = Streamed(cut_off(answer.pieces, cut), answer.media_type, answer.headers)
        return _response(answer, pause, wait)

    def _wait(self, request: Request) -> Wait:
        """In process, waits are on the emulator clock (a `ManualClock` moves at once); over a socket, real."""
        in_process = IN_PROCESS in (as_object(request.scope.get("extensions")) or {})
        return self._backend.clock.sleep if in_process else asyncio.sleep

    async def create_message(self, request: Request) -> Answer:
        body = await read_json(request, self._backend.settings.max_request_bytes)
        message, limits = self._backend.create_message(body, betas(request), api_key=api_key(request))
        latency = self._backend.settings.latency
        if latency.fixed or latency.per_output_token:
            used = as_object(message.get("usage")) or {}
            output = used.get("output_tokens")
            await self._wait(request)(latency.of(output if isinstance(output, int) else 0))
        if await request.is_disconnected():
            self._backend.abandoned_answers += 1  # its caller is gone: nobody receives this answer
        else:
            self._backend.live_answers[body_digest(body)] += 1
        if (as_object(body) or {}).get("stream") is True:
            return Streamed(_events(message), "text/event-stream", headers={"cache-control": "no-cache", **limits})
        return Headed(message, limits) if limits else message

    async def count_tokens(self, request: Request) -> Answer:
        body = await read_json(request, self._backend.settings.max_request_bytes)
        return self._backend.count_tokens(body, betas(request))

    async def create_batch(self, request: Request) -> Answer:
        body = await read_json(request, self._backend.settings.max_batch_bytes)
        return self._backend.create_batch(body, str(request.base_url), betas(request))

    async def list_batches(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_batches(
            limit=query.get("limit"),
            after_id=query.get("after_id"),
            before_id=query.get("before_id"),
            base_url=str(request.base_url),
        )

    async def list_models(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_models(
            limit=query.get("limit"),
            after_id=query.get("after_id"),
            before_id=query.get("before_id"),
            # The SDK sends a list as `lifecycle[]=active&lifecycle[]=deprecated`.
            lifecycle=[*query.getlist("lifecycle[]"), *query.getlist("lifecycle")],
        )

    async def retrieve_model(self, request: Request) -> Answer:
        return self._backend.retrieve_model(request.path_params["model_id"])

    async def retrieve_batch(self, request: Request) -> Answer:
        return self._backend.retrieve_batch(request.path_params["batch_id"], str(request.base_url))

    async def cancel_batch(self, request: Request) -> Answer:
        return self._backend.cancel_batch(request.path_params["batch_id"], str(request.base_url))

    async def delete_batch(self, request: Request) -> Answer:
        return self._backend.delete_batch(request.path_params["batch_id"])

    async def batch_results(self, request: Request) -> Answer:
        lines = self._backend.batch_results(request.path_params["batch_id"])
        # The SDK asks for `application/binary` and decodes JSON lines whatever the type; the API serves the
        # `.jsonl` file as a binary download.
        return Streamed(lines, "application/binary", gather=True)


def body_digest(body: object) -> str:
    """What tells one live request from another in `live_answers`: its body, without `stream`."""
    fields = {key: value for key, value in (as_object(body) or {}).items() if key != "stream"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


def _response(answer: Answer, pause: float | None, wait: Wait) -> Response:
    if isinstance(answer, Headed):
        return JSONResponse(answer.body, headers=answer.headers)
    if not isinstance(answer, Streamed):
        return JSONResponse(answer)
    if pause is not None:
        body = _paced(answer.pieces, pause, wait)
    elif answer.gather:
        body = chunked(answer.pieces)
    else:
        body = _each(answer.pieces)
    return StreamingResponse(body, media_type=answer.media_type, headers=answer.headers)


def _events(message: JsonObject) -> Iterator[bytes]:
    for name, data in message_events(message):
        yield encode_event(name, data)


async def _each(pieces: Iterable[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


async def _paced(pieces: Iterable[bytes], pause: float, wait: Wait) -> AsyncIterator[bytes]:
    """One piece (a results line, an event) at a time, each `pause` seconds after the one before."""
    for piece in pieces:
        await wait(pause)
        yield piece
