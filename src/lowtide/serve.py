"""`lowtide serve`: an HTTP server that answers live-looking API calls through an actor's batch mode, so that concurrent
requests from any client coalesce into batches, with the ledger underneath: a request sent again (the same body, or
the same `Idempotency-Key`) gets the stored answer instead of being paid twice.

The server is neutral: what a request body means and how answers and errors look on the wire belong to the `Wire`s the
actor's provider serves (`Provider.serving_wires`: the Messages API for Anthropic, Chat Completions and Responses for
OpenAI), each mounted on its own path."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lowtide.actor import Actor
from lowtide.errors import ActorError, ConfigurationError
from lowtide.modes import BatchProcessingMode
from lowtide.types import ActorResponse
from lowtide.wire import Refusal, ServedCall, Wire

__all__ = ["CLIENT_KEY_ENV", "build_app", "request_key"]

CLIENT_KEY_ENV = "LOWTIDE_SERVE_KEY"
_KEEPALIVE_SECONDS = 15.0
_log = logging.getLogger("lowtide.serve")


def request_key(actor_name: str, path: str, arguments: Mapping[str, Any], idempotency_key: str | None) -> str:
    """The ledger key of a request: from the client's `Idempotency-Key`, else a digest of the call's arguments (so
    that a streamed request and the same one unstreamed share one answer)."""
    if idempotency_key:
        seed = f"idempotency\0{idempotency_key}"
    else:
        seed = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(f"{actor_name}\0{path}\0{seed}".encode()).hexdigest()[:40]
    return f"serve-{digest}"


def build_app(actor: Actor, wires: Sequence[Wire] | None = None, *, client_keys: Sequence[str]) -> Starlette:
    """The ASGI app answering each wire's path (by default every wire the actor's batch provider serves) through
    `actor` in batch mode, for clients holding one of `client_keys`."""
    if not client_keys or not all(client_keys):
        raise ValueError("lowtide serve needs a client key to authenticate its clients")
    served = list(wires if wires is not None else actor.provider(BatchProcessingMode.BATCH).serving_wires())
    if not served:
        raise ConfigurationError(
            f"lowtide serve cannot serve the actor {actor.name!r}: its provider speaks no API lowtide serves.",
            field="provider",
        )
    keys = [key.encode() for key in client_keys]
    routes = [Route(wire.path, _answerer(actor, wire, keys), methods=["POST"]) for wire in served]
    paths = ", ".join(f"POST {wire.path}" for wire in served)

    async def not_found(request: Request) -> Response:
        refusal = Refusal(
            404,
            "not_found_error",
            f"{request.method} {request.url.path} is not served here (lowtide serve answers {paths}).",
        )
        return _refused(served[0], refusal)

    routes.append(Route("/{path:path}", not_found, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]))
    return Starlette(routes=routes)


def _answerer(actor: Actor, wire: Wire, keys: Sequence[bytes]) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint answering `wire.path`."""

    def refuse(status: int, error_type: str, message: str) -> JSONResponse:
        return _refused(wire, Refusal(status, error_type, message))

    def authorized(request: Request) -> bool:
        given = request.headers.get("x-api-key")
        if given is None:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            given = token.strip() if scheme.lower() == "bearer" else None
        # Compared in constant time; the key itself is never logged.
        return given is not None and any(hmac.compare_digest(given.encode(), key) for key in keys)

    async def answer(request: Request) -> Response:
        if not authorized(request):
            return refuse(401, "authentication_error", "invalid x-api-key")
        try:
            body: object = json.loads(await request.body())
        except ValueError:
            return refuse(400, "invalid_request_error", "The request body is not valid JSON.")
        try:
            call = wire.call(body)
            arguments = _with_actor_options(actor, call.arguments)
            # Checked here, and encoded as the provider will send it, so that a bad request is refused before the
            # stream opens and before anything is sent.
            backend = actor.provider(BatchProcessingMode.BATCH).batch_backend()
            checked = actor.request(**arguments)
            if backend is not None:
                backend.codec.encode_request(checked)
        except ActorError as error:
            return _refused(wire, wire.refusal(error))
        except Refusal as refusal:
            return _refused(wire, refusal)
        key = request_key(actor.name, wire.path, call.arguments, request.headers.get("idempotency-key"))
        outcome = asyncio.ensure_future(actor.run(key=key, mode=BatchProcessingMode.BATCH, **arguments))
        if call.stream:
            return StreamingResponse(_streamed(wire, call, outcome), media_type="text/event-stream")
        try:
            response = await outcome
        except ActorError as error:
            return _refused(wire, wire.refusal(error))
        return JSONResponse(wire.message(response, call))

    return answer


def _with_actor_options(actor: Actor, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments, its `provider_options` laid over the actor's own (a call's options would replace them
    whole): a wire may pick, say, an endpoint without dropping the actor's other settings."""
    given = cast("Mapping[str, Mapping[str, Any]] | None", arguments.get("provider_options"))
    if not given:
        return dict(arguments)
    merged = {name: dict(options) for name, options in actor.configuration.provider_options.items()}
    for name, options in given.items():
        merged[name] = {**merged.get(name, {}), **options}
    return {**arguments, "provider_options": merged}


def _refused(wire: Wire, refusal: Refusal) -> JSONResponse:
    if refusal.status >= 500:
        _log.warning("request failed: %s", refusal.message)
    return JSONResponse(wire.error_body(refusal), status_code=refusal.status, headers=dict(refusal.headers))


async def _streamed(wire: Wire, call: ServedCall, outcome: asyncio.Future[ActorResponse[Any]]) -> AsyncIterator[bytes]:
    """The answer replayed as events once its batch has ended; until then an SSE comment now and then, which clients
    ignore, so that idle-connection timeouts do not end the wait."""
    try:
        while True:
            done, _ = await asyncio.wait({outcome}, timeout=_KEEPALIVE_SECONDS)
            if done:
                break
            yield b": waiting on a batch\n\n"
        response = outcome.result()
    except ActorError as error:
        yield wire.error_event(wire.refusal(error))
        return
    for event in wire.events(wire.message(response, call), call):
        yield event
