"""Images as the API reads them: base64 decoding, the media type their first bytes show, their size in pixels (from
the header alone), and what they cost in input tokens.

Tokens follow Anthropic's vision guide: an image is scaled down to at most 1568 pixels on its long edge and about
1.15 megapixels, then costs `width * height / 750` tokens. An image whose size cannot be read from its header
(and one given by URL, which the offline emulator never fetches) counts `UNKNOWN_IMAGE_TOKENS`, the most an image
can cost.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from dataclasses import dataclass

__all__ = [
    "IMAGE_MEDIA_TYPES",
    "MAX_IMAGE_BASE64_BYTES",
    "MAX_IMAGE_DIMENSION",
    "UNKNOWN_IMAGE_TOKENS",
    "ImageInfo",
    "decode_base64",
    "image_info",
    "image_tokens",
]

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
# The API measures the limit on the base64 text, not on the decoded bytes.
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024
MAX_IMAGE_DIMENSION = 8000
UNKNOWN_IMAGE_TOKENS = 1600
_LONG_EDGE = 1568
_MAX_PIXELS = 1_150_000
_PIXELS_PER_TOKEN = 750


@dataclass(frozen=True)
class ImageInfo:
    """What the first bytes of an image say: its actual media type (None: not an image) and its size, if known."""

    media_type: str | None
    size: tuple[int, int] | None


def decode_base64(data: str) -> bytes | None:
    """The bytes `data` encodes, or None when it is not valid base64."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_info(raw: bytes) -> ImageInfo:
    media_type = _sniff(raw)
    return ImageInfo(media_type, _size(raw, media_type))


def image_tokens(size: tuple[int, int] | None) -> int:
    if size is None:
        return UNKNOWN_IMAGE_TOKENS
    width, height = size
    scale = min(1.0, _LONG_EDGE / max(width, height, 1), math.sqrt(_MAX_PIXELS / max(width * height, 1)))
    return max(1, math.ceil(width * height * scale * scale / _PIXELS_PER_TOKEN))


def _sniff(raw: bytes) -> str | None:
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _size(raw: bytes, media_type: str | None) -> tuple[int, int] | None:
    try:
        if media_type == "image/png" and raw[12:16] == b"IHDR":
            width, height = struct.unpack(">II", raw[16:24])
            return int(width), int(height)
        if media_type == "image/gif":
            width, height = struct.unpack("<HH", raw[6:10])
            return int(width), int(height)
        if media_type == "image/jpeg":
            return _jpeg_size(raw)
        if media_type == "image/webp":
            return _webp_size(raw)
    except struct.error:
        return None
    return None


# Start-of-frame markers, the ones that carry the frame's size (not DHT C4, JPG C8 or DAC CC).
_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 4 <= len(raw):
        if raw[index] != 0xFF:
            return None
        marker = raw[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker in (0x01, *range(0xD0, 0xDA)):  # markers without a length
            index += 2
            continue
        (length,) = struct.unpack(">H", raw[index + 2 : index + 4])
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", raw[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + length
    return None


def _webp_size(raw: bytes) -> tuple[int, int] | None:
    chunk = raw[12:16]
    if chunk == b"VP8 " and raw[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", raw[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L" and raw[20:21] == b"\x2f":
        (bits,) = struct.unpack("<I", raw[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(raw[24:27], "little") + 1
        height = int.from_bytes(raw[27:30], "little") + 1
        return width, height
    return None
