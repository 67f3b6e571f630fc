"""The Files API's state and operations, free of HTTP: uploaded files kept in memory with their bytes, listed newest
first, rendered as the SDK's `FileMetadata` or, for a caller sending the `files-api-2025-04-14` beta header,
`BetaFileMetadata`.

The API serves both shapes: without the beta header a list is `{data, next_page}`, paged by `page` (or a set of
`ids`), and every file carries `expires_at`; with it a list is `{data, has_more, first_id, last_id}`, paged by
`before_id` and `after_id`, and `expires_at` shows only on a file that expires. Each pagination is refused in the
other mode. Uploaded files are not downloadable (only files a tool writes are); `Emulator.add_file` stands in for
such a tool.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Sequence

from lowtide.emulator.anthropic.batches import list_limit, paginate, rfc3339
from lowtide.emulator.anthropic.stored_file import StoredFile
from lowtide.emulator.core.errors import ApiError, invalid_request, not_found
from lowtide.emulator.core.ids import new_id
from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.media import image_info
from lowtide.emulator.core.pdf import is_pdf

__all__ = [
    "FILES_BETA",
    "MAX_FILE_BYTES",
    "FileStore",
    "mime_type_of",
    "render_file",
    "stored_name",
]

FILES_BETA = "files-api-2025-04-14"
MAX_FILE_BYTES = 500 * 1024 * 1024
MAX_FILENAME = 500
MIN_EXPIRY_SECONDS = 3600
MAX_EXPIRY_SECONDS = 90 * 24 * 3600
MAX_LISTED_IDS = 100
_PAGE_PREFIX = "page_"
_OCTET_STREAM = "application/octet-stream"
# The extension an unnamed upload gets, for the types whose extension is beyond doubt.
_EXTENSIONS = {
    "application/pdf": ".pdf",
    "application/json": ".json",
    "text/plain": ".txt",
    "text/csv": ".csv",
    "text/markdown": ".md",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


def render_file(file: StoredFile, *, beta: bool) -> JsonObject:
    """The file's metadata as the API shows it to a caller with (`beta`) or without the files beta header."""
    rendered: JsonObject = {
        "id": file.id,
        "type": "file",
        "filename": file.filename,
        "mime_type": file.mime_type,
        "size_bytes": len(file.content),
        "created_at": rfc3339(file.created_at),
        "downloadable": file.downloadable,
    }
    if not beta or file.expires_at is not None:
        rendered["expires_at"] = rfc3339(file.expires_at) if file.expires_at is not None else None
    return rendered


def mime_type_of(declared: str | None, filename: str, content: bytes) -> str:
    """The MIME type a file is stored with: as its upload declared it, else as its name or its first bytes say."""
    if declared is not None and declared != _OCTET_STREAM:
        return declared
    guessed, _ = mimetypes.guess_type(filename)
    if guessed is not None:
        return guessed
    if is_pdf(content):
        return "application/pdf"
    sniffed = image_info(content).media_type
    if sniffed is not None:
        return sniffed
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return _OCTET_STREAM
    return "text/plain"


def stored_name(filename: str | None, mime_type: str) -> str:
    """The last path component of the upload's filename, or `unnamed` and the type's extension when there is none."""
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    if not name:
        name = "unnamed" + _EXTENSIONS.get(mime_type, "")
    if len(name) > MAX_FILENAME:
        raise invalid_request(f"file.filename: String should have at most {MAX_FILENAME} characters")
    return name


class FileStore:
    """Files by id, in upload order, with the Files API's operations."""

    def __init__(self) -> None:
        self._files: dict[str, StoredFile] = {}

    def get(self, file_id: str) -> StoredFile | None:
        return self._files.get(file_id)

    def oldest_first(self) -> list[StoredFile]:
        return list(self._files.values())

    def restore(self, files: Sequence[StoredFile]) -> None:
        """Replace every file with `files`, given oldest first."""
        self._files = {file.id: file for file in files}

    def clear(self) -> None:
        self._files.clear()

    def add(
        self,
        content: bytes,
        *,
        filename: str | None,
        declared_type: str | None,
        now: float,
        expires_in_seconds: str | None = None,
        downloadable: bool = False,
    ) -> StoredFile:
        """Store an upload. `expires_in_seconds` is the form field as sent (text), checked here."""
        expires_at = now + _expiry(expires_in_seconds) if expires_in_seconds is not None else None
        mime_type = mime_type_of(declared_type, filename or "", content)
        file = StoredFile(
            id=new_id("file"),
            filename=stored_name(filename, mime_type),
            mime_type=mime_type,
            content=content,
            created_at=now,
            downloadable=downloadable,
            expires_at=expires_at,
        )
        self._files[file.id] = file
        return file

    def find(self, file_id: str) -> StoredFile:
        file = self._files.get(file_id)
        if file is None:
            raise not_found(f"File {file_id} not found.")
        return file

    def download(self, file_id: str, now: float) -> StoredFile:
        """The file, if its bytes can be downloaded: it exists, has not expired, and a tool wrote it."""
        file = self.find(file_id)
        if file.expired(now):
            raise ApiError(
                "not_found_error",
                f"File {file_id} expired at {rfc3339(file.expires_at or now)}; its content is no longer available.",
                details={"error_code": "file_expired"},
            )
        if not file.downloadable:
            raise ApiError(
                "invalid_request_error",
                f"File {file_id} is not downloadable: only files a tool created (such as the code execution "
                "tool's outputs) can be downloaded, not uploaded ones.",
                details={"error_code": "file_not_downloadable"},
            )
        return file

    def delete(self, file_id: str) -> JsonObject:
        self.find(file_id)
        del self._files[file_id]
        return {"id": file_id, "type": "file_deleted"}

    def listing(
        self,
        *,
        beta: bool,
        limit: str | None,
        before_id: str | None,
        after_id: str | None,
        page: str | None,
        ids: list[str],
    ) -> JsonObject:
        """One page of the list, newest first, as the mode (`beta` or not) pages it."""
        newest = list(reversed(self._files))
        if beta:
            if page is not None or ids:
                raise invalid_request(
                    "page and ids page the Files API without the files-api-2025-04-14 beta header; with it, page "
                    "with before_id and after_id."
                )
            return self._beta_page(newest, list_limit(limit), before_id, after_id)
        if before_id is not None or after_id is not None:
            raise invalid_request(
                "before_id and after_id page the Files API only with the anthropic-beta header "
                f"{FILES_BETA}; without it, pass the previous page's next_page as page."
            )
        if ids:
            if page is not None or limit is not None:
                raise invalid_request("ids cannot be combined with page or limit.")
            wanted = set(ids)
            if len(wanted) > MAX_LISTED_IDS:
                raise invalid_request(f"ids: at most {MAX_LISTED_IDS} ids may be given, not {len(wanted)}")
            return {"data": [self._render(file_id) for file_id in newest if file_id in wanted], "next_page": None}
        size = list_limit(limit)
        start = newest.index(_page_cursor(page, newest)) + 1 if page is not None else 0
        shown = newest[start : start + size]
        more = start + size < len(newest)
        return {
            "data": [self._render(file_id) for file_id in shown],
            "next_page": _page_token(shown[-1]) if more else None,
        }

    def _beta_page(self, newest: list[str], size: int, before_id: str | None, after_id: str | None) -> JsonObject:
        if after_id is not None and before_id is not None:
            raise invalid_request("Only one of after_id and before_id may be given.")
        for name, cursor in (("after_id", after_id), ("before_id", before_id)):
            if cursor is not None and cursor not in self._files:
                raise invalid_request(f"{name}: no file with id {cursor}")
        shown = paginate(newest, limit=size, after_id=after_id, before_id=before_id)
        return {
            "data": [self._render(file_id, beta=True) for file_id in shown.ids],
            "has_more": shown.has_more,
            "first_id": shown.ids[0] if shown.ids else None,
            "last_id": shown.ids[-1] if shown.ids else None,
        }

    def _render(self, file_id: str, *, beta: bool = False) -> JsonObject:
        return render_file(self._files[file_id], beta=beta)


def _expiry(raw: str) -> int:
    try:
        seconds = int(raw)
    except ValueError:
        raise invalid_request("expires_in_seconds: Input should be a valid integer") from None
    if not MIN_EXPIRY_SECONDS <= seconds <= MAX_EXPIRY_SECONDS:
        raise invalid_request(
            f"expires_in_seconds: Input should be between {MIN_EXPIRY_SECONDS} and {MAX_EXPIRY_SECONDS}"
        )
    return seconds


def _page_token(last_id: str) -> str:
    """An opaque cursor for the page after `last_id`."""
    return _PAGE_PREFIX + base64.urlsafe_b64encode(last_id.encode()).decode().rstrip("=")


def _page_cursor(page: str, newest: list[str]) -> str:
    """The id a `page` cursor continues after; 400 for a cursor this list did not give (or whose file is gone)."""
    token = page.removeprefix(_PAGE_PREFIX)
    try:
        file_id = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        file_id = ""
    if not page.startswith(_PAGE_PREFIX) or file_id not in newest:
        raise invalid_request(f"page: {page!r} is not a page cursor of this list")
    return file_id
