"""Mistral's API as an emulation (the `mistral` entry point of `lowtide.emulators`): Models, Chat Completions, Files
and Batch jobs, answered in Mistral's shapes and errors. Its callers are claimed by the `user-agent` the mistralai SDK
sends (`mistral-client-python/...`), so that `/v1/models`, `/v1/files` and `/v1/chat/completions`, which OpenAI's
clients call too, reach it; a program sets only the SDK's `server_url` (lowtide reads `MISTRAL_SERVER_URL`). Its
handle in tests is `emulator.emulation(MistralEmulation)`: `files`, `jobs`, `created_custom_ids`, `created_batches`,
`fail_jobs(n)`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from lowtide.emulator.core.account import SectionedEmulation
from lowtide.emulator.core.emulation import ErrorHandler, RouteRow, Shared
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import api_key
from lowtide.emulator.mistral.backend import MistralBackend
from lowtide.emulator.mistral.errors import MistralError, from_api_error, mistral_error_response
from lowtide.emulator.mistral.files import MistralFileStore
from lowtide.emulator.mistral.jobs import MistralJob
from lowtide.emulator.mistral.routes import mistral_routes
from lowtide.emulator.mistral.state import encode, restore

__all__ = ["USER_AGENT_PREFIX", "MistralEmulation"]

USER_AGENT_PREFIX = "mistral-client-"
"""How the mistralai SDKs name themselves in `user-agent` (`mistral-client-python/3.7.0`)."""


class MistralEmulation(SectionedEmulation[MistralBackend]):
    """The emulated Mistral account (`emulator.emulation(MistralEmulation)`)."""

    name = "mistral"
    route_names = (
        "mistral.models.list",
        "mistral.models.get",
        "mistral.chat.completions",
        "mistral.files.upload",
        "mistral.files.list",
        "mistral.files.get",
        "mistral.files.delete",
        "mistral.files.content",
        "mistral.batches.create",
        "mistral.batches.list",
        "mistral.batches.get",
        "mistral.batches.cancel",
        "mistral.batches.delete",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared, MistralBackend(shared), encode=encode, decode=restore)

    @property
    def files(self) -> MistralFileStore:
        return self.backend.files

    @property
    def jobs(self) -> dict[str, MistralJob]:
        return self.backend.jobs

    def fail_jobs(self, times: int = 1, message: str = "Internal error while processing the batch job.") -> None:
        """Make the next `times` jobs created end `FAILED` (with `message` in their `errors`) when their queued time
        ends."""
        self.backend.fail_jobs(times, message)

    def routes(self) -> Sequence[RouteRow]:
        return mistral_routes(self.shared, self.backend)

    def begin(self, request: Request) -> None:
        key = api_key(request)
        keys = self.shared.settings.api_keys
        if not key or (keys is not None and key not in keys):
            raise MistralError(401, "Unauthorized")

    def claims(self, headers: Headers) -> bool:
        return headers.get("user-agent", "").startswith(USER_AGENT_PREFIX)

    def translate(self, error: ApiError) -> Exception:
        return from_api_error(error)

    def error_response(self, request: Request, error: Exception) -> Response:
        return mistral_error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {MistralError: mistral_error_response}

    def batch_count(self) -> int:
        return len(self.backend.jobs)
