"""The Gemini API as an emulation (the `gemini` entry point of `lowtide.emulators`): Models, generateContent,
streamGenerateContent, countTokens, Files and Batches, answered in Gemini's shapes and errors (`{"error": {"code",
"message", "status", "details"}}`; a 429 with its `RetryInfo`). Its callers are claimed by the header the google-genai
SDK sends its key in (`x-goog-api-key`), so `/v1/models`, `/v1/files` and `/v1/batches`, which Anthropic's and
OpenAI's clients call too, reach it. Its handle in tests is `emulator.emulation(GeminiEmulation)`: `files`,
`batches`, `created_custom_ids`, `created_batches`, `fail_batches(n)`, `webhooks` (its batch webhooks, sent as
the Gemini API sends them to a project's endpoints: `lowtide emulator --webhook gemini=URL`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from starlette.datastructures import Headers
from starlette.requests import Request

from lowtide.emulator.core.account import SectionedEmulation
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.webhooks import WebhookSender
from lowtide.emulator.gemini.backend import GeminiBackend
from lowtide.emulator.gemini.batch_routes import file_and_batch_routes
from lowtide.emulator.gemini.batches import GeminiBatchStore
from lowtide.emulator.gemini.errors import GoogleErrors
from lowtide.emulator.gemini.files import GeminiFileStore
from lowtide.emulator.gemini.http import authenticate, is_gemini_caller
from lowtide.emulator.gemini.routes import VERSIONS, gemini_routes
from lowtide.emulator.gemini.state import GeminiStateCodec, restore

__all__ = ["GeminiEmulation"]


class GeminiEmulation(GoogleErrors, SectionedEmulation[GeminiBackend]):
    """The emulated Gemini API account (`emulator.emulation(GeminiEmulation)`)."""

    name = "gemini"
    route_names = (
        "gemini.models.list",
        "gemini.models.get",
        "gemini.generate_content",
        "gemini.stream_generate_content",
        "gemini.count_tokens",
        "gemini.files.upload",
        "gemini.files.download",
        "gemini.files.list",
        "gemini.files.get",
        "gemini.files.delete",
        "gemini.batches.create",
        "gemini.batches.cancel",
        "gemini.batches.list",
        "gemini.batches.get",
        "gemini.batches.delete",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared, GeminiBackend(shared), encode=GeminiStateCodec().encode, decode=restore)

    @property
    def files(self) -> GeminiFileStore:
        return self.backend.files

    @property
    def batches(self) -> GeminiBatchStore:
        return self.backend.batches

    @property
    def webhooks(self) -> WebhookSender:
        """The batch webhooks it sends: `endpoints`, `sent` (deliveries answered 2xx), `drop_next(n)` (a fault)."""
        return self.backend.webhooks

    webhook_secret_env: ClassVar[str | None] = "GEMINI_WEBHOOK_SECRET"

    def add_webhook(self, url: str, secret: str) -> None:
        self.backend.webhooks.add(url, secret)

    def started(self) -> None:
        self.backend.webhooks.resume()  # the jobs restored open, whose webhooks wait for their end

    def webhook_jwks(self) -> Mapping[str, object]:
        """The public key of the RS256 tokens its jobs' own webhooks (`webhook_config`) are signed with."""
        return self.backend.webhooks.tokens.jwks()

    def stats(self) -> Mapping[str, object]:
        return {**super().stats(), "gemini_webhooks_sent": self.backend.webhooks.sent}

    def fail_batches(self, times: int = 1, message: str | None = None) -> None:
        """Make the next `times` jobs created end `BATCH_STATE_FAILED` (an internal error, or `message`) when their
        pending time ends."""
        self.backend.fail_batches(times, message)

    def routes(self) -> Sequence[RouteRow]:
        return [*file_and_batch_routes(self.backend, VERSIONS), *gemini_routes(self.shared)]

    def begin(self, request: Request) -> None:
        self.started()  # in-process (an ASGI transport), no lifespan runs: the first call starts what waits
        if request.url.path.startswith("/upload/") and "upload_id" in request.query_params:
            return  # a resumable upload's later calls carry no key: the session's upload_id is their credential
        authenticate(request, self.shared.settings.api_keys)

    def claims(self, headers: Headers) -> bool:
        return is_gemini_caller(headers)

    def batch_count(self) -> int:
        return len(self.backend.batches)
