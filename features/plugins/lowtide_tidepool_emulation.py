"""A third-party API's emulation, as a plugin package would ship it beside its provider: the "tidepool" API, whose
clients send `x-tidepool-key`. It serves `POST /v1/tides` (its own path) and `GET /v1/models`, a path the built-in
APIs serve too, answering in its own error shape. Its entry point is `lowtide_tidepool_emulation:TidepoolEmulation`
in the `lowtide.emulators` group."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.emulator import Answer, ApiError, Emulation, ErrorHandler, RouteRow, Shared, read_json

MODELS = ("tide-1", "tide-2")


class TidepoolError(Exception):
    """The tidepool API's error: a status and a reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _answer(request: Request, error: Exception) -> Response:
    if not isinstance(error, TidepoolError):
        error = TidepoolError(getattr(error, "status_code", 500), "no such tide path")
    return JSONResponse({"tidepool_error": {"status": error.status, "reason": error.reason}}, status_code=error.status)


class TidepoolEmulation(Emulation):
    name = "tidepool"
    route_names = ("tidepool.models.list", "tidepool.tides.create")

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.tides: list[str] = []

    def routes(self) -> Sequence[RouteRow]:
        return [
            ("/v1/models", "GET", "tidepool.models.list", self.list_models),
            ("/v1/tides", "POST", "tidepool.tides.create", self.create_tide),
        ]

    async def list_models(self, request: Request) -> Answer:
        return {"tidepool_models": list(MODELS)}

    async def create_tide(self, request: Request) -> Answer:
        body = await read_json(request, 1024)
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str):
            raise TidepoolError(422, "a tide needs a name")
        self.tides.append(name)
        return {"tide": name, "count": len(self.tides)}

    def begin(self, request: Request) -> None:
        if not request.headers.get("x-tidepool-key"):
            raise TidepoolError(401, "x-tidepool-key is required")

    def claims(self, headers: Headers) -> bool:
        return "x-tidepool-key" in headers

    def translate(self, error: ApiError) -> Exception:
        return TidepoolError(error.status, error.message)

    def error_response(self, request: Request, error: Exception) -> Response:
        return _answer(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {TidepoolError: _answer}

    def stats(self) -> Mapping[str, object]:
        return {"tidepool_tides": len(self.tides)}

    def reset(self) -> None:
        self.tides.clear()

    def saved(self) -> Mapping[str, str]:
        return {"tidepool": json.dumps(self.tides)} if self.tides else {}

    def restore(self, document: Mapping[str, Any]) -> None:
        self.tides = [str(name) for name in document.get("tidepool", [])]


class NotAnEmulation:
    """What a broken plugin's entry point might name instead."""
