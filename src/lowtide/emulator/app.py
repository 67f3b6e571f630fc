"""The Starlette application: API and admin routes behind the request-id middleware, with every error in the
API's JSON shape."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware

from lowtide.emulator.admin import admin_routes
from lowtide.emulator.api import api_routes
from lowtide.emulator.backend import Backend
from lowtide.emulator.errors import ApiError
from lowtide.emulator.web import RequestIdMiddleware, api_error_response, http_error_response, server_error_response

__all__ = ["build_app"]


def build_app(backend: Backend) -> Starlette:
    return Starlette(
        routes=[*api_routes(backend), *admin_routes(backend)],
        middleware=[Middleware(RequestIdMiddleware)],
        exception_handlers={
            ApiError: api_error_response,
            HTTPException: http_error_response,
            # Starlette still re-raises after answering, so a bug fails the test that hit it.
            Exception: server_error_response,
        },
    )
