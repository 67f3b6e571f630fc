"""HTTP plumbing shared by every emulation's routes: what a handler answers (`Answer`), request ids, the caller's
key, size-limited JSON bodies, answers dropped or cut off by a fault, and the error responses of the emulator's own
error vocabulary (`lowtide.emulator.core.errors`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lowtide.emulator.core.errors import ApiError, error_body, error_type_for_status, invalid_request
from lowtide.emulator.core.ids import new_id
from lowtide.emulator.core.jsonutil import JsonObject, as_object, surrogate_error
from lowtide.http.dropped import ConnectionDropped

__all__ = [
    "IN_PROCESS",
    "Answer",
    "ConnectionDropped",
    "DroppedResponse",
    "Handler",
    "Headed",
    "RequestIdMiddleware",
    "Streamed",
    "api_error_response",
    "api_key",
    "chunked",
    "cut_off",
    "error_response",
    "http_error_response",
    "read_body",
    "read_json",
    "request_id",
    "server_error_response",
]

_STATE_KEY = "lowtide_request_id"
_CHUNK_BYTES = 64 * 1024

# The ASGI scope extension that `Emulator.transport()` adds: calls that carry it wait on the emulator's clock,
# the others (over a socket) in real time.
IN_PROCESS = "lowtide.emulator.in_process"


@dataclass(frozen=True)
class Streamed:
    """A streamed answer, piece by piece: gathered into large chunks (`gather`), or sent one piece at a time."""

    pieces: Iterable[bytes]
    media_type: str
    headers: dict[str, str] | None = None
    gather: bool = False


@dataclass(frozen=True)
class Headed:
    """A JSON body with headers of its own (the rate-limit headers of a live answer, say)."""

    body: JsonObject
    headers: dict[str, str]


# What a route's handler returns: a JSON body, or a stream; the routes' wrapper turns it into the response.
Answer = JsonObject | Streamed | Headed
Handler = Callable[[Request], Awaitable[Answer]]


class DroppedResponse(Response):
    """An answer lost on the way: the status line and headers of `response` go out (the ASGI server must see a
    started response, or it would answer 500 in its place), then `ConnectionDropped` ends the call, and the server
    closes the connection without a body."""

    def __init__(self, response: Response) -> None:
        super().__init__(status_code=response.status_code)
        self.raw_headers = response.raw_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        raise ConnectionDropped("the emulator dropped the connection without an answer, as a fault asked")


def cut_off(pieces: Iterable[bytes], after: int) -> Iterator[bytes]:
    """The first `after` pieces (lines of a file produced line by line), then `ConnectionDropped`: a download whose
    connection breaks part way (`Faults.cut`). Over a socket the server closes the connection mid-body; in process,
    `Emulator.transport()` gives what came before, then `httpx2.RemoteProtocolError`."""
    for count, piece in enumerate(pieces):
        if count == after:
            raise ConnectionDropped(f"the emulator broke the connection after {after} line(s), as a fault asked")
        yield piece


class RequestIdMiddleware:
    """Gives every response a `request-id` header, and error bodies the same id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_id("req")
        scope.setdefault("state", {})[_STATE_KEY] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["request-id"] = request_id
            await send(message)

        await self.app(scope, receive, send_with_id)


def _request_id(request: Request) -> str:
    state = as_object(request.scope.get("state")) or {}
    return str(state.get(_STATE_KEY) or new_id("req"))


def request_id(request: Request) -> str:
    """The id `RequestIdMiddleware` gave this request (for providers that send it under another header too)."""
    return _request_id(request)


def api_error_response(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    request_id = _request_id(request)
    body = error_body(error.error_type, error.message, request_id, error.details)
    # Set here as well: the 500 handler runs outside the middleware that adds the header to other responses.
    return JSONResponse(body, status_code=error.status, headers={**error.headers, "request-id": request_id})


def http_error_response(request: Request, error: Exception) -> Response:
    """Routing errors (unknown path, wrong method) in the API's error shape rather than Starlette's text."""
    assert isinstance(error, HTTPException)
    error_type = error_type_for_status(error.status_code)
    message = "Not found." if error.status_code == 404 else str(error.detail)
    return api_error_response(request, ApiError(error_type, message, status=error.status_code))


def server_error_response(request: Request, error: Exception) -> Response:
    return api_error_response(request, ApiError("api_error", "Internal server error"))


def error_response(request: Request, error: Exception) -> Response:
    """A routing error (`HTTPException`) or a crash, in the emulator's own error shape."""
    if isinstance(error, HTTPException):
        return http_error_response(request, error)
    return server_error_response(request, error)


def api_key(request: Request) -> str:
    """The key from `x-api-key` or `Authorization: Bearer` ("" when there is none)."""
    key = request.headers.get("x-api-key", "").strip()
    if not key:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else ""
    return key


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refusing more than `limit` bytes (413) before reading it whole where possible."""
    too_large = ApiError("request_too_large", f"Request exceeds the maximum allowed number of bytes ({limit}).")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request, limit: int) -> object:
    """The decoded body, refusing more than `limit` bytes (413) before reading it whole where possible, and a body
    with an unpaired surrogate escaped in a string (`"\\ud800"`), which Python's `json` would take, as the API
    refuses it: 400, `The request body is not valid JSON: no low surrogate in string: line 1 column ...`."""
    body = await read_body(request, limit)
    try:
        value = json.loads(body)
    except ValueError:
        raise invalid_request("Invalid JSON body.") from None
    surrogate = surrogate_error(body)
    if surrogate is not None:
        raise invalid_request(f"The request body is not valid JSON: {surrogate}")
    return value


async def chunked(pieces: Iterable[bytes]) -> AsyncIterator[bytes]:
    """Gather small pieces into chunks of about 64 KiB: one send per line would make large files slow.
    The last chunk may be empty, which HTTP bodies allow."""
    buffer: list[bytes] = []
    size = 0
    for piece in pieces:
        buffer.append(piece)
        size += len(piece)
        if size >= _CHUNK_BYTES:
            yield b"".join(buffer)
            buffer, size = [], 0
    yield b"".join(buffer)
