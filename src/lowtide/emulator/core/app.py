"""The Starlette application, composed of the emulations and the admin routes behind the request-id middleware, every
error in the shape of the API its caller speaks.

A path one emulation serves is routed to it. A path several serve (`/v1/files`, `/v1/models`) is one route whose
calls go to the emulation that claims the caller's headers, else to the default caller's (`caller_of`): as the real
services, which share those paths, tell their clients apart. Routing errors and crashes are answered by the same
choice among every emulation."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from lowtide.emulator.core.admin import admin_routes
from lowtide.emulator.core.emulation import Emulation, EmulationError, ErrorHandler, Shared
from lowtide.emulator.core.endpoints import endpoint
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import RequestIdMiddleware, api_error_response, error_response

__all__ = ["build_app", "caller_of"]


def build_app(shared: Shared, emulations: Sequence[Emulation]) -> Starlette:
    handlers: dict[type[Exception], ErrorHandler] = {ApiError: api_error_response}
    for emulation in emulations:
        handlers.update(emulation.exception_handlers())

    def by_caller(request: Request, error: Exception) -> Response:
        # Routing errors and crashes reach no route's own handling: each caller gets its API's shape.
        chosen = caller_of(emulations, request.headers)
        return chosen.error_response(request, error) if chosen is not None else error_response(request, error)

    exception_handlers = {kind: _on_loop(handler) for kind, handler in handlers.items()}
    exception_handlers[HTTPException] = _on_loop(by_caller)
    # Starlette still re-raises after answering, so a bug fails the test that hit it.
    exception_handlers[Exception] = _on_loop(by_caller)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        for emulation in emulations:
            emulation.started()
        yield

    app = Starlette(
        routes=[*_routes(emulations), *admin_routes(shared)],
        middleware=[Middleware(RequestIdMiddleware)],
        exception_handlers=exception_handlers,
        lifespan=lifespan,
    )
    # Only a call no route matched, not even by its path alone (a wrong method stays a 405), reaches the fallbacks.
    app.router.default = _Fallbacks(emulations)
    return app


def caller_of(emulations: Sequence[Emulation], headers: Headers) -> Emulation | None:
    """The emulation whose client sent `headers`: the first that claims them, else the first default caller."""
    claiming = next((emulation for emulation in emulations if emulation.claims(headers)), None)
    return claiming or next((emulation for emulation in emulations if emulation.default_caller), None)


def _routes(emulations: Sequence[Emulation]) -> list[BaseRoute]:
    """Each emulation's routes, by path in the order they come; a path several emulations serve, one route that
    sends each call to its caller's emulation, after the others."""
    by_path: dict[str, dict[Emulation, list[BaseRoute]]] = {}
    methods: dict[str, set[str]] = {}
    for emulation in emulations:
        named = set(emulation.route_names)
        for path, method, name, handler in emulation.routes():
            if name not in named:
                raise EmulationError(f"the emulation {emulation.name!r} serves {name!r}, not in its route_names")
            route = Route(path, endpoint(emulation, name, handler), methods=[method])
            by_path.setdefault(path, {}).setdefault(emulation, []).append(route)
            methods.setdefault(path, set()).add(method)
    routes: list[BaseRoute] = []
    shared: list[BaseRoute] = []
    for path, serving in by_path.items():
        if len(serving) == 1:
            routes.extend(*serving.values())
        else:
            # Only the methods its emulations serve there: a call of another method goes on to the routes after it
            # (Gemini's `POST /v1/models/{model}:generateContent` also matches `/v1/models/{model_id}`).
            apps = _ByCaller({emulation: Router(own) for emulation, own in serving.items()})
            shared.append(Route(path, apps, methods=sorted(methods[path])))
    # The shared paths last: a path one emulation serves is matched before a shared one it overlaps (Gemini's
    # `/v1/files/{file_id}:download` would otherwise be taken for `/v1/files/{file_id}` with an id ending ":download").
    return [*routes, *shared]


class _Fallbacks:
    """The emulations' catch-all routes (`Emulation.fallback_routes`), for a call no route matched: the first
    emulation that takes the call (`Emulation.takes_fallback`) serves it; a call none takes gets the 404 of an unknown
    route, in its caller's shape."""

    def __init__(self, emulations: Sequence[Emulation]) -> None:
        self._routers: list[tuple[Emulation, Router]] = []
        for emulation in emulations:
            named = set(emulation.route_names)
            routes: list[BaseRoute] = []
            for path, method, name, handler in emulation.fallback_routes():
                if name not in named:
                    raise EmulationError(f"the emulation {emulation.name!r} serves {name!r}, not in its route_names")
                routes.append(Route(path, endpoint(emulation, name, handler), methods=[method]))
            if routes:
                self._routers.append((emulation, Router(routes)))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        path = str(scope.get("path", ""))
        for emulation, router in self._routers:
            if emulation.takes_fallback(headers, path):
                await router(scope, receive, send)
                return
        raise HTTPException(404)


class _ByCaller:
    """An ASGI app sending each call to the app of its caller's emulation; a caller of none of them gets the 404 of
    an unknown route."""

    def __init__(self, apps: dict[Emulation, ASGIApp]) -> None:
        self._apps = apps
        self._emulations = list(apps)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = caller_of(self._emulations, Headers(scope=scope))
        if chosen is None:
            raise HTTPException(404)
        await self._apps[chosen](scope, receive, send)


def _on_loop(handler: Callable[[Request, Exception], Response]) -> Callable[[Request, Exception], Awaitable[Response]]:
    """`handler` as a coroutine: Starlette runs a plain function in a worker thread, which a virtual clock (waiting
    for the event loop to go idle) cannot see, and which costs a thread hop for every error answered."""

    async def handle(request: Request, error: Exception) -> Response:
        return handler(request, error)

    return handle
