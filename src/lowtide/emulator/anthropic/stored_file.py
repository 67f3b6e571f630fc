"""An uploaded file as the emulator holds it, shared by the Files API's store, batch settlements and the state file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FileLookup", "StoredFile"]


@dataclass(frozen=True, eq=False)
class StoredFile:
    """A file as the API holds it. `expires_at` (seconds on the emulator clock) is when its bytes go away."""

    id: str
    filename: str
    mime_type: str
    content: bytes
    created_at: float
    downloadable: bool = False
    expires_at: float | None = None

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at


# Finds a file by id (None when there is no such file): the live store's, or the files a settled batch used.
FileLookup = Callable[[str], StoredFile | None]
