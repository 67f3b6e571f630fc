"""The Gemini API's Files and Batch routes under both API versions (`v1beta`, and `v1`, the SDK's default), as rows
of (path, method, route name, handler) that the core serves as it serves every API's. `/v1/files`,
`/v1/files/{file_id}`, `/v1/batches` and `/v1/batches/{batch_id}` are paths other APIs use too: the core sends
there the calls `GeminiEmulation` claims (the SDK's key header), and matches the paths only Gemini serves
(`...:download`, `...:cancel`) before them."""

from __future__ import annotations

import json

from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import Answer, Headed, Streamed, read_body, read_json
from lowtide.emulator.gemini.backend import GeminiBackend, Place
from lowtide.emulator.gemini.errors import invalid_argument
from lowtide.emulator.gemini.uploads import finish_chunk, start_upload

__all__ = ["file_and_batch_routes"]

_START_BODY_BYTES = 1024 * 1024


def file_and_batch_routes(backend: GeminiBackend, versions: tuple[str, ...]) -> list[RouteRow]:
    api = _Api(backend)
    rows: list[RouteRow] = []
    for version in versions:
        file = f"/{version}/files/{{file_id}}"
        batch = f"/{version}/batches/{{batch_id}}"
        rows += [
            (f"/upload/{version}/files", "POST", "gemini.files.upload", api.upload),
            (f"{file}:download", "GET", "gemini.files.download", api.download),
            (f"/download{file}:download", "GET", "gemini.files.download", api.download),
            (f"/{version}/files", "GET", "gemini.files.list", api.list_files),
            (file, "GET", "gemini.files.get", api.get_file),
            (file, "DELETE", "gemini.files.delete", api.delete_file),
            (f"/{version}/models/{{model_id}}:batchGenerateContent", "POST", "gemini.batches.create", api.create),
            (f"{batch}:cancel", "POST", "gemini.batches.cancel", api.cancel),
            (f"/{version}/batches", "GET", "gemini.batches.list", api.list_batches),
            (batch, "GET", "gemini.batches.get", api.get_batch),
            (batch, "DELETE", "gemini.batches.delete", api.delete_batch),
        ]
    return rows


def _place(request: Request) -> Place:
    parts = request.url.path.split("/")
    version = parts[2] if parts[1] in ("upload", "download") else parts[1]
    return Place(str(request.base_url).rstrip("/"), version)


def _file_id(request: Request) -> str:
    return str(request.path_params["file_id"]).removeprefix("files/")


def _batch_id(request: Request) -> str:
    return str(request.path_params["batch_id"]).removeprefix("batches/")


class _Api:
    def __init__(self, backend: GeminiBackend) -> None:
        self._backend = backend

    async def upload(self, request: Request) -> Answer:
        backend = self._backend
        place = _place(request)
        upload_id = request.query_params.get("upload_id")
        if upload_id is None:
            raw = await read_body(request, _START_BODY_BYTES)
            try:
                body: object = json.loads(raw) if raw.strip() else None
            except ValueError:
                raise invalid_argument("Invalid JSON payload received.") from None
            url = f"{place.base}/upload/{place.version}/files"
            answer, headers = start_upload(
                backend.files, request.headers, body, url=url, max_bytes=backend.max_file_bytes
            )
        else:
            try:
                chunk = await read_body(request, backend.max_file_bytes)
            except ApiError:
                raise invalid_argument(f"The file exceeds the limit of {backend.max_file_bytes} bytes.") from None
            answer, headers = finish_chunk(
                backend.files,
                upload_id,
                request.headers,
                chunk,
                now=backend.now(),
                base=place.base,
                version=place.version,
            )
        return Headed(answer, headers)

    async def download(self, request: Request) -> Answer:
        if request.query_params.get("alt") != "media":
            raise invalid_argument("A file's content is downloaded with alt=media.")
        return Streamed(self._backend.download(_file_id(request)), "application/octet-stream", gather=True)

    async def list_files(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_files(query.get("pageSize"), query.get("pageToken"), _place(request))

    async def get_file(self, request: Request) -> Answer:
        return self._backend.get_file(_file_id(request), _place(request))

    async def delete_file(self, request: Request) -> Answer:
        return self._backend.delete_file(_file_id(request))

    async def create(self, request: Request) -> Answer:
        backend = self._backend
        limit = backend.max_inline_bytes
        try:
            body = await read_json(request, limit)
        except ApiError as error:
            if error.error_type != "request_too_large":
                raise
            raise invalid_argument(
                f"Request payload size exceeds the limit: {limit} bytes. Send larger batches as a file "
                "(inputConfig.fileName)."
            ) from None
        created = backend.create_batch(str(request.path_params["model_id"]), body, _place(request).version)
        backend.webhooks.watch(str(created["name"]).removeprefix("batches/"))
        return created

    async def list_batches(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_batches(query.get("pageSize"), query.get("pageToken"))

    async def get_batch(self, request: Request) -> Answer:
        return self._backend.get_batch(_batch_id(request))

    async def cancel(self, request: Request) -> Answer:
        batch_id = _batch_id(request)
        cancelled = self._backend.cancel_batch(batch_id)
        self._backend.webhooks.watch(batch_id)  # its end moved
        return cancelled

    async def delete_batch(self, request: Request) -> Answer:
        return self._backend.delete_batch(_batch_id(request))
