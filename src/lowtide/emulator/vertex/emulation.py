"""Vertex AI as an emulation (the `vertex` entry point of `lowtide.emulators`): Gemini's models under a project and
a location (`models.py`), Claude's (`claude.py`: `rawPredict`, `streamRawPredict`), answered in Google's error shape
(`{"error": {"code", "message", "status"}}`), every call asked for a bearer token (any: the emulator checks none, as
an anonymous caller's is `lowtide-anonymous`). Its paths (`/v1beta1/projects/...`, `/v1beta1/publishers/...`) are its
own, so it claims no caller. Beside it, on the same port, the Cloud Storage JSON API its batches read and write
(`storage.py`: google-cloud-storage reaches it through `STORAGE_EMULATOR_HOST`, sending no credentials) and the batch
prediction jobs (`jobs.py`). Route names start `vertex.`, so faults armed for one reach Vertex's callers alone. Its
handle in tests is `emulator.emulation(VertexEmulation)`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.requests import Request

from lowtide.emulator.anthropic.backend import AnthropicBackend
from lowtide.emulator.core.emulation import Emulation, RouteRow, Shared
from lowtide.emulator.gemini.errors import GeminiError, GoogleErrors
from lowtide.emulator.vertex.claude import claude_routes
from lowtide.emulator.vertex.jobs import VertexJobs, job_routes
from lowtide.emulator.vertex.models import bearer, vertex_model_routes
from lowtide.emulator.vertex.storage import ObjectStore, storage_routes

__all__ = ["VertexEmulation"]

_STORAGE = ("/storage/", "/upload/storage/", "/download/storage/")

_NO_TOKEN = (
    "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other "
    "valid authentication credential."
)


class VertexEmulation(GoogleErrors, Emulation):
    """The emulated Vertex AI project (`emulator.emulation(VertexEmulation)`)."""

    name = "vertex"
    route_names = (
        "vertex.generate_content",
        "vertex.stream_generate_content",
        "vertex.count_tokens",
        "vertex.models.get",
        "vertex.models.list",
        "vertex.batches.create",
        "vertex.batches.list",
        "vertex.batches.cancel",
        "vertex.batches.get",
        "vertex.batches.delete",
        "vertex.storage.objects.insert",
        "vertex.storage.objects.get",
        "vertex.storage.objects.list",
        "vertex.storage.objects.delete",
        "vertex.claude.raw_predict",
        "vertex.claude.stream_raw_predict",
        "vertex.claude.count_tokens",
        "vertex.claude.models.get",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.storage = ObjectStore()
        """The project's Cloud Storage buckets (`buckets`: bucket -> object name -> object)."""
        self.claude = AnthropicBackend(shared)
        """Claude's models on Vertex AI (`claude.py`): the Anthropic emulation's, an account of their own."""
        self.jobs = VertexJobs(shared, self.storage, self.claude)
        """Its batch prediction jobs (`jobs`, `created_custom_ids`, `created_batches`, `fail_jobs(n)`)."""

    def routes(self) -> Sequence[RouteRow]:
        return [
            *job_routes(self.jobs),
            *claude_routes(self.claude),
            *vertex_model_routes(self.shared),
            *storage_routes(self.storage, self._now),
        ]

    def _now(self) -> float:
        return self.shared.clock.now()

    def stats(self) -> Mapping[str, object]:
        return {
            "vertex_batches": len(self.jobs.jobs),
            "vertex_created_batches": self.jobs.created_batches,
            "vertex_created_custom_ids": dict(self.jobs.created_custom_ids),
            "vertex_objects": sum(len(objects) for objects in self.storage.buckets.values()),
        }

    def reset(self) -> None:
        self.claude.reset()
        self.jobs.reset()
        self.storage.reset()

    def begin(self, request: Request) -> None:
        if request.url.path.startswith(_STORAGE):
            return  # google-cloud-storage sends no credentials to an emulator (STORAGE_EMULATOR_HOST)
        if not bearer(request):
            raise GeminiError(401, _NO_TOKEN)
