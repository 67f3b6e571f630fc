"""`lowtide serve`: an HTTP server that answers live-looking API calls through an actor's batch mode, so that concurrent
requests from any client coalesce into batches, with the ledger underneath: a request sent again (the same body, or
the same `Idempotency-Key`, by the same client key) gets the stored answer instead of being paid twice.

The server is neutral: what a request body means, which model names are the actor's, and how answers and errors look
on the wire belong to the `Wire`s the actor's provider serves (`Provider.serving_wires`: the Messages API for
Anthropic, Chat Completions and Responses for OpenAI), each mounted on its own path. Its clients are not trusted:
whatever it refuses (a wrong key, a method or path it does not serve, a body too large, not JSON, too deep, not
Unicode, a model it does not answer, what the API would refuse) is refused before anything is recorded or sent, in
the API's error shape, never with a 500 or a traceback."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, cast

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, request_response
from starlette.types import Receive, Scope, Send

from lowtide.actor import Actor
from lowtide.calls.documents import path_block
from lowtide.calls.owners import spend_owner
from lowtide.core.modes import BatchProcessingMode
from lowtide.errors import ActorError, ConfigurationError
from lowtide.ledger.inline import async_ledger
from lowtide.ledger.spend_records import Owner
from lowtide.messages.wire import Refusal, ServedCall, Wire
from lowtide.serve.body import read_json
from lowtide.serve.keys import IDEMPOTENCY_TTL, ClientKey, ClientKeys, ledger_key, request_key
from lowtide.serve.streams import failure, refused, relayed, replayed
from lowtide.telemetry.switch import tracing

__all__ = ["BODY_TIMEOUT", "CLIENT_KEY_ENV", "IDEMPOTENCY_TTL", "build_app", "error_body", "request_key"]

BODY_TIMEOUT = 30.0
"""Seconds a request body may go without a byte arriving: far longer than any client's pause between two packets of
one body, short enough that a client gone quiet half-way does not hold its request for ever."""

CLIENT_KEY_ENV = "LOWTIDE_SERVE_KEY"
_log = logging.getLogger("lowtide.serve")


@dataclass(frozen=True)
class _Served:
    """What every endpoint of one app shares."""

    actor: Actor
    clients: ClientKeys
    models: tuple[str, ...]
    """The models clients may ask for: the actor's, then those `--allow-model` names."""
    max_body_bytes: int | None
    idempotency_ttl: float
    body_timeout: float
    """Seconds a request body may go without a byte arriving before it is refused (408)."""
    mode: BatchProcessingMode
    """Batch: every call through the ledger and a batch; live: each call live, a streamed one relayed as it comes."""


def build_app(
    actor: Actor,
    wires: Sequence[Wire] | None = None,
    *,
    client_keys: Sequence[str | ClientKey],
    allow_models: Sequence[str] = (),
    max_body_bytes: int | None = None,
    idempotency_ttl: float = IDEMPOTENCY_TTL,
    body_timeout: float = BODY_TIMEOUT,
    webhooks: bool = False,
    mode: BatchProcessingMode | str = BatchProcessingMode.BATCH,
) -> Starlette:
    """The ASGI app answering each wire's path (by default every wire the actor's batch provider serves) through
    `actor` in batch mode, for clients holding one of `client_keys` (a `ClientKey` with an owner: its clients' calls
    charged to that team and project), asking for the actor's model or one of
    `allow_models`, in bodies of at most `max_body_bytes` (default: each API's own limit), an `Idempotency-Key` naming
    one request for `idempotency_ttl` seconds; a body that goes `body_timeout` seconds without a byte is refused. With
    `webhooks`, the provider's batch webhooks are received too (`lowtide.webhooks.receiver`), on their own path. In
    `mode` live, each call is a live call instead (not recorded in the ledger: an `Idempotency-Key` names nothing),
    and a streamed one is relayed piece by piece as the provider streams it."""
    if max_body_bytes is not None and max_body_bytes < 1:
        raise ValueError(f"max_body_bytes must be 1 or more, not {max_body_bytes}")
    if not idempotency_ttl > 0:
        raise ValueError(f"idempotency_ttl must be more than 0 seconds, not {idempotency_ttl}")
    if not body_timeout > 0:
        raise ValueError(f"body_timeout must be more than 0 seconds, not {body_timeout}")
    clients = ClientKeys(client_keys)
    served = _wires(actor, wires)
    models = tuple(dict.fromkeys([actor.configuration.model, *(name for name in allow_models if name)]))
    served_mode = BatchProcessingMode(mode)
    settings = _Served(actor, clients, models, max_body_bytes, idempotency_ttl, body_timeout, served_mode)
    routes = [Route(wire.path, _AnyMethod(_answerer(settings, wire))) for wire in served]
    if webhooks:
        from lowtide.webhooks.receiver import webhook_route

        routes.append(webhook_route(actor))
    paths = ", ".join(f"POST {wire.path}" for wire in served)

    async def not_found(request: Request) -> Response:
        refusal = Refusal(
            404,
            "not_found_error",
            f"{request.method} {request.url.path} is not served here (lowtide serve answers {paths}).",
        )
        return refused(served[0], refusal)

    routes.append(Route("/{path:path}", _AnyMethod(not_found)))
    return Starlette(routes=routes)


def _wires(actor: Actor, wires: Sequence[Wire] | None) -> list[Wire]:
    served = list(wires if wires is not None else actor.provider(BatchProcessingMode.BATCH).serving_wires())
    if not served:
        raise ConfigurationError(
            f"lowtide serve cannot serve the actor {actor.name!r}: its provider speaks no API lowtide serves.",
            field="provider",
        )
    return served


def error_body(actor: Actor, wires: Sequence[Wire] | None = None) -> Callable[[int, str], tuple[str, bytes]]:
    """How the server writes the errors it answers before the app reads a request (headers too large, too slow, not
    HTTP): in the error shape of the API the actor is served as (its first wire's, as the 404 for an unknown path)."""
    wire = _wires(actor, wires)[0]

    def render(status: int, message: str) -> tuple[str, bytes]:
        refusal = Refusal(status, "invalid_request_error", message)
        return "application/json", json.dumps(wire.error_body(refusal)).encode()

    return render


class _AnyMethod:
    """An endpoint as an ASGI app, which a `Route` calls for every method (a function gets GET alone unless its
    methods are listed, and Starlette's own 405 for the others), so that it answers each in the API's shape."""

    def __init__(self, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        self._app = request_response(endpoint)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


def _answerer(served: _Served, wire: Wire) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint answering `wire.path`."""
    actor = served.actor
    limit = served.max_body_bytes or wire.max_body_bytes

    async def answer(request: Request) -> Response:
        if request.method != "POST":
            message = f"{request.method} {wire.path} is not allowed: lowtide serve answers POST {wire.path}."
            return refused(wire, Refusal(405, "invalid_request_error", message, headers={"Allow": "POST"}))
        in_query = request.query_params.get(wire.key_query) if wire.key_query else None
        scope = served.clients.scope(request.headers, wire.key_header, in_query)
        if scope is None:
            named = wire.key_header or "x-api-key"
            named += f" or ?{wire.key_query}=" if wire.key_query else ""
            return refused(wire, Refusal(401, "authentication_error", f"invalid {named}"))
        try:
            call = wire.call(await read_json(request, limit, idle_seconds=served.body_timeout), request.path_params)
            arguments = _with_actor_options(actor, call.arguments)
            _no_path(arguments)
            await _check(served, wire, arguments)
        except ActorError as error:
            return refused(wire, wire.refusal(error))
        except Refusal as refusal:
            return refused(wire, refusal)
        except ClientDisconnect:
            return Response(status_code=400)  # no one is left to read it; the access log shows the request
        except Exception as error:  # a body some check could not read: the client's to fix, never a crash here
            _log.warning("lowtide serve could not read a request to %s (%s)", wire.path, type(error).__name__)
            _log.debug("traceback", exc_info=True)
            message = f"lowtide serve could not read this request ({type(error).__name__}: {error})."
            return refused(wire, Refusal(400, "invalid_request_error", message))
        with _owned(served.clients.owner(scope)):
            return await _answered(served, wire, call, arguments, request, scope)

    return answer


async def _answered(
    served: _Served, wire: Wire, call: ServedCall, arguments: dict[str, Any], request: Request, scope: str
) -> Response:
    """A checked call answered, in its client key's `scope`: live, or through the ledger and a batch."""
    actor = served.actor
    if served.mode is BatchProcessingMode.LIVE:
        return await _live(actor, wire, call, arguments, request)
    try:
        key = await ledger_key(
            async_ledger(actor.ledger),
            now=actor.clock.now(),
            ttl=served.idempotency_ttl,
            actor_name=actor.name,
            path=wire.path,
            scope=scope,
            arguments=call.arguments,
            idempotency_key=request.headers.get("idempotency-key"),
        )
    except Exception as error:
        return refused(wire, failure(wire, error))
    with _continuing(request):
        outcome = asyncio.ensure_future(actor.run(key=key, mode=BatchProcessingMode.BATCH, **arguments))
    if call.stream:
        return replayed(wire, call, outcome)
    try:
        response = await outcome
    except Exception as error:
        return refused(wire, failure(wire, error))
    return JSONResponse(wire.message(response, call))


def _owned(owner: Owner | None) -> AbstractContextManager[object]:
    """The calls made inside charged to `owner`, a client key's (None: to the actor's own)."""
    if owner is None:
        return nullcontext()
    return spend_owner(team=owner.team, project=owner.project, tags=dict(owner.tags))


def _no_path(arguments: Mapping[str, Any]) -> None:
    """Refuse a document block by path: it names a file of this machine, which a client may not have read and sent."""
    where = path_block(arguments.get("messages"))
    if where is not None:
        raise Refusal(
            400,
            "invalid_request_error",
            f"{where}: a document block by path names a file of lowtide serve's machine, which a client may not have"
            " read; send the document's source (base64, text or a URL) instead.",
            param=where,
        )


async def _check(served: _Served, wire: Wire, arguments: Mapping[str, Any]) -> None:
    """Refuse the call, before anything is recorded or sent, for a model the server does not answer, or what the
    actor's provider would refuse: the request built as the actor builds it, encoded as the provider will send it,
    and its pre-send checks (which may ask the API about the model, once)."""
    refused = wire.model_refusal(str(arguments["model"]), served.models)
    if refused is not None:
        raise refused
    provider = served.actor.provider(served.mode)
    checked = served.actor.request(**arguments)
    backend = provider.batch_backend()
    if backend is not None:
        backend.codec.encode_request(checked)
    await provider.preflight(checked)


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


async def _live(actor: Actor, wire: Wire, call: ServedCall, arguments: Mapping[str, Any], request: Request) -> Response:
    """A call answered live: streamed, relayed as it is written; else the finished answer."""
    live = BatchProcessingMode.LIVE
    if call.stream:
        with _continuing(request):
            return await relayed(wire, call, actor.stream(mode=live, **arguments))
    try:
        with _continuing(request):
            response = await actor.run(mode=live, **arguments)
    except Exception as error:
        return refused(wire, failure(wire, error))
    return JSONResponse(wire.message(response, call))


def _continuing(request: Request) -> AbstractContextManager[object]:
    """While telemetry is on, the call's span continues the client's trace (its `traceparent`)."""
    if not tracing():
        return nullcontext()
    from lowtide.telemetry.propagation import continuing

    return continuing(request.headers)
