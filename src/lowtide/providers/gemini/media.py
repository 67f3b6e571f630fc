"""Images and PDFs of a conversation as Gemini parts. Pure; what Gemini cannot take is a `ConfigurationError` naming
the block, before anything is sent.

- inline (base64): `inline_data` with its bytes and media type; an image of a type Gemini reads (PNG, JPEG, WebP,
  HEIC, HEIF), a document a PDF or text (plain, HTML, CSV, XML, Markdown, RTF);
- by URL (http or https): `file_data` with the URL as `file_uri`, which Gemini fetches itself; an image's type is
  told by its URL's extension (Gemini wants it, and a URL that does not say is refused), a document is a PDF;
- by file id: a file uploaded through Gemini's Files API, named `files/<id>` (sent as its URI under
  `generativelanguage.googleapis.com`) or given by that URI, as `file_data`; the Files API knows an image's type, a
  document is a PDF. Another API's file id (OpenAI's `file-...`, Anthropic's `file_...`) is refused.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from google.genai import types

from lowtide import ConfigurationError
from lowtide.providers import FilePart, ImagePart

__all__ = ["FILES_URI", "IMAGE_TYPES", "media_part"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
"""The image types Gemini reads."""
DOCUMENT_TYPES = frozenset(
    {"application/pdf", "text/plain", "text/html", "text/csv", "text/xml", "text/markdown", "text/rtf"}
)
"""The document types Gemini reads inline: PDFs (text and pages as images), and text it reads as text."""
FILES_URI = "https://generativelanguage.googleapis.com/v1beta/files/"
"""Where the Files API keeps an uploaded file, as a `file_uri` names it."""
_PDF = "application/pdf"
_DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.DOTALL)
_FILE_NAME = re.compile(r"^files/([a-z0-9-]{1,40})$")
_FILE_URI = re.compile(r"^https://[^/]+/(?:v1(?:beta|alpha)?/)?files/[a-z0-9-]{1,40}$")
_BY_EXTENSION = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".heic": "image/heic",
    ".heif": "image/heif",
}
_OTHER_IMAGES = {".gif": "image/gif", ".bmp": "image/bmp", ".svg": "image/svg+xml", ".tif": "image/tiff",
                 ".tiff": "image/tiff", ".ico": "image/x-icon", ".avif": "image/avif"}  # fmt: skip


def media_part(part: ImagePart | FilePart) -> types.PartDict:
    """`part` as the Gemini part that carries it, or the `ConfigurationError` naming what Gemini cannot take."""
    where = part.where
    image = isinstance(part, ImagePart)
    inline = part.url if image else part.data_url
    if inline is not None and inline.startswith("data:"):
        return _inline(inline, where, image=image)
    if part.file_id is not None:
        return {"file_data": _file(part.file_id, where, image=image)}
    url = part.url or ""
    return {"file_data": {"file_uri": _fetched(url, where), "mime_type": _url_type(url, where) if image else _PDF}}


def _inline(data_url: str, where: str, *, image: bool) -> types.PartDict:
    matched = _DATA_URL.match(data_url)
    if matched is None:
        raise ConfigurationError(f"{where}.source is not base64 data with its media type.", field=f"{where}.source")
    media_type = matched.group(1)
    _check_type(media_type, where, image=image)
    try:
        data = base64.b64decode(matched.group(2), validate=True)
    except binascii.Error:
        raise ConfigurationError(f"{where}.source.data is not valid base64.", field=f"{where}.source.data") from None
    return {"inline_data": {"mime_type": media_type, "data": data}}


def _check_type(media_type: str, where: str, *, image: bool) -> None:
    known = IMAGE_TYPES if image else DOCUMENT_TYPES
    if media_type not in known:
        what = "an image" if image else "a document"
        raise ConfigurationError(
            f"{where}.source.media_type: Gemini cannot take {what} of type {media_type!r}; it reads "
            f"{', '.join(sorted(known))}.",
            field=f"{where}.source.media_type",
        )


def _file(file_id: str, where: str, *, image: bool) -> types.FileDataDict:
    named = _FILE_NAME.match(file_id)
    if named is None and _FILE_URI.match(file_id) is None:
        raise ConfigurationError(
            f"{where}.source.file_id: {file_id!r} is not a Gemini file; Gemini takes files uploaded through its Files "
            "API, named files/<id> (or by their URI).",
            field=f"{where}.source.file_id",
        )
    uri = f"{FILES_URI}{named.group(1)}" if named is not None else file_id
    # The Files API knows an uploaded image's type; a document block is a PDF.
    return {"file_uri": uri} if image else {"file_uri": uri, "mime_type": _PDF}


def _fetched(url: str, where: str) -> str:
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise ConfigurationError(
            f"{where}.source.url: Gemini fetches http and https URLs only, not {url[:60]!r}; give the content inline "
            "(base64) or as an uploaded file.",
            field=f"{where}.source.url",
        )
    return url


def _url_type(url: str, where: str) -> str:
    """The type of the image at `url`, by its path's extension (what Gemini reads, or the refusal)."""
    extension = PurePosixPath(urlsplit(url).path).suffix.lower()
    known = _BY_EXTENSION.get(extension)
    if known is not None:
        return known
    other = _OTHER_IMAGES.get(extension)
    if other is not None:
        _check_type(other, where, image=True)
    raise ConfigurationError(
        f"{where}.source.url: Gemini must be told an image URL's type, and this URL's path does not say it; give a URL "
        f"ending in {', '.join(_BY_EXTENSION)}, or the image inline (base64).",
        field=f"{where}.source.url",
    )
