"""Mistral's routes as rows of (path, method, route name, handler) that the core serves as it serves every API's:
Models, Chat Completions (whole, or streamed as `data:` events), Files (multipart upload, list, get, delete,
content) and Batch jobs (create, list, get, cancel, delete). `/v1/models`, `/v1/files`, `/v1/files/{id}`,
`/v1/files/{id}/content` and `/v1/chat/completions` are paths OpenAI's clients use too: the core sends there the calls
`MistralEmulation` claims (the SDK's `user-agent`)."""

from __future__ import annotations

from starlette.datastructures import UploadFile
from starlette.requests import Request

from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import Answer, Headed, Streamed, api_key, read_json, request_id
from lowtide.emulator.core.ratelimits import BucketState, QuotaStyle, RateLimits
from lowtide.emulator.mistral.backend import MistralBackend, number
from lowtide.emulator.mistral.catalogue import listed, retrieved
from lowtide.emulator.mistral.chat import read_chat, stream_chunks
from lowtide.emulator.mistral.errors import MistralError, validation

__all__ = ["QUOTAS", "mistral_routes"]

_MAX_REQUEST_BYTES = 10 * 1024 * 1024
_MAX_JOB_BYTES = 512 * 1024 * 1024
_FORM_ROOM = 64 * 1024


def _buckets(limits: RateLimits) -> dict[str, int | None]:
    return {"requests": limits.rpm, "tokens": limits.tpm}


def _headers(bucket: BucketState) -> dict[str, str]:
    return {}


QUOTAS = QuotaStyle("mistral", _buckets, _headers)
"""Mistral's live rate limits: requests and tokens per minute, a 429 with `retry-after` over them."""


def mistral_routes(shared: Shared, backend: MistralBackend) -> list[RouteRow]:
    api = _Api(shared, backend)
    return [
        ("/v1/batch/jobs", "POST", "mistral.batches.create", api.create_job),
        ("/v1/batch/jobs", "GET", "mistral.batches.list", api.list_jobs),
        ("/v1/batch/jobs/{job_id}/cancel", "POST", "mistral.batches.cancel", api.cancel_job),
        ("/v1/batch/jobs/{job_id}", "GET", "mistral.batches.get", api.get_job),
        ("/v1/batch/jobs/{job_id}", "DELETE", "mistral.batches.delete", api.delete_job),
        ("/v1/files/{file_id}/content", "GET", "mistral.files.content", api.content),
        ("/v1/files", "POST", "mistral.files.upload", api.upload),
        ("/v1/files", "GET", "mistral.files.list", api.list_files),
        ("/v1/files/{file_id}", "GET", "mistral.files.get", api.get_file),
        ("/v1/files/{file_id}", "DELETE", "mistral.files.delete", api.delete_file),
        ("/v1/models", "GET", "mistral.models.list", api.list_models),
        ("/v1/models/{model_id}", "GET", "mistral.models.get", api.get_model),
        ("/v1/chat/completions", "POST", "mistral.chat.completions", api.chat),
    ]


class _Api:
    def __init__(self, shared: Shared, backend: MistralBackend) -> None:
        self._shared = shared
        self._backend = backend

    async def chat(self, request: Request) -> Answer:
        shared = self._shared
        body = await read_json(request, shared.settings.max_request_bytes or _MAX_REQUEST_BYTES)
        call = read_chat(body, shared.settings.extra_models)
        now = shared.clock.now()
        admitted = None
        if shared.settings.rate_limits.any:
            max_tokens = call.params.get("max_tokens")
            admitted = shared.quotas.admit(
                QUOTAS, api_key(request), input_tokens=call.input_tokens,
                max_tokens=max_tokens if isinstance(max_tokens, int) else 0, now=now,
            )  # fmt: skip
        completion = self._backend.chat(body, request_id(request))
        if admitted is not None:
            usage = completion["usage"]
            shared.quotas.settle(admitted, output_tokens=int(usage["completion_tokens"]), now=now)
        if call.stream:
            return Streamed(stream_chunks(completion), "text/event-stream")
        return completion

    async def list_models(self, request: Request) -> Answer:
        return listed(self._shared.settings.extra_models)

    async def get_model(self, request: Request) -> Answer:
        return retrieved(str(request.path_params["model_id"]), self._shared.settings.extra_models)

    async def upload(self, request: Request) -> Answer:
        limit = self._backend.max_file_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit + _FORM_ROOM:
            raise MistralError(413, f"File is too large: files hold at most {limit} bytes.")
        async with request.form(max_files=1, max_fields=16) as form:
            file = form.get("file")
            if not isinstance(file, UploadFile):
                raise validation(["file"], "Field required", "missing")
            content = await file.read()
            purpose = form.get("purpose")
            return self._backend.upload(
                file.filename or "file.jsonl", content, purpose if isinstance(purpose, str) else None
            )

    async def list_files(self, request: Request) -> Answer:
        query = request.query_params
        page = number(query.get("page"), 0, "page")
        size = number(query.get("page_size"), 100, "page_size")
        return self._backend.list_files(page, size, query.get("purpose"))

    async def get_file(self, request: Request) -> Answer:
        return self._backend.get_file(str(request.path_params["file_id"]))

    async def delete_file(self, request: Request) -> Answer:
        return self._backend.delete_file(str(request.path_params["file_id"]))

    async def content(self, request: Request) -> Answer:
        pieces = self._backend.download(str(request.path_params["file_id"]))
        return Streamed(pieces, "application/octet-stream")

    async def create_job(self, request: Request) -> Answer:
        limit = self._shared.settings.max_batch_bytes or _MAX_JOB_BYTES
        try:
            body = await read_json(request, limit)
        except ApiError as error:
            if error.error_type != "request_too_large":
                raise
            raise MistralError(
                413, f"The batch job's body exceeds {limit} bytes: send larger batches as a file."
            ) from None
        return Headed(self._backend.create_job(body), {})

    async def list_jobs(self, request: Request) -> Answer:
        query = request.query_params
        return self._backend.list_jobs(dict(query.items()), query.getlist("status"))

    async def get_job(self, request: Request) -> Answer:
        return self._backend.get_job(str(request.path_params["job_id"]))

    async def cancel_job(self, request: Request) -> Answer:
        return self._backend.cancel_job(str(request.path_params["job_id"]))

    async def delete_job(self, request: Request) -> Answer:
        return self._backend.delete_job(str(request.path_params["job_id"]))
