"""The OpenAI API as an emulation (the `openai` entry point of `lowtide.emulators`): Files, Batches, Responses, Chat
Completions, Embeddings and Models, answered in OpenAI's shapes and errors, every answer with its `x-request-id`.
OpenAI's clients send nothing of their own (a bearer key, which other APIs' clients send too), so on a path other
APIs share it gets the calls no other emulation claims (`default_caller`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from starlette.requests import Request
from starlette.responses import Response

from lowtide.emulator.core.emulation import ErrorHandler, RouteRow, Shared
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import request_id
from lowtide.emulator.core.webhooks import WebhookSender
from lowtide.emulator.openai.account import OpenAIAccountEmulation
from lowtide.emulator.openai.backend import OpenAIBackend, OpenAILimits
from lowtide.emulator.openai.batches import OpenAIBatchStore
from lowtide.emulator.openai.errors import OpenAIError, from_api_error
from lowtide.emulator.openai.http import authenticate, openai_error_response
from lowtide.emulator.openai.routes import openai_routes

__all__ = ["OpenAIEmulation"]


class OpenAIEmulation(OpenAIAccountEmulation[OpenAIBackend]):
    """The emulated OpenAI account (`Emulator.openai`): its `limits` (lower them to test OpenAI's without 200 MB
    files), `created_custom_ids` and `created_batches` (the exactly-once evidence, as for Anthropic batches), `files`
    and `batches`.

    `created_custom_ids` counts, for every batch created whose input file passed validation, one per custom id in it
    (a request sent in two batches counts 2); `created_batches` counts every batch created."""

    name = "openai"
    route_names = (
        "openai.files.create",
        "openai.files.retrieve",
        "openai.files.list",
        "openai.files.delete",
        "openai.files.content",
        "openai.batches.create",
        "openai.batches.retrieve",
        "openai.batches.list",
        "openai.batches.cancel",
        "openai.responses.create",
        "openai.responses.input_tokens",
        "openai.chat.completions.create",
        "openai.embeddings.create",
        "openai.models.list",
        "openai.models.retrieve",
        "openai.models.delete",
        "openai.responses.retrieve",
        "openai.responses.delete",
        "openai.responses.cancel",
        "openai.responses.input_items",
        "openai.responses.compact",
        "openai.chat.completions.list",
        "openai.chat.completions.retrieve",
        "openai.chat.completions.update",
        "openai.chat.completions.delete",
        "openai.chat.completions.messages",
    )
    default_caller = True

    def __init__(self, shared: Shared, backend: OpenAIBackend | None = None) -> None:
        """`backend`: an account built on OpenAI's (an OpenAI-compatible API's dialect); by default OpenAI's own."""
        made = backend or OpenAIBackend(shared.clock, shared.settings, shared.faults, shared.cache)
        super().__init__(shared, made)

    @property
    def limits(self) -> OpenAILimits:
        return self.backend.limits

    @property
    def batches(self) -> OpenAIBatchStore:
        return self.backend.batches

    @property
    def webhooks(self) -> WebhookSender:
        """The batch webhooks it sends: `endpoints`, `sent` (deliveries answered 2xx), `drop_next(n)` (a fault)."""
        return self.backend.webhooks

    webhook_secret_env: ClassVar[str | None] = "OPENAI_WEBHOOK_SECRET"

    def add_webhook(self, url: str, secret: str) -> None:
        self.backend.webhooks.add(url, secret)

    def add_fine_tuned_model(self, base: str, *, suffix: str = "custom", organization: str = "lowtide") -> str:
        """A fine-tuned model of `base` on the account (`ft:<base>:<organization>:<suffix>:<id>`), as a fine-tuning
        job would leave it: listed, described and deletable through the Models API; its id."""
        return self.backend.add_fine_tuned_model(base, suffix=suffix, organization=organization)

    # -- the emulation ---------------------------------------------------------------------------------------------

    def routes(self) -> Sequence[RouteRow]:
        return openai_routes(self.shared, self.backend)

    def begin(self, request: Request) -> None:
        authenticate(request, self.shared.settings.api_keys)

    def translate(self, error: ApiError) -> Exception:
        return from_api_error(error)

    def answer_headers(self, request: Request) -> dict[str, str]:
        return {"x-request-id": request_id(request)}

    def error_response(self, request: Request, error: Exception) -> Response:
        return openai_error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {OpenAIError: openai_error_response}

    def stats(self) -> Mapping[str, object]:
        return {**super().stats(), "openai_webhooks_sent": self.backend.webhooks.sent}
