"""The `/v1` routes: Messages and Message Batches, each counted, authenticated and exposed to faults before it
touches any state."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lowtide.emulator.backend import Backend
from lowtide.emulator.jsonutil import as_object
from lowtide.emulator.sse import encode_event, message_events
from lowtide.emulator.web import authenticate, chunked, read_json, require_version

__all__ = ["api_routes"]


def api_routes(backend: Backend) -> list[Route]:
    return _Api(backend).routes()


class _Api:
    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    def routes(self) -> list[Route]:
        batch = "/v1/messages/batches/{batch_id}"
        return [
            Route("/v1/messages", self.create_message, methods=["POST"]),
            Route("/v1/messages/batches", self.create_batch, methods=["POST"]),
            Route("/v1/messages/batches", self.list_batches, methods=["GET"]),
            Route(batch, self.retrieve_batch, methods=["GET"]),
            Route(batch, self.delete_batch, methods=["DELETE"]),
            Route(f"{batch}/cancel", self.cancel_batch, methods=["POST"]),
            Route(f"{batch}/results", self.batch_results, methods=["GET"]),
        ]

    def _begin(self, request: Request, route: str) -> None:
        # Counted first, so that a call that fails (auth, fault, validation) still shows in `calls`.
        self._backend.calls[route] += 1
        authenticate(request, self._backend.settings.api_keys)
        require_version(request)
        fault = self._backend.faults.take(route)
        if fault is not None:
            raise fault

    async def create_message(self, request: Request) -> Response:
        self._begin(request, "messages.create")
        body = await read_json(request, self._backend.settings.max_request_bytes)
        message = self._backend.create_message(body)
        if (as_object(body) or {}).get("stream") is True:
            return StreamingResponse(
                _events(message), media_type="text/event-stream", headers={"cache-control": "no-cache"}
            )
        return JSONResponse(message)

    async def create_batch(self, request: Request) -> Response:
        self._begin(request, "batches.create")
        body = await read_json(request, self._backend.settings.max_batch_bytes)
        return JSONResponse(self._backend.create_batch(body, str(request.base_url)))

    async def list_batches(self, request: Request) -> Response:
        self._begin(request, "batches.list")
        query = request.query_params
        page = self._backend.list_batches(
            limit=query.get("limit"),
            after_id=query.get("after_id"),
            before_id=query.get("before_id"),
            base_url=str(request.base_url),
        )
        return JSONResponse(page)

    async def retrieve_batch(self, request: Request) -> Response:
        self._begin(request, "batches.retrieve")
        return JSONResponse(self._backend.retrieve_batch(request.path_params["batch_id"], str(request.base_url)))

    async def cancel_batch(self, request: Request) -> Response:
        self._begin(request, "batches.cancel")
        return JSONResponse(self._backend.cancel_batch(request.path_params["batch_id"], str(request.base_url)))

    async def delete_batch(self, request: Request) -> Response:
        self._begin(request, "batches.delete")
        return JSONResponse(self._backend.delete_batch(request.path_params["batch_id"]))

    async def batch_results(self, request: Request) -> Response:
        self._begin(request, "batches.results")
        lines = self._backend.batch_results(request.path_params["batch_id"])
        # The SDK asks for `application/binary` and decodes JSON lines whatever the type; the API serves the
        # `.jsonl` file as a binary download.
        return StreamingResponse(chunked(lines), media_type="application/binary")


async def _events(message: dict[str, object]) -> AsyncIterator[bytes]:
    for name, data in message_events(message):
        yield encode_event(name, data)
