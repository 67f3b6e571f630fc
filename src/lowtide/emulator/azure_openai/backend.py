"""The Azure OpenAI resource's state and operations: OpenAI's backend (files, batches, chat completions, on the
emulator's clock, settings, faults and prompt cache), with Azure's deployments (a name -> the model it serves), its
batch url (`/chat/completions`), its limits (100,000 requests and 200 MB a batch file, 500 files a resource), and its
batch requests each naming a deployment, read as the model that deployment serves."""

from __future__ import annotations

from collections.abc import Mapping

from lowtide.core.clock import Clock
from lowtide.emulator.core.cache import PromptCache
from lowtide.emulator.core.faults import Faults
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.settings import Settings
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.openai.batch_input import BatchInput
from lowtide.emulator.openai.batches import BatchStatus, OpenAIBatch
from lowtide.emulator.openai.catalogue import CATALOGUE
from lowtide.emulator.openai.errors import OpenAIError

__all__ = ["BATCH_URL", "MAX_FILES", "AzureBackend", "default_deployments"]

BATCH_URL = "/chat/completions"
MAX_FILES = 500
MAX_BATCH_REQUESTS = 100_000


def default_deployments() -> dict[str, str]:
    """A deployment of every text model OpenAI's emulation serves, named after its model (as deployments often are)."""
    return {model.id: model.id for model in CATALOGUE if model.kind == "text"}


class AzureBackend(OpenAIBackend):
    """Files, batches, deployments and exactly-once counters of the emulated Azure OpenAI resource."""

    batch_endpoints: Mapping[str, str] = {BATCH_URL: "/v1/chat/completions"}
    # Azure aims at 24 hours and lets a longer job run on; a test that wants Azure's `expired` sets a window.
    batch_expiry: float | None = None

    def __init__(self, clock: Clock, settings: Settings, faults: Faults, cache: PromptCache) -> None:
        super().__init__(clock, settings, faults, cache)
        self.limits.max_batch_requests = MAX_BATCH_REQUESTS
        self.max_files = MAX_FILES
        self.deployments: dict[str, str] = default_deployments()

    def upload(self, filename: str, content: bytes, purpose: object, expires_after: int | None) -> JsonObject:
        held = len(self.files.uploaded())
        if held >= self.max_files:
            raise OpenAIError(
                400,
                f"The resource holds {held} files, the most it may ({self.max_files}); delete some to upload more.",
                code="FileLimitExceeded",
            )
        return super().upload(filename, content, purpose, expires_after)

    def _render(self, batch: OpenAIBatch, *, status: BatchStatus | None = None) -> JsonObject:
        # Its requests are answered by Chat Completions; the batch shows the url it was created with, Azure's.
        return {**super()._render(batch, status=status), "endpoint": BATCH_URL}

    def prepare_requests(self, found: BatchInput) -> None:
        """Each request names a deployment: read as the model it serves; a deployment the resource lacks fails the
        batch, as Azure validates it."""
        if found.model is None:
            return
        model = self.deployments.get(found.model)
        if model is None:
            found.fail(
                "model_not_found",
                f"The provided model deployment '{found.model}' does not exist in the Azure OpenAI resource.",
                param="body.model",
            )
            found.requests = []
            found.model = None
            return
        found.requests = [(custom_id, {**body, "model": model}) for custom_id, body in found.requests]
        found.model = model
