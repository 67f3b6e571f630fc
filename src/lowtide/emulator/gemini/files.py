"""Gemini files: those uploaded through the resumable upload protocol the google-genai SDK speaks (a `start` call
answering an `x-goog-upload-url`, then `upload` calls carrying the bytes in order, the last also `finalize`), and the
responses files of batch jobs (produced line by line from the job whenever they are read). Their store, list pages
(newest first) and the `File` resource.

Every file expires 48 hours after its creation, on the emulator's clock; an expired file is gone. Uploaded files
cannot be downloaded (as at Google: only generated files can); a job's responses file can."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.produced import file_pieces
from lowtide.emulator.gemini.errors import GeminiError, invalid_argument
from lowtide.emulator.gemini.names import timestamp
from lowtide.emulator.gemini.pages import token_page

__all__ = ["FILE_LIFETIME", "GeminiFile", "GeminiFileStore", "UploadSession", "check_file_id", "render_file"]

FILE_LIFETIME = 48 * 3600.0
_LIST_DEFAULT = 10
_LIST_MAX = 100
_ID = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$")


@dataclass(eq=False)
class GeminiFile:
    """A file: uploaded (`content`) or a batch job's responses (`lines`, produced afresh at each read)."""

    id: str
    display_name: str | None
    mime_type: str
    created_at: float
    content: bytes | None = None
    lines: Callable[[], Iterable[bytes]] | None = field(default=None, repr=False)
    _digest: tuple[int, str] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"files/{self.id}"

    @property
    def generated(self) -> bool:
        return self.content is None

    @property
    def expires_at(self) -> float:
        return self.created_at + FILE_LIFETIME

    def pieces(self) -> Iterator[bytes]:
        return file_pieces(self.content, self.lines)

    def digest(self) -> tuple[int, str]:
        """Its size and its SHA-256 in base64, as the resource reports them."""
        if self._digest is None:
            hasher = hashlib.sha256()
            size = 0
            for piece in self.pieces():
                hasher.update(piece)
                size += len(piece)
            self._digest = (size, base64.b64encode(hasher.hexdigest().encode()).decode())
        return self._digest


@dataclass(eq=False)
class UploadSession:
    """A resumable upload under way: what its `start` said, and the bytes received so far."""

    upload_id: str
    file_id: str
    display_name: str | None
    mime_type: str
    size: int | None
    received: bytearray = field(default_factory=bytearray)


def check_file_id(file_id: str) -> str:
    """A file id a client chose (`files/<id>`): up to 40 lowercase letters, digits and dashes, no dash at an end."""
    if not _ID.match(file_id):
        raise invalid_argument(
            f"Invalid file name: files/{file_id[:60]}. The ID can contain up to 40 characters that are lowercase "
            "alphanumeric or dashes (-), and cannot start or end with a dash."
        )
    return file_id


def not_found(file_id: str) -> GeminiError:
    """What the API answers for a file that does not exist (or is not the caller's)."""
    return GeminiError(403, f"You do not have permission to access the File {file_id} or it may not exist.")


class GeminiFileStore:
    """Files by id, in creation order, and the uploads under way by upload id."""

    def __init__(self) -> None:
        self._files: dict[str, GeminiFile] = {}
        self.sessions: dict[str, UploadSession] = {}

    def add(self, stored: GeminiFile) -> None:
        self._files[stored.id] = stored

    def get(self, file_id: str, now: float) -> GeminiFile | None:
        stored = self._files.get(file_id)
        return stored if stored is not None and now < stored.expires_at else None

    def find(self, file_id: str, now: float) -> GeminiFile:
        stored = self.get(file_id, now)
        if stored is None:
            raise not_found(file_id)
        return stored

    def taken(self, file_id: str) -> bool:
        return file_id in self._files or any(session.file_id == file_id for session in self.sessions.values())

    def delete(self, file_id: str) -> None:
        del self._files[file_id]

    def uploaded(self) -> list[GeminiFile]:
        """The uploaded files, oldest first (those a job produced are made again from it)."""
        return [stored for stored in self._files.values() if not stored.generated]

    def clear(self) -> None:
        self._files.clear()
        self.sessions.clear()

    def page(self, now: float, page_size: str | None, page_token: str | None) -> tuple[list[GeminiFile], str | None]:
        """One page of `GET /{version}/files`, newest first, and the next page's token."""
        size = _page_size(page_size)
        live = [stored for stored in reversed(self._files.values()) if now < stored.expires_at]
        return token_page(live, lambda item: item.id, size, page_token)


def _page_size(raw: str | None) -> int:
    if raw is None or raw == "":
        return _LIST_DEFAULT
    if not raw.isdigit():
        raise invalid_argument(f"Invalid value at 'page_size' (TYPE_INT32), \"{raw[:40]}\"")
    return min(int(raw) or _LIST_DEFAULT, _LIST_MAX)


def render_file(stored: GeminiFile, base: str, version: str) -> JsonObject:
    """The `File` resource; `base` is the API's address as the caller reached it, `version` the API version."""
    size, sha = stored.digest()
    body: JsonObject = {"name": stored.name}
    if stored.display_name is not None:
        body["displayName"] = stored.display_name
    body |= {
        "mimeType": stored.mime_type,
        "sizeBytes": str(size),
        "createTime": timestamp(stored.created_at),
        "updateTime": timestamp(stored.created_at),
        "expirationTime": timestamp(stored.expires_at),
        "sha256Hash": sha,
        "uri": f"{base}/{version}/{stored.name}",
        "state": "ACTIVE",
        "source": "GENERATED" if stored.generated else "UPLOADED",
    }
    if stored.generated:
        body["downloadUri"] = f"{base}/download/{version}/{stored.name}:download?alt=media"
    return body
