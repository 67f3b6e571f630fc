"""Anthropic's Files API over HTTP: `POST /v1/files` (a multipart upload), `GET /v1/files`, `GET /v1/files/{id}`,
`GET /v1/files/{id}/content` and `DELETE /v1/files/{id}`, served from the emulator's `FileStore`.

`file_routes` is the one entry point: rows of (path, method, route name, handler) that `routes.py` gives with the
API's other routes. OpenAI's Files API lives at the same paths; the real services tell their callers apart by headers
(Anthropic's `x-api-key` and `anthropic-version`, OpenAI's `Authorization: Bearer`), and so does the emulator's core,
by what each emulation claims.
"""

from __future__ import annotations

from starlette.requests import Request

from lowtide.emulator.anthropic.backend import AnthropicBackend
from lowtide.emulator.anthropic.filestore import FILES_BETA, render_file
from lowtide.emulator.anthropic.http import betas
from lowtide.emulator.anthropic.multipart import FormPart, parse_form_data
from lowtide.emulator.core.emulation import RouteRow
from lowtide.emulator.core.errors import ApiError, invalid_request
from lowtide.emulator.core.http import Answer, Streamed, read_body

__all__ = ["file_routes"]

# Room for the form's own lines (boundaries, part headers, other fields) around the file's bytes.
_FORM_OVERHEAD = 64 * 1024
_UPLOAD_FIELDS = ("file", "expires_in_seconds")


def file_routes(backend: AnthropicBackend) -> list[RouteRow]:
    """The Files API's routes as (path, method, route name, handler); route names follow the SDK's methods."""
    files = _Files(backend)
    one = "/v1/files/{file_id}"
    return [
        ("/v1/files", "POST", "files.upload", files.upload),
        ("/v1/files", "GET", "files.list", files.list_files),
        (one, "GET", "files.retrieve_metadata", files.retrieve_metadata),
        (f"{one}/content", "GET", "files.download", files.download),
        (one, "DELETE", "files.delete", files.delete),
    ]


def _beta(request: Request) -> bool:
    """Whether the caller asked for the beta's shapes, which the API keeps serving to those who send its header."""
    return FILES_BETA in betas(request)


class _Files:
    def __init__(self, backend: AnthropicBackend) -> None:
        self._backend = backend

    async def upload(self, request: Request) -> Answer:
        limit = self._backend.limits.max_file_bytes
        body = await read_body(request, limit + _FORM_OVERHEAD)
        try:
            parts = parse_form_data(request.headers.get("content-type", ""), body)
        except ValueError as error:
            raise invalid_request(f"Invalid multipart/form-data body: {error}.") from None
        fields: dict[str, FormPart] = {}
        for part in parts:
            if part.name not in _UPLOAD_FIELDS:
                raise invalid_request(f"{part.name}: Extra inputs are not permitted")
            fields[part.name] = part
        upload = fields.get("file")
        if upload is None:
            raise invalid_request("file: Field required")
        if len(upload.data) > limit:
            raise ApiError("request_too_large", f"File exceeds the maximum allowed size of {limit} bytes.")
        expiry = fields.get("expires_in_seconds")
        stored = self._backend.files.add(
            upload.data,
            filename=upload.filename,
            declared_type=upload.content_type,
            now=self._backend.clock.now(),
            expires_in_seconds=expiry.data.decode("utf-8", errors="replace") if expiry is not None else None,
        )
        return render_file(stored, beta=_beta(request))

    async def list_files(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.files.listing(
            beta=_beta(request),
            limit=query.get("limit"),
            before_id=query.get("before_id"),
            after_id=query.get("after_id"),
            page=query.get("page"),
            # The SDK sends a list as `ids[]=a&ids[]=b`.
            ids=[*query.getlist("ids[]"), *query.getlist("ids")],
        )

    async def retrieve_metadata(self, request: Request) -> Answer:
        return render_file(self._backend.files.find(request.path_params["file_id"]), beta=_beta(request))

    async def download(self, request: Request) -> Answer:
        file = self._backend.files.download(request.path_params["file_id"], self._backend.clock.now())
        # The stored type exactly, without the charset Starlette would add to a text type.
        return Streamed([file.content], file.mime_type, headers={"content-type": file.mime_type}, gather=True)

    async def delete(self, request: Request) -> Answer:
        return self._backend.files.delete(request.path_params["file_id"])
