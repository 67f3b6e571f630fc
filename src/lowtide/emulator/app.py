"""The Starlette application: the Anthropic, OpenAI and admin routes behind the request-id middleware, with every
error in the shape of the API its caller speaks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from lowtide.emulator.admin import admin_routes
from lowtide.emulator.api import anthropic_file_routes, anthropic_model_routes, api_routes
from lowtide.emulator.backend import Backend
from lowtide.emulator.errors import ApiError
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.http import by_caller, openai_error_response
from lowtide.emulator.openai.routes import openai_routes
from lowtide.emulator.web import RequestIdMiddleware, api_error_response, http_error_response, server_error_response

__all__ = ["build_app"]


def build_app(backend: Backend) -> Starlette:
    return Starlette(
        routes=[
            *api_routes(backend),
            *openai_routes(
                backend,
                anthropic_files=anthropic_file_routes(backend),
                anthropic_models=anthropic_model_routes(backend),
            ),
            *admin_routes(backend),
        ],
        middleware=[Middleware(RequestIdMiddleware)],
        exception_handlers={
            ApiError: _on_loop(api_error_response),
            OpenAIError: _on_loop(openai_error_response),
            # Routing errors and crashes reach no route's own handling: each caller gets its provider's shape.
            HTTPException: _on_loop(by_caller(http_error_response, openai_error_response)),
            # Starlette still re-raises after answering, so a bug fails the test that hit it.
            Exception: _on_loop(by_caller(server_error_response, openai_error_response)),
        },
    )


def _on_loop(handler: Callable[[Request, Exception], Response]) -> Callable[[Request, Exception], Awaitable[Response]]:
    """`handler` as a coroutine: Starlette runs a plain function in a worker thread, which a virtual clock (waiting
    for the event loop to go idle) cannot see, and which costs a thread hop for every error answered."""

    async def handle(request: Request, error: Exception) -> Response:
        return handler(request, error)

    return handle
