"""OpenAI files: uploaded ones (their bytes kept as sent) and the output and error files of batches (produced line
by line from the batch whenever they are read, so that a 50,000-request batch's files cost nothing until read), their
store, the `FileObject` form and list pagination (`after`, `limit`, `order`, `purpose`).

A file whose `expires_at` has passed is gone, as at OpenAI: files uploaded for `batch` expire after 30 days unless
`expires_after` says otherwise, and so do a batch's output files."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.produced import file_pieces
from lowtide.emulator.openai.errors import OpenAIError, no_such
from lowtide.emulator.openai.pages import list_limit

__all__ = ["BATCH_FILE_LIFETIME", "PURPOSES", "FileStore", "StoredFile", "file_fields", "render_file"]

BATCH_FILE_LIFETIME = 30 * 24 * 3600.0
PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
_LIST_LIMIT_MAX = 10_000


@dataclass(eq=False)
class StoredFile:
    """A file: uploaded (`content`) or produced by a batch (`lines`, read afresh each time)."""

    id: str
    filename: str
    purpose: str
    created_at: float
    expires_at: float | None
    content: bytes | None = None
    lines: Callable[[], Iterable[bytes]] | None = None
    _size: int | None = None

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = len(self.content) if self.content is not None else sum(len(line) for line in self.pieces())
        return self._size

    def pieces(self) -> Iterator[bytes]:
        return file_pieces(self.content, self.lines)

    def alive(self, now: float) -> bool:
        return self.expires_at is None or now < self.expires_at


class FileStore:
    """Files by id, in creation order."""

    def __init__(self) -> None:
        self._files: dict[str, StoredFile] = {}

    def add(self, stored: StoredFile) -> None:
        self._files[stored.id] = stored

    def get(self, file_id: str, now: float) -> StoredFile | None:
        stored = self._files.get(file_id)
        return stored if stored is not None and stored.alive(now) else None

    def find(self, file_id: str, now: float) -> StoredFile:
        stored = self.get(file_id, now)
        if stored is None:
            raise no_such("File", file_id)
        return stored

    def delete(self, file_id: str) -> None:
        del self._files[file_id]

    def uploaded(self) -> list[StoredFile]:
        """The uploaded files (not those batches produced), oldest first, for the state file."""
        return [stored for stored in self._files.values() if stored.content is not None]

    def restore(self, files: Iterable[StoredFile]) -> None:
        self._files = {stored.id: stored for stored in files}

    def order(self) -> list[str]:
        """Every file's id, in the order they were added (which breaks ties between files created in one second)."""
        return list(self._files)

    def reorder(self, ids: Iterable[str]) -> None:
        """Put the files in the order of `ids` (those it does not name last, as they are)."""
        ranks = {file_id: rank for rank, file_id in enumerate(ids)}
        ordered = sorted(self._files.values(), key=lambda stored: ranks.get(stored.id, len(ranks)))
        self._files = {stored.id: stored for stored in ordered}

    def clear(self) -> None:
        self._files.clear()

    def page(
        self, now: float, *, after: str | None, limit: str | None, order: str | None, purpose: str | None
    ) -> JsonObject:
        """One page of `GET /v1/files`, newest first by default."""
        size = _limit(limit)
        if order not in (None, "asc", "desc"):
            raise OpenAIError(
                400,
                f"Invalid value: '{order}'. Supported values are: 'asc' and 'desc'.",
                param="order",
                code="invalid_value",
            )
        listed = [
            stored
            for stored in self._files.values()
            if stored.alive(now) and (purpose is None or stored.purpose == purpose)
        ]
        listed.sort(key=lambda stored: stored.created_at)
        if order != "asc":
            listed.reverse()
        start = 0
        if after is not None:
            ids = [stored.id for stored in listed]
            if after not in ids:
                raise no_such("File", after, "after")
            start = ids.index(after) + 1
        chosen = listed[start : start + size]
        return {
            "object": "list",
            "data": [render_file(stored) for stored in chosen],
            "first_id": chosen[0].id if chosen else None,
            "last_id": chosen[-1].id if chosen else None,
            "has_more": start + size < len(listed),
        }


def file_fields(stored: StoredFile) -> JsonObject:
    """The fields every OpenAI-shaped file object opens with (OpenAI's `FileObject`, Together's file)."""
    return {
        "id": stored.id,
        "object": "file",
        "bytes": stored.size,
        "created_at": int(stored.created_at),
        "filename": stored.filename,
    }


def render_file(stored: StoredFile) -> JsonObject:
    """The `FileObject`."""
    return {
        **file_fields(stored),
        "purpose": stored.purpose,
        "status": "processed",
        "expires_at": int(stored.expires_at) if stored.expires_at is not None else None,
        "status_details": None,
    }


def _limit(raw: str | None) -> int:
    return list_limit(raw, default=_LIST_LIMIT_MAX, maximum=_LIST_LIMIT_MAX)
