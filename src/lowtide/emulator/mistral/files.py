"""Mistral's Files API, emulated: uploads (`purpose` `batch`, `fine-tune` or `ocr`) kept with their bytes, and the
output and error files of ended batch jobs, produced line by line from their jobs each time they are read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.mistral.errors import MistralError

__all__ = ["MistralFile", "MistralFileStore", "render_file"]


@dataclass(eq=False)
class MistralFile:
    id: str
    filename: str
    purpose: str
    created_at: float
    content: bytes | None = None
    lines: Callable[[], Iterator[bytes]] | None = None
    size: int | None = None

    @property
    def sample_type(self) -> str:
        if self.lines is not None:
            return "batch_result"
        return "batch_request" if self.purpose == "batch" else "pretrain"

    def pieces(self) -> Iterator[bytes]:
        if self.lines is not None:
            return self.lines()
        return iter([self.content or b""])

    def bytes_size(self) -> int:
        if self.size is None:
            self.size = sum(len(piece) for piece in self.pieces())
        return self.size


def render_file(stored: MistralFile) -> JsonObject:
    return {
        "id": stored.id,
        "object": "file",
        "bytes": stored.bytes_size(),
        "created_at": int(stored.created_at),
        "filename": stored.filename,
        "purpose": stored.purpose,
        "sample_type": stored.sample_type,
        "num_lines": None,
        "mimetype": "application/jsonl",
        "source": "mistral" if stored.lines is not None else "upload",
        "signature": None,
        "deleted": False,
    }


class MistralFileStore:
    """Files by id, in creation order; deleted ids are remembered, so that a job's result file is not produced again."""

    def __init__(self) -> None:
        self._files: dict[str, MistralFile] = {}
        self.deleted: set[str] = set()

    def add(self, stored: MistralFile) -> None:
        self._files[stored.id] = stored

    def get(self, file_id: str) -> MistralFile | None:
        return self._files.get(file_id)

    def find(self, file_id: str) -> MistralFile:
        stored = self._files.get(file_id)
        if stored is None:
            raise MistralError(404, f"File {file_id} not found", code="not_found")
        return stored

    def delete(self, file_id: str) -> None:
        self.find(file_id)
        del self._files[file_id]
        self.deleted.add(file_id)

    def oldest_first(self) -> list[MistralFile]:
        return list(self._files.values())

    def uploaded(self) -> list[MistralFile]:
        return [stored for stored in self._files.values() if stored.lines is None]

    def clear(self) -> None:
        self._files.clear()
        self.deleted.clear()
