"""Images and files in OpenAI requests (Responses' `input_image` and `input_file`, Chat's `image_url` and `file`):
the checks OpenAI makes on them and what they cost in input tokens.

- Images: an http(s) URL (accepted, never fetched), a base64 data URL (`image/png|jpeg|gif|webp`, bytes that are
  that kind of image), or the id of an uploaded image file. Tokens follow OpenAI's vision guide for GPT-4o-class
  models: `low` detail costs 85; otherwise the image is fitted within 2048 x 2048, its short side brought down to
  768, and it costs 85 plus 170 per 512-pixel tile. An image whose size is not known (a URL) counts as 1024 x 1024.
- Files: a PDF as a base64 data URL (`file_data`) or an uploaded file's id; each page costs the tokens of its text
  plus those of a page image (`PDF_PAGE_IMAGE_TOKENS`), as OpenAI gives the model both. A `file_url` is accepted
  and counted as one unread page. A UTF-8 text file counts as its text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from lowtide.emulator.core.jsonutil import JsonObject
from lowtide.emulator.core.media import IMAGE_MEDIA_TYPES, decode_base64, image_info
from lowtide.emulator.core.pdf import is_pdf, read_pdf
from lowtide.emulator.openai.errors import OpenAIError, invalid_value, no_such

__all__ = ["PDF_PAGE_IMAGE_TOKENS", "FileLookup", "Media", "file_media", "image_media", "text_tokens"]

PDF_PAGE_IMAGE_TOKENS = 765
_LOW_DETAIL_TOKENS = 85
_TILE_TOKENS = 170
_UNKNOWN_SIZE = (1024, 1024)
_DATA_URL = re.compile(r"data:([a-zA-Z0-9.+/-]+);base64,(.*)", re.S)
_DETAILS = ("auto", "low", "high", "original")

FileLookup = Callable[[str], bytes | None]
"""An uploaded file's bytes by id, or None when there is no such file."""


@dataclass(frozen=True)
class Media:
    """An image or file of a request: what it costs, and what it is (for the answer's digest, not its text)."""

    tokens: int
    block: JsonObject


def text_tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def image_media(
    url: object, file_id: object, detail: object, where: str, files: FileLookup, *, url_param: str = "image_url"
) -> Media:
    """An image given by `url` (http(s) or data URL) or by an uploaded file's id; OpenAIError when it is not one."""
    if detail is None:
        detail = "auto"
    if detail not in _DETAILS:
        raise invalid_value(f"{where}.detail", detail, _DETAILS)
    if isinstance(file_id, str):
        raw = files(file_id)
        if raw is None:
            raise no_such("File", file_id, f"{where}.file_id")
        size = _image_size(raw, f"{where}.file_id")
        return Media(_image_tokens(size, str(detail)), {"type": "input_media", "file_id": file_id})
    if not isinstance(url, str):
        raise OpenAIError(
            400,
            f"Missing required parameter: '{where}.{url_param}'.",
            param=f"{where}.{url_param}",
            code="missing_required_parameter",
        )
    param = f"{where}.{url_param}"
    if url.startswith(("https://", "http://")):
        return Media(_image_tokens(_UNKNOWN_SIZE, str(detail)), {"type": "input_media", "url": url})
    match = _DATA_URL.fullmatch(url)
    if match is None:
        raise OpenAIError(
            400,
            f"Invalid '{param}'. Expected a valid URL, but got a value with an invalid format.",
            param=param,
            code="invalid_value",
        )
    if match.group(1) not in IMAGE_MEDIA_TYPES:
        raise OpenAIError(
            400,
            f"Invalid '{param}'. Expected a base64-encoded data URL with an image MIME type (e.g. "
            f"'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got unsupported MIME type '{match.group(1)}'.",
            param=param,
            code="invalid_value",
        )
    raw = decode_base64(match.group(2))
    if raw is None:
        raise _bad_image(param)
    size = _image_size(raw, param)
    return Media(_image_tokens(size, str(detail)), {"type": "input_media", "data_url": url})


def file_media(file_data: object, file_id: object, file_url: object, where: str, files: FileLookup) -> Media:
    """A file given inline (`file_data`, a base64 data URL), by an uploaded file's id, or by URL."""
    if isinstance(file_id, str):
        raw = files(file_id)
        if raw is None:
            raise no_such("File", file_id, f"{where}.file_id")
        return Media(_file_tokens(raw, f"{where}.file_id"), {"type": "input_media", "file_id": file_id})
    if isinstance(file_data, str):
        param = f"{where}.file_data"
        match = _DATA_URL.fullmatch(file_data)
        raw = decode_base64(match.group(2)) if match is not None else None
        if raw is None:
            raise OpenAIError(
                400,
                f"Invalid '{param}'. Expected a base64-encoded data URL (e.g. 'data:application/pdf;base64,...').",
                param=param,
                code="invalid_value",
            )
        return Media(_file_tokens(raw, param), {"type": "input_media", "file_data": file_data})
    if isinstance(file_url, str):
        return Media(PDF_PAGE_IMAGE_TOKENS, {"type": "input_media", "file_url": file_url})
    raise OpenAIError(
        400,
        f"Invalid '{where}': one of 'file_data', 'file_id' or 'file_url' must be provided.",
        param=where,
        code="missing_required_parameter",
    )


def _bad_image(param: str) -> OpenAIError:
    return OpenAIError(
        400,
        f"Invalid '{param}'. You uploaded an unsupported image. Please make sure your image is a valid PNG, JPEG, "
        "GIF or WEBP image.",
        param=param,
        code="invalid_image_format",
    )


def _image_size(raw: bytes, param: str) -> tuple[int, int]:
    info = image_info(raw)
    if info.media_type is None:
        raise _bad_image(param)
    return info.size if info.size is not None else _UNKNOWN_SIZE


def _image_tokens(size: tuple[int, int], detail: str) -> int:
    if detail == "low":
        return _LOW_DETAIL_TOKENS
    width, height = (max(1, side) for side in size)
    fit = min(1.0, 2048 / max(width, height))
    width, height = width * fit, height * fit
    shrink = min(1.0, 768 / min(width, height))
    width, height = width * shrink, height * shrink
    return _LOW_DETAIL_TOKENS + _TILE_TOKENS * math.ceil(width / 512) * math.ceil(height / 512)


def _file_tokens(raw: bytes, param: str) -> int:
    if is_pdf(raw):
        pages = read_pdf(raw).pages or ("",)
        return sum(PDF_PAGE_IMAGE_TOKENS + text_tokens(len(page)) for page in pages)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise OpenAIError(
            400,
            f"Invalid '{param}'. The file is neither a PDF nor UTF-8 text; the emulator reads only those.",
            param=param,
            code="unsupported_file",
        ) from None
    return text_tokens(len(text))
