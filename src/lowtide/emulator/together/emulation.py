"""Together AI's API as an emulation (the `together` entry point of `lowtide.emulators`): Files (the together SDK's
three-step upload), Batches (jobs) and Chat Completions, in Together's shapes, its errors OpenAI's, every answer with
its `x-request-id`. Its paths are OpenAI's (`/v1/files`, `/v1/batches`, `/v1/chat/completions`): it claims the
callers whose `User-Agent` the together SDK sends (`AsyncTogether/Python <version>`, or `Together/Python ...` from its
sync client), so that a program sets `TOGETHER_BASE_URL` alone. The address an upload puts its bytes to is
Together's own and takes no key, as a presigned storage URL. OpenAI's emulation in Together's dialect (`TOGETHER`),
with Together's uploads and batch jobs beside it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.core.json_types import json_object
from lowtide.emulator.core.emulation import ErrorHandler, RouteRow, Shared
from lowtide.emulator.core.http import request_id
from lowtide.emulator.openai.dialect_emulation import CompatEmulation
from lowtide.emulator.openai.errors import OpenAIError
from lowtide.emulator.openai.http import authenticate, openai_error_response
from lowtide.emulator.together.backend import TogetherBackend, UploadConflict, UploadRedirect
from lowtide.emulator.together.dialect import TOGETHER
from lowtide.emulator.together.routes import UPLOADS, together_routes

__all__ = ["SDK_AGENTS", "TogetherEmulation"]

SDK_AGENTS = ("AsyncTogether/Python", "Together/Python")
"""How the together SDK's clients name themselves in `User-Agent`."""


def _redirect(request: Request, error: Exception) -> Response:
    assert isinstance(error, UploadRedirect)
    headers = {"location": error.location, "x-together-file-id": error.file_id, "x-request-id": request_id(request)}
    return Response(status_code=302, headers=headers)


def _conflict(request: Request, error: Exception) -> Response:
    assert isinstance(error, UploadConflict)
    body = {
        "file_id": error.file_id,
        "error": {
            "message": f"A file with the same content already exists: {error.file_id}.",
            "type": "invalid_request_error",
            "param": "file",
            "code": "file_exists",
        },
    }
    return JSONResponse(body, status_code=409, headers={"x-request-id": request_id(request)})


class TogetherEmulation(CompatEmulation):
    """The emulated Together account (`Emulator.emulation(TogetherEmulation)`), as OpenAI's emulation has it."""

    dialect = TOGETHER
    name = TOGETHER.name
    route_names = (
        "together.files.create",
        "together.files.put",
        "together.files.preprocess",
        "together.files.list",
        "together.files.retrieve",
        "together.files.content",
        "together.files.delete",
        "together.batches.create",
        "together.batches.list",
        "together.batches.retrieve",
        "together.batches.cancel",
        "together.models.list",
        "together.chat.completions.create",
    )

    def __init__(self, shared: Shared) -> None:
        self.together = TogetherBackend(shared.clock, shared.settings, shared.faults, shared.cache)
        super().__init__(shared, self.together)

    def routes(self) -> Sequence[RouteRow]:
        return [*together_routes(self.together), *super().routes()]

    def claims(self, headers: Headers) -> bool:
        return headers.get("user-agent", "").startswith(SDK_AGENTS)

    def begin(self, request: Request) -> None:
        if not request.url.path.startswith(UPLOADS):  # a presigned address: no key
            authenticate(request, self.shared.settings.api_keys)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {OpenAIError: openai_error_response, UploadRedirect: _redirect, UploadConflict: _conflict}

    def kept(self) -> dict[str, Mapping[str, object]]:
        return {**super().kept(), "checksums": self.together.checksums, "purposes": self.together.purposes}

    def take_back(self, kept: Mapping[str, object]) -> None:
        super().take_back(kept)
        backend = self.together
        backend.checksums.update({key: str(value) for key, value in json_object(kept.get("checksums")).items()})
        backend.purposes.update({key: str(value) for key, value in json_object(kept.get("purposes")).items()})
