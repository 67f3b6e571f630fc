"""The Anthropic API as an emulation (the `anthropic` entry point of `lowtide.emulators`): Messages, token counting,
Message Batches, Files and Models, answered in the Anthropic API's shapes, errors and headers. Its callers are told
from other APIs' by `x-api-key` or `anthropic-version`, which only Anthropic's SDK sends."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request

from lowtide.emulator.anthropic.backend import AnthropicBackend, AnthropicLimits
from lowtide.emulator.anthropic.batches import BatchSnapshot, BatchStore
from lowtide.emulator.anthropic.catalogue import ModelCatalogue
from lowtide.emulator.anthropic.filestore import FileStore
from lowtide.emulator.anthropic.http import authenticate, is_anthropic_caller, require_version
from lowtide.emulator.anthropic.routes import anthropic_routes
from lowtide.emulator.anthropic.state import AnthropicSaved, AnthropicStateCodec
from lowtide.emulator.core.account import AccountEmulation
from lowtide.emulator.core.emulation import RouteRow, Shared
from lowtide.emulator.core.errors import ApiError

__all__ = ["ACCOUNT_HEADERS", "AnthropicEmulation"]

# The emulated account's organization and workspace, which the API names on every response (as recorded).
ACCOUNT_HEADERS = {
    "anthropic-organization-id": str(uuid.uuid5(uuid.NAMESPACE_URL, "lowtide-emulator:organization")),
    "anthropic-workspace-id": str(uuid.uuid5(uuid.NAMESPACE_URL, "lowtide-emulator:workspace")),
}


class AnthropicEmulation(AccountEmulation[AnthropicBackend]):
    """The emulated Anthropic account (`Emulator.anthropic`): its batches, files, models and counters.

    `created_custom_ids` counts, for every batch created (committed, whether or not its creator heard back), one per
    custom_id in it: a request sent in two batches counts 2; deleting a batch does not take its counts back.
    `live_answers` counts live Messages answers delivered, one per distinct request body (without `stream`), and
    `abandoned_answers` those whose caller had disconnected before they were ready."""

    name = "anthropic"
    route_names = (
        "messages.create",
        "messages.count_tokens",
        "batches.create",
        "batches.retrieve",
        "batches.list",
        "batches.cancel",
        "batches.delete",
        "batches.results",
        "files.upload",
        "files.list",
        "files.retrieve_metadata",
        "files.download",
        "files.delete",
        "models.list",
        "models.retrieve",
    )

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared, AnthropicBackend(shared))
        self._state = AnthropicStateCodec()

    @property
    def limits(self) -> AnthropicLimits:
        return self.backend.limits

    @property
    def live_answers(self) -> Counter[str]:
        return self.backend.live_answers

    @property
    def abandoned_answers(self) -> int:
        return self.backend.abandoned_answers

    @property
    def batches(self) -> BatchStore:
        return self.backend.batches

    @property
    def files(self) -> FileStore:
        return self.backend.files

    @property
    def models(self) -> ModelCatalogue:
        return self.backend.models

    def batch(self, batch_id: str) -> BatchSnapshot:
        """A stored batch as of now; KeyError if unknown."""
        return self.backend.snapshot(batch_id)

    def add_file(
        self, content: bytes, *, filename: str, mime_type: str | None = None, downloadable: bool = True
    ) -> str:
        """Store a file as a tool would write it, and return its id (see `Emulator.add_file`)."""
        stored = self.backend.files.add(
            content, filename=filename, declared_type=mime_type, now=self.shared.clock.now(), downloadable=downloadable
        )
        self.shared.save()
        return stored.id

    # -- the emulation ---------------------------------------------------------------------------------------------

    def routes(self) -> Sequence[RouteRow]:
        return anthropic_routes(self.backend)

    def begin(self, request: Request) -> None:
        authenticate(request, self.shared.settings.api_keys)
        require_version(request)

    def claims(self, headers: Headers) -> bool:
        return is_anthropic_caller(headers)

    def translate(self, error: ApiError) -> Exception:
        return ApiError(
            error.error_type,
            error.message,
            status=error.status,
            headers={**ACCOUNT_HEADERS, **error.headers},
            details=error.details,
        )

    def answer_headers(self, request: Request) -> dict[str, str]:
        return dict(ACCOUNT_HEADERS)

    def stats(self) -> Mapping[str, object]:
        backend = self.backend
        return {
            "batches": len(backend.batches),
            "created_batches": backend.created_batches,
            "created_custom_ids": dict(backend.created_custom_ids),
            "live_answers": dict(backend.live_answers),
            "abandoned_answers": backend.abandoned_answers,
        }

    def saved(self) -> Mapping[str, str]:
        backend = self.backend
        return self._state.encode(
            batches=backend.batches.oldest_first(),
            files=backend.files.oldest_first(),
            created_batches=backend.created_batches,
            created_custom_ids=dict(backend.created_custom_ids),
        )

    def restore(self, document: Mapping[str, Any]) -> None:
        self.backend.restore(AnthropicSaved(document))
