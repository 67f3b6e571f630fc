"""`OpenAIAccountEmulation`: an emulation whose account is OpenAI's backend or one built on it (OpenAI's own, Azure's
resource, an OpenAI-compatible API's): its limits from the settings, its files, and its state file section in OpenAI's
form."""

from __future__ import annotations

from typing import TypeVar

from lowtide.emulator.core.account import SectionedEmulation
from lowtide.emulator.core.emulation import Shared
from lowtide.emulator.openai.backend import OpenAIBackend
from lowtide.emulator.openai.files import FileStore
from lowtide.emulator.openai.state import OpenAIStateCodec, restore

__all__ = ["OpenAIAccountEmulation"]

Backend = TypeVar("Backend", bound=OpenAIBackend)


class OpenAIAccountEmulation(SectionedEmulation[Backend]):
    """An emulation over `backend`, an `OpenAIBackend`: `files`, and the exactly-once evidence."""

    def __init__(self, shared: Shared, backend: Backend) -> None:
        super().__init__(shared, backend, encode=OpenAIStateCodec().encode, decode=restore)
        if shared.settings.max_request_bytes is not None:
            backend.limits.max_request_bytes = shared.settings.max_request_bytes

    @property
    def files(self) -> FileStore:
        return self.backend.files

    def batch_count(self) -> int:
        return len(self.backend.batches)
