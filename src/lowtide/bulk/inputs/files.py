"""What a job's file is and how it travels: its kind (from its extension and first bytes), its size against the
API's limits, and the content block it becomes (`file_block`), read only when its request is built. Word, Excel and
PowerPoint files and HTML pages are read whole when checked, and travel as the text they convert to (`converted`).
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lowtide.bulk.inputs.converted import (
    CONVERTED_KINDS,
    ConversionProblem,
    content_key,
    converted_text,
    converter_installed,
)
from lowtide.bulk.inputs.problems import InputError, InputProblem

__all__ = [
    "IMAGE_MAX_BASE64_BYTES",
    "REQUEST_MAX_BYTES",
    "FileChecks",
    "FileInfo",
    "FileKind",
    "UncheckedFiles",
    "binary_kind",
    "file_block",
    "inspect_file",
]

IMAGE_MAX_BASE64_BYTES = 5 * 1024 * 1024
"""The API refuses an image whose base64 data is over 5 MB."""

REQUEST_MAX_BYTES = 32 * 1024 * 1024
"""The API refuses a Messages request over 32 MB, so no single document may be larger (PDFs count base64-encoded)."""

FileKind = Literal["pdf", "image", "text", "converted"]

_PDF_MEDIA_TYPE = "application/pdf"
_IMAGE_EXTENSIONS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_TEXT_EXTENSIONS = frozenset(
    {".txt", ".md", ".csv", ".tsv", ".json", ".jsonl", ".html", ".htm", ".xml", ".log", ".rst"}
)
_EXTENSION_FOR = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
_KIND_NAMES = {
    _PDF_MEDIA_TYPE: "a PDF",
    "image/png": "a PNG image",
    "image/jpeg": "a JPEG image",
    "image/gif": "a GIF image",
    "image/webp": "a WebP image",
}
_SUPPORTED = (
    "PDF (.pdf), images (.png, .jpg, .jpeg, .gif, .webp), UTF-8 text (.txt, .md, .csv, .json, .html, .xml, "
    ".log, .rst and other plain-text names), and Word, Excel and PowerPoint files (.docx, .xlsx, .pptx) as text"
)
# The largest office file or page converted: its text is what travels, but the whole file is read to convert it.
CONVERTED_MAX_BYTES = 256 * 1024 * 1024
# Kinds the API does not read, by extension: refused whatever their first bytes say, since an office file (a zip
# archive) whose stored parts happen to decode as UTF-8 would otherwise be sent as text, and be gibberish.
_OFFICE = "save it as .docx, .xlsx or .pptx, or export it as PDF or as text first"
_OFFICE_ZIP = "name a Word, Excel or PowerPoint file with its .docx, .xlsx or .pptx extension; else unpack it"
_ARCHIVE = "unpack it and name the files inside, one per job"
_PICTURE = "convert it to PNG, JPEG, GIF or WebP first"
_NOT_READ = "send what it holds as one of those instead"
_UNSUPPORTED_EXTENSIONS: dict[str, tuple[str, str]] = {
    **dict.fromkeys((".docm", ".doc", ".dotx", ".dot"), ("a Word document", _OFFICE)),
    **dict.fromkeys((".xlsm", ".xls", ".xlsb"), ("an Excel workbook", _OFFICE)),
    **dict.fromkeys((".pptm", ".ppt"), ("a PowerPoint presentation", _OFFICE)),
    **dict.fromkeys((".odt", ".ods", ".odp", ".odg"), ("an OpenDocument file", _OFFICE)),
    **dict.fromkeys((".pages", ".numbers"), ("an Apple iWork document", _OFFICE)),
    ".epub": ("an EPUB book", _OFFICE),
    **dict.fromkeys((".zip", ".jar"), ("a zip archive", _ARCHIVE)),
    **dict.fromkeys((".gz", ".tgz", ".bz2", ".xz", ".zst"), ("compressed data", _ARCHIVE)),
    **dict.fromkeys((".tar", ".7z", ".rar"), ("an archive", _ARCHIVE)),
    **dict.fromkeys((".tif", ".tiff"), ("a TIFF image", _PICTURE)),
    ".bmp": ("a BMP image", _PICTURE),
    **dict.fromkeys((".heic", ".heif", ".avif"), ("a HEIF image", _PICTURE)),
    **dict.fromkeys((".mp3", ".wav", ".m4a", ".flac", ".ogg", ".opus", ".aac"), ("an audio file", _NOT_READ)),
    **dict.fromkeys((".mp4", ".mov", ".avi", ".mkv", ".webm"), ("a video", _NOT_READ)),
    **dict.fromkeys((".exe", ".dll", ".so", ".dylib", ".class", ".pyc", ".o"), ("a program", _NOT_READ)),
    **dict.fromkeys((".sqlite", ".sqlite3"), ("an SQLite database", _NOT_READ)),
}
# Kinds the API does not read, by their first bytes. Each signature holds a byte no text starts with (a control
# character, or one that is not UTF-8), so a text file is never taken for one of these.
_BINARY_SIGNATURES: tuple[tuple[bytes, str, str], ...] = (
    (b"PK\x03\x04", "a zip archive (Word, Excel, PowerPoint and OpenDocument files are zip archives)", _OFFICE_ZIP),
    (b"PK\x05\x06", "an empty zip archive", _ARCHIVE),
    (b"PK\x07\x08", "a zip archive", _ARCHIVE),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an older Office document (.doc, .xls or .ppt)", _OFFICE),
    (b"\x1f\x8b", "gzip-compressed data", _ARCHIVE),
    (b"\xfd7zXZ\x00", "xz-compressed data", _ARCHIVE),
    (b"(\xb5/\xfd", "zstd-compressed data", _ARCHIVE),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", _ARCHIVE),
    (b"Rar!\x1a\x07", "a RAR archive", _ARCHIVE),
    (b"II*\x00", "a TIFF image", _PICTURE),
    (b"MM\x00*", "a TIFF image", _PICTURE),
    (b"\x7fELF", "a program", _NOT_READ),
    (b"\xcf\xfa\xed\xfe", "a program", _NOT_READ),
    (b"\xca\xfe\xba\xbe", "a program", _NOT_READ),
    (b"SQLite format 3\x00", "an SQLite database", _NOT_READ),
    (b"OggS\x00", "an Ogg audio or video file", _NOT_READ),
    (b"\x1aE\xdf\xa3", "a Matroska or WebM video", _NOT_READ),
    (b"ID3\x02", "an MP3 audio file", _NOT_READ),
    (b"ID3\x03", "an MP3 audio file", _NOT_READ),
    (b"ID3\x04", "an MP3 audio file", _NOT_READ),
)
# Enough of a file to recognise its kind, and to tell UTF-8 text from binary data, without reading it all.
_HEAD_BYTES = 4096


class _FileProblem(Exception):
    """Why a job's file cannot be sent, phrased to follow the file's name."""


@dataclass(frozen=True)
class FileInfo:
    """What a job's file is, found from its size and first bytes (its contents are not read)."""

    path: Path
    kind: FileKind
    media_type: str
    size: int
    """Its size in bytes; for a converted file, the size of the text it converts to (what travels)."""
    converted_from: str | None = None
    """What a converted file is ("a Word document"), or None."""
    content_key: str | None = None
    """A converted file's kind and the digest of its bytes (`converted.content_key`), or None."""
    text_digest: str | None = None
    """The SHA-256 of a converted file's text, by which a resumed run finds that text in a request sent."""
    text_chars: int = 0
    """How many characters a converted file's text holds."""

    @property
    def sent_tokens(self) -> int:
        """A deliberately high estimate of the tokens the file's text costs (3 bytes a token, as budgets count)."""
        return -(-self.size // 3)


def inspect_file(path: str | Path) -> FileInfo:
    """Check that `path` exists and is a kind and size the API accepts, reading only its first few bytes.

    Raises `InputError` naming the file and what to do about it.
    """
    file = Path(path)
    try:
        return _inspect(file)
    except _FileProblem as exc:
        raise InputError(file, [InputProblem(None, str(exc))]) from None


def file_block(path: str | Path, *, citations: bool, title: str | None = None) -> dict[str, Any]:
    """The content block that sends the file at `path`: a document (PDF, text) or an image, base64 where binary.

    `title` defaults to the file's name. Documents carry `citations: {"enabled": true}` when `citations` is true;
    images never do (the API cites documents only). Raises `InputError` when the file is missing, of a kind the
    API does not take, or over the API's size limits; the size is checked before the file is read.
    """
    file = Path(path)
    try:
        _inspect(file)
        data = _read_bytes(file)
        # Classify the bytes actually read: the file may have changed since it was first inspected.
        info = _classify(file, data[:_HEAD_BYTES], len(data), complete=True, data=data)
        if info.kind == "image":
            return {"type": "image", "source": _base64_source(info.media_type, data)}
        if info.kind == "pdf":
            source = _base64_source(info.media_type, data)
        else:
            text = _converted(file, data).text if info.kind == "converted" else _text(data)
            source = {"type": "text", "media_type": "text/plain", "data": text}
    except _FileProblem as exc:
        raise InputError(file, [InputProblem(None, str(exc))]) from None
    block: dict[str, Any] = {"type": "document", "source": source, "title": title if title is not None else file.name}
    if citations:
        block["citations"] = {"enabled": True}
    return block


def _base64_source(media_type: str, data: bytes) -> dict[str, Any]:
    return {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}


def _inspect(path: Path) -> FileInfo:
    try:
        status = path.stat()
    except FileNotFoundError:
        raise _FileProblem("does not exist") from None
    except OSError as exc:
        raise _FileProblem(f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(status.st_mode):
        raise _FileProblem("is a folder, not a file; name one file per job")
    if not stat.S_ISREG(status.st_mode):
        # Reading a pipe or a device could block for ever, or never end.
        raise _FileProblem("is not a regular file (a pipe, socket or device); save what it holds to a file")
    if _converts(path):
        if status.st_size > CONVERTED_MAX_BYTES:
            raise _FileProblem(
                f"is {status.st_size:,} bytes, over the {CONVERTED_MAX_BYTES:,} bytes lowtide converts to text; "
                "split it, or export its text yourself"
            )
        data = _read_bytes(path)
        return _classify(path, data[:_HEAD_BYTES], len(data), complete=True, data=data)
    head = _read_bytes(path, _HEAD_BYTES)
    return _classify(path, head, status.st_size, complete=len(head) >= status.st_size)


def _converts(path: Path) -> bool:
    """Whether the file at `path` travels as the text it converts to: an office file always (the refusal names the
    extra when it is missing), an HTML page when the converter is installed (else it travels as the text it is)."""
    suffix = path.suffix.lower()
    if suffix not in CONVERTED_KINDS:
        return False
    return suffix not in _TEXT_EXTENSIONS or converter_installed()


class _Converted:
    def __init__(self, what: str, text: str, key: str) -> None:
        self.what, self.text, self.key = what, text, key


def _converted(path: Path, data: bytes) -> _Converted:
    suffix = path.suffix.lower()
    key = content_key(suffix, data)
    try:
        return _Converted(CONVERTED_KINDS[suffix], converted_text(suffix, data, key), key)
    except ConversionProblem as exc:
        raise _FileProblem(str(exc)) from None


def _read_bytes(path: Path, limit: int = -1) -> bytes:
    """The first `limit` bytes of the file, or all of them."""
    try:
        with path.open("rb") as handle:
            return handle.read(limit)
    except OSError as exc:
        raise _FileProblem(f"cannot be read: {exc.strerror or exc}") from None


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _FileProblem(
            f"is not UTF-8 text: the byte 0x{data[exc.start]:02x} at offset {exc.start} is not valid UTF-8; "
            "save it as UTF-8"
        ) from None


def _sniff(head: bytes) -> str | None:
    """The media type the first bytes of a file announce, if they announce a PDF or an image."""
    if head.startswith(b"%PDF-"):
        return _PDF_MEDIA_TYPE
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def binary_kind(head: bytes) -> str | None:
    """What the first bytes of a file say it is, when they say it is not text: "a PDF", "a zip archive (...)"."""
    sniffed = _sniff(head)
    if sniffed is not None:
        return _KIND_NAMES[sniffed]
    found = _unsupported(head)
    return found[0] if found is not None else None


def _unsupported(head: bytes) -> tuple[str, str] | None:
    """(what it is, what to do) for a file whose first bytes announce a kind the API does not read."""
    for signature, what, advice in _BINARY_SIGNATURES:
        if head.startswith(signature):
            return what, advice
    if head[4:8] == b"ftyp":
        return "an MP4 or QuickTime video, or a HEIF image", _NOT_READ
    if head[:4] == b"RIFF" and head[8:12] in (b"WAVE", b"AVI "):
        return "a WAV audio file" if head[8:12] == b"WAVE" else "an AVI video", _NOT_READ
    return None


def _not_text(head: bytes, *, complete: bool) -> str | None:
    """Why `head` (all of the file when `complete`) is not UTF-8 text, or None; a character cut at the end is fine."""
    if b"\x00" in head:
        return f"it holds binary data (a NUL byte at offset {head.index(0)})"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=complete)
    except UnicodeDecodeError as exc:
        return f"the byte 0x{head[exc.start]:02x} at offset {exc.start} is not valid UTF-8"
    return None


def _classify(path: Path, head: bytes, size: int, *, complete: bool, data: bytes | None = None) -> FileInfo:
    """The kind of the file from its extension and first bytes; they must agree. Then the size limits. A file that
    travels converted (`_converts`) is given whole (`data`) and converted here, before anything is sent."""
    if size == 0:
        raise _FileProblem("is empty; there is nothing to send")
    suffix = path.suffix.lower()
    sniffed = _sniff(head)
    if sniffed is None and _converts(path):
        converted = _converted(path, data if data is not None else _read_bytes(path))
        text = converted.text.encode()
        info = FileInfo(
            path, "converted", "text/plain", len(text), converted.what,
            content_key=converted.key, text_digest=hashlib.sha256(text).hexdigest(), text_chars=len(converted.text),
        )  # fmt: skip
        _check_size(info)
        return info
    if suffix == ".pdf" or suffix in _IMAGE_EXTENSIONS:
        expected = _PDF_MEDIA_TYPE if suffix == ".pdf" else _IMAGE_EXTENSIONS[suffix]
        if sniffed is None:
            raise _FileProblem(
                f"has the {suffix} extension but is not {_KIND_NAMES[expected]} (its first bytes say otherwise); "
                f"the API takes {_SUPPORTED}"
            )
        if sniffed != expected:
            raise _FileProblem(
                f"has the {suffix} extension but holds {_KIND_NAMES[sniffed]}; "
                f"rename it to end in {_extension_for(sniffed)}"
            )
    elif sniffed is not None and suffix:
        raise _FileProblem(
            f"holds {_KIND_NAMES[sniffed]} but has the {suffix} extension; "
            f"rename it to end in {_extension_for(sniffed)}"
        )
    if sniffed is None:
        unsupported = _UNSUPPORTED_EXTENSIONS.get(suffix) or _unsupported(head)
        if unsupported is not None:
            what, advice = unsupported
            named = f" ({suffix})" if suffix in _UNSUPPORTED_EXTENSIONS else ""
            raise _FileProblem(
                f"is {what}{named}, a kind of file the API does not take; it takes {_SUPPORTED}: {advice}"
            )
        trouble = _not_text(head, complete=complete)
        if trouble is not None and suffix in _TEXT_EXTENSIONS:
            raise _FileProblem(f"is not UTF-8 text: {trouble}; save it as UTF-8")
        if trouble is not None:
            raise _FileProblem(f"is not a kind of file the API takes: it supports {_SUPPORTED}; convert it first")
        if complete and not head.decode("utf-8-sig").strip():
            raise _FileProblem("holds no text, only white space; there is nothing to send")
        info = FileInfo(path, "text", "text/plain", size)
    else:
        info = FileInfo(path, "pdf" if sniffed == _PDF_MEDIA_TYPE else "image", sniffed, size)
    _check_size(info)
    return info


def _extension_for(media_type: str) -> str:
    return ".pdf" if media_type == _PDF_MEDIA_TYPE else _EXTENSION_FOR[media_type]


def _check_size(info: FileInfo) -> None:
    # In bytes, not rounded megabytes: a file just over a limit would otherwise read "5.0 MB, over the 5 MB limit".
    encoded = 4 * ((info.size + 2) // 3)
    if info.kind == "image" and encoded > IMAGE_MAX_BASE64_BYTES:
        raise _FileProblem(
            f"is {info.size:,} bytes ({encoded:,} once base64-encoded), over the API's limit of "
            f"{IMAGE_MAX_BASE64_BYTES:,} bytes (5 MB) per image; scale it down or re-encode it"
        )
    if info.kind == "pdf" and encoded > REQUEST_MAX_BYTES:
        raise _FileProblem(
            f"is {info.size:,} bytes ({encoded:,} once base64-encoded), over the API's limit of "
            f"{REQUEST_MAX_BYTES:,} bytes (32 MB) per request; split it into smaller PDFs"
        )
    if info.kind == "text" and info.size > REQUEST_MAX_BYTES:
        raise _FileProblem(
            f"is {info.size:,} bytes, over the API's limit of {REQUEST_MAX_BYTES:,} bytes (32 MB) per request; "
            "split it into smaller files"
        )
    if info.kind == "converted" and info.size > REQUEST_MAX_BYTES:
        raise _FileProblem(
            f"converts to {info.size:,} bytes of text, over the API's limit of {REQUEST_MAX_BYTES:,} bytes (32 MB) "
            "per request; split it into smaller files"
        )


class FileChecks:
    """Inspects each distinct file once, however many jobs name it; `found` keeps what good files are."""

    def __init__(self) -> None:
        self._seen: dict[Path, str | None] = {}
        self.found: dict[Path, FileInfo] = {}

    def check(self, path: Path) -> str | None:
        """Why the file at `path` cannot be sent, or None when it can."""
        if path not in self._seen:
            try:
                self.found[path] = _inspect(path)
                self._seen[path] = None
            except _FileProblem as exc:
                self._seen[path] = str(exc)
        return self._seen[path]

    def trouble(self, name: str, path: Path) -> str | None:
        """What is wrong with the file an input names `name` (found at `path`), phrased for that input's line."""
        trouble = self.check(path)
        if trouble is None:
            return None
        where = f" (looked for {path})" if trouble == "does not exist" and not Path(name).is_absolute() else ""
        return f"file {name!r} {trouble}{where}"


class UncheckedFiles(FileChecks):
    """File checks that check nothing: the jobs of a run the ledger knows by its input (a CSV's rows, a JSONL's lines
    parsed one at a time), whose files the run checks itself once it has read its ledger (`parser.check_jobs`)."""

    def check(self, path: Path) -> str | None:
        return None
