"""Office files and web pages as the text a model reads: Word, Excel and PowerPoint files and HTML pages converted to
Markdown by Microsoft's markitdown (the `lowtide[documents]` extra), once per file content, before anything is sent.

None of the APIs reads a DOCX, XLSX or PPTX itself; the converted text travels as a plain-text document titled with
the file's name, so that citations point into it. A file that cannot be converted is refused by name, with the
converter's reason, and so is one whose conversion holds no text.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import io
import threading
import zipfile
from collections import OrderedDict
from typing import Protocol, cast

__all__ = ["CONVERTED_KINDS", "ConversionProblem", "content_key", "converted_text", "converter_installed", "remember"]

CONVERTED_KINDS: dict[str, str] = {
    ".docx": "a Word document",
    ".xlsx": "an Excel workbook",
    ".pptx": "a PowerPoint presentation",
    ".html": "an HTML page",
    ".htm": "an HTML page",
}
"""The extensions converted to Markdown, and what each file is called in a message."""

_OOXML = frozenset({".docx", ".xlsx", ".pptx"})
# An Office file saved with a password is not a zip archive but an OLE compound file holding the encrypted package:
# an OOXML extension over this signature is always an encrypted file (an unencrypted one starts "PK").
_COMPOUND_FILE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_EXTRA = "pip install 'lowtide[documents]'"
# The converted texts kept, by the digest of the file's bytes: a run naming one file in many jobs converts it once,
# and the request built when it is sent holds the text its checks measured. Bounded, so a run over thousands of
# large files holds no more than this much text at once (a file pushed out is converted again when needed).
_CACHE_BYTES = 64 * 1024 * 1024


class ConversionProblem(Exception):
    """Why a file cannot be converted, phrased to follow the file's name."""


class _Result(Protocol):
    @property
    def markdown(self) -> str: ...


class _Converter(Protocol):
    def convert(self, file_stream: io.BytesIO, stream_info: object) -> _Result: ...


# Each kind's own converter, called directly: markitdown's general entry point falls back to reading any bytes as
# plain text, so a damaged Word file would travel as its raw bytes instead of being refused.
_CONVERTER_NAMES = {
    ".docx": "DocxConverter",
    ".xlsx": "XlsxConverter",
    ".pptx": "PptxConverter",
    ".html": "HtmlConverter",
    ".htm": "HtmlConverter",
}


class _Cache:
    """Converted texts by the digest of what was converted, the least recently used dropped past `_CACHE_BYTES`."""

    def __init__(self) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
            return text

    def put(self, key: str, text: str) -> None:
        with self._lock:
            if key in self._texts:
                return
            self._texts[key] = text
            self._bytes += len(text)
            while self._bytes > _CACHE_BYTES and len(self._texts) > 1:
                _, dropped = self._texts.popitem(last=False)
                self._bytes -= len(dropped)


_cache = _Cache()
_converters: dict[str, _Converter] = {}
_converters_lock = threading.Lock()


def converter_installed() -> bool:
    """Whether markitdown can be imported (its import is slow: it is made only when a file needs converting)."""
    return importlib.util.find_spec("markitdown") is not None


def content_key(suffix: str, data: bytes) -> str:
    """What a file's converted text is kept by: its kind and the digest of its bytes."""
    return f"{suffix}:{hashlib.sha256(data).hexdigest()}"


def remember(key: str, text: str) -> None:
    """Keep `text` as the conversion of the file content of `key` (`content_key`): what a resumed run read back from
    the requests its ledger holds, so that a file already sent is not converted again."""
    _cache.put(key, text)


def converted_text(suffix: str, data: bytes, key: str | None = None) -> str:
    """The Markdown of a file of kind `suffix` (a key of `CONVERTED_KINDS`) holding `data` (whose `content_key` is
    `key`, when it is known).

    Raises `ConversionProblem` when markitdown is not installed, the file is password-protected or damaged, or its
    conversion holds no text.
    """
    key = key if key is not None else content_key(suffix, data)
    text = _cache.get(key)
    if text is None:
        text = _convert(suffix, data)
        _cache.put(key, text)
    return text


def _convert(suffix: str, data: bytes) -> str:
    what = CONVERTED_KINDS[suffix]
    if suffix in _OOXML and data.startswith(_COMPOUND_FILE):
        raise ConversionProblem(
            f"is {what} ({suffix}) protected by a password (it is encrypted): save a copy without the password first"
        )
    if suffix in _OOXML:
        _check_archive(what, suffix, data)
    converter = _loaded(suffix)
    stream_info = importlib.import_module("markitdown").StreamInfo(extension=suffix, charset=_charset(suffix, data))
    try:
        result = converter.convert(io.BytesIO(data), stream_info)
    except Exception as exc:  # any failure of a converter is the file's problem, told with its reason
        raise ConversionProblem(f"is {what} ({suffix}) that could not be converted to text: {_reason(exc)}") from None
    text = result.markdown.strip()
    if not text:
        raise ConversionProblem(f"is {what} ({suffix}) that holds no text once converted; there is nothing to send")
    return text


def _check_archive(what: str, suffix: str, data: bytes) -> None:
    """Refuse an office file that is no zip archive (damaged, or another kind under an office extension) with the
    reason its converter would give, before loading the converter: markitdown's import takes seconds of CPU (pandas,
    onnxruntime), which a run whose only office file is damaged need not pay, nor one without the extra installed."""
    try:
        zipfile.ZipFile(io.BytesIO(data)).close()
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:  # what zipfile raises on bytes it cannot read
        reason = _first_line(exc)
        raise ConversionProblem(f"is {what} ({suffix}) that could not be converted to text: {reason}") from None


def _charset(suffix: str, data: bytes) -> str | None:
    """An HTML page's charset when it is UTF-8 (else the converter guesses); the other kinds say their own."""
    if suffix not in (".html", ".htm"):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8"


def _loaded(suffix: str) -> _Converter:
    with _converters_lock:
        if suffix not in _converters:
            try:
                module = importlib.import_module("markitdown.converters")
            except ImportError:
                raise ConversionProblem(
                    f"is {CONVERTED_KINDS[suffix]} ({suffix}): lowtide sends it as text converted by markitdown, "
                    f"which is not installed ({_EXTRA})"
                ) from None
            _converters[suffix] = cast("_Converter", getattr(module, _CONVERTER_NAMES[suffix])())
        return _converters[suffix]


def _reason(exc: Exception) -> str:
    """The converter's own reason, not markitdown's wrapping of it ("File conversion failed after 1 attempts: ...")."""
    attempts: object = getattr(exc, "attempts", None)
    if isinstance(attempts, list):
        for attempt in cast("list[object]", attempts):
            info: object = getattr(attempt, "exc_info", None)
            if isinstance(info, tuple) and len(cast("tuple[object, ...]", info)) >= 2:
                cause = cast("tuple[object, ...]", info)[1]
                if isinstance(cause, BaseException):
                    return _first_line(cause)
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
