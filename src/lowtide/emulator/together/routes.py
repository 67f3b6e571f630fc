"""Together's routes, as rows of (path, method, route name, handler) under route names starting `together.`: its
files (the upload's three steps: `POST /v1/files`, the `PUT` of the bytes to the address it redirects to, `POST
/v1/files/{id}/preprocess`), its batch jobs and its models (`GET /v1/models`, a bare list); OpenAI's chat
completions, file content and file delete are served by `CompatEmulation`. `/v1/files`, `/v1/batches`,
`/v1/models` and `/v1/chat/completions` are OpenAI's paths too: the core sends there the calls whose headers
`TogetherEmulation` claims."""

from __future__ import annotations

from typing import cast

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.http import Answer, read_json
from lowtide.emulator.together.backend import TogetherBackend

__all__ = ["UPLOADS", "together_routes"]

UPLOADS = "/together-uploads/"
"""Where an upload's bytes are put: an address the API hands out, as a presigned storage URL, taking no key."""
_BODY_BYTES = 1024 * 1024


def together_routes(backend: TogetherBackend) -> list[RouteRow]:
    api = _TogetherApi(backend)
    file = "/v1/files/{file_id}"
    batch = "/v1/batches/{batch_id}"
    return [
        ("/v1/files", "POST", "together.files.create", api.start_upload),
        (UPLOADS + "{file_id}", "PUT", "together.files.put", api.put_upload),
        (f"{file}/preprocess", "POST", "together.files.preprocess", api.preprocess),
        ("/v1/files", "GET", "together.files.list", api.list_files),
        (file, "GET", "together.files.retrieve", api.retrieve_file),
        ("/v1/batches", "POST", "together.batches.create", api.create_batch),
        ("/v1/batches", "GET", "together.batches.list", api.list_batches),
        (batch, "GET", "together.batches.retrieve", api.retrieve_batch),
        (f"{batch}/cancel", "POST", "together.batches.cancel", api.cancel_batch),
        ("/v1/models", "GET", "together.models.list", api.list_models),
    ]


class _TogetherApi:
    def __init__(self, backend: TogetherBackend) -> None:
        self._together = backend

    async def start_upload(self, request: Request) -> Answer:
        async with request.form(max_files=0, max_fields=16) as form:
            fields = {key: value for key, value in form.multi_items() if isinstance(value, str)}
        self._together.start_upload(fields, str(request.base_url))
        raise AssertionError("unreachable: an upload's first step always redirects")  # pragma: no cover

    async def put_upload(self, request: Request) -> Answer:
        return self._together.put_upload(request.path_params["file_id"], await request.body())

    async def preprocess(self, request: Request) -> Answer:
        return self._together.preprocess(request.path_params["file_id"])

    async def list_files(self, request: Request) -> Answer:
        return self._together.together_files()

    async def retrieve_file(self, request: Request) -> Answer:
        return self._together.together_file(request.path_params["file_id"])

    async def create_batch(self, request: Request) -> Answer:
        return self._together.create_job(await read_json(request, _BODY_BYTES))

    async def list_batches(self, request: Request) -> Answer:
        # Together answers a bare list (the SDK's `BatchListResponse`).
        return cast("Answer", self._together.jobs())

    async def list_models(self, request: Request) -> Answer:
        # Together answers a bare list of its models.
        return cast("Answer", self._together.dialect.catalogue.listed())

    async def retrieve_batch(self, request: Request) -> Answer:
        return self._together.job(request.path_params["batch_id"])

    async def cancel_batch(self, request: Request) -> Answer:
        return self._together.cancel_job(request.path_params["batch_id"])
