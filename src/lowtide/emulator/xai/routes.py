"""xAI's batch routes, as rows of (path, method, route name, handler) under route names starting `xai.`: create a
named batch, add requests to it, read it, list them, its results, its requests, cancel it (`:cancel`, as xAI's REST
reference writes it). Chat completions and models are OpenAI's routes under `/xai`, served by `CompatEmulation`."""

from __future__ import annotations

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, read_json
from lowtide.emulator.xai.backend import XaiBackend

__all__ = ["xai_routes"]

_BODY_BYTES = 100 * 1024 * 1024


def xai_routes(backend: XaiBackend) -> list[RouteRow]:
    api = _XaiApi(backend)
    batch = "/xai/v1/batches/{batch_id}"
    return [
        ("/xai/v1/batches", "POST", "xai.batches.create", api.create),
        ("/xai/v1/batches", "GET", "xai.batches.list", api.list),
        (f"{batch}/requests", "POST", "xai.batches.add", api.add),
        (f"{batch}/requests", "GET", "xai.batches.requests", api.requests),
        (f"{batch}/results", "GET", "xai.batches.results", api.results),
        (batch + ":cancel", "POST", "xai.batches.cancel", api.cancel),
        (batch, "GET", "xai.batches.retrieve", api.retrieve),
    ]


class _XaiApi:
    def __init__(self, backend: XaiBackend) -> None:
        self._xai = backend

    async def create(self, request: Request) -> Answer:
        return self._xai.create_named(await read_json(request, _BODY_BYTES))

    async def list(self, request: Request) -> Answer:
        return self._xai.list_named(dict(request.query_params))

    async def add(self, request: Request) -> Answer:
        return self._xai.add_requests(request.path_params["batch_id"], await read_json(request, _BODY_BYTES))

    async def requests(self, request: Request) -> Answer:
        return self._xai.requests_of(request.path_params["batch_id"], dict(request.query_params))

    async def results(self, request: Request) -> Answer:
        return self._xai.results(request.path_params["batch_id"], dict(request.query_params))

    async def cancel(self, request: Request) -> Answer:
        return self._xai.cancel_named(request.path_params["batch_id"])

    async def retrieve(self, request: Request) -> Answer:
        return self._xai.show(request.path_params["batch_id"])
