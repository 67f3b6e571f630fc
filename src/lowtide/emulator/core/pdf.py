"""Just enough PDF for the emulated model to read and cite simple documents: the text each page shows (the strings
of `Tj`, `TJ`, `'` and `"` in its content streams, raw or Flate-compressed), in page order.

Fonts are not interpreted: strings are read as Latin-1 (or UTF-16 with a byte order mark), which is right for the
standard fonts simple PDFs use. What cannot be read (other filters, broken structure) leaves a page without text;
`simple_pdf` writes the kind of PDF this module reads completely, for tests and demos.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PdfText", "is_pdf", "read_pdf", "simple_pdf"]

_OBJECT = re.compile(rb"(\d+)\s+\d+\s+obj\b(.*?)\bendobj", re.S)
_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_PAGES = re.compile(rb"/Type\s*/Pages(?![A-Za-z])")
_CATALOG = re.compile(rb"/Type\s*/Catalog(?![A-Za-z])")
_STREAM = re.compile(rb"stream\r?\n")
_LENGTH = re.compile(rb"/Length\s+(\d+)(?!\s+\d+\s+R)")
_WHITESPACE = b" \t\r\n\f\x00"
_DELIMITERS = b"()<>[]{}/%"


@dataclass(frozen=True)
class PdfText:
    """The text of each page, in order; a page whose text could not be read is empty."""

    pages: tuple[str, ...]


def is_pdf(raw: bytes) -> bool:
    """Whether `raw` starts as a PDF file does (the API refuses anything else as a PDF)."""
    return raw[:1024].lstrip(b"\x00\t\n\r\f ").startswith(b"%PDF-")


def read_pdf(raw: bytes) -> PdfText:
    objects = {int(match.group(1)): match.group(2) for match in _OBJECT.finditer(raw)}
    return PdfText(tuple(_page_text(objects, body) for body in _pages(objects)))


def simple_pdf(pages: Sequence[str]) -> bytes:
    """A small, valid PDF with one page per string, each line of a string a line of Helvetica text."""
    count = len(pages)
    kids = " ".join(f"{4 + 2 * index} 0 R" for index in range(count))
    bodies: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for index, text in enumerate(pages):
        lines = b"".join(b"(" + _escape(line) + b") Tj T* " for line in text.splitlines())
        content = b"BT /F1 12 Tf 14 TL 72 750 Td " + lines + b"ET"
        bodies.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * index} 0 R >>".encode()
        )
        bodies.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(bodies) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(bodies) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _escape(line: str) -> bytes:
    raw = line.encode("latin-1", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


# -- structure -------------------------------------------------------------------------------------------------------


def _refs(body: bytes, key: bytes) -> list[int]:
    """The objects `key` refers to: one reference, or an array of them."""
    match = re.search(rb"/" + key + rb"\s*(\[[^\]]*\]|\d+\s+\d+\s+R)", body)
    if match is None:
        return []
    return [int(number) for number in re.findall(rb"(\d+)\s+\d+\s+R", match.group(1))]


def _pages(objects: dict[int, bytes]) -> list[bytes]:
    """Page dictionaries in reading order: down the page tree from the catalog, else in object order."""
    found: list[bytes] = []
    seen: set[int] = set()

    def walk(number: int) -> None:
        body = objects.get(number)
        if body is None or number in seen:
            return
        seen.add(number)
        if _PAGES.search(body):
            for kid in _refs(body, b"Kids"):
                walk(kid)
        elif _PAGE.search(body):
            found.append(body)

    for body in objects.values():
        if _CATALOG.search(body):
            for root in _refs(body, b"Pages"):
                walk(root)
            break
    if found:
        return found
    return [objects[number] for number in sorted(objects) if _PAGE.search(objects[number])]


def _stream(body: bytes) -> bytes | None:
    """The decoded data of a stream object; None when it uses a filter other than Flate."""
    match = _STREAM.search(body)
    if match is None:
        return None
    head = body[: match.start()]
    data = body[match.end() :]
    end = data.rfind(b"endstream")
    data = data[:end] if end >= 0 else data
    length = _LENGTH.search(head)
    if length is not None and int(length.group(1)) <= len(data):
        data = data[: int(length.group(1))]
    if b"/Filter" not in head:
        return data
    if re.search(rb"/Filter\s*\[?\s*/FlateDecode\s*\]?", head) is None:
        return None
    try:
        return zlib.decompress(data)
    except zlib.error:
        return None


def _page_text(objects: dict[int, bytes], page: bytes) -> str:
    parts: list[str] = []
    for number in _refs(page, b"Contents"):
        body = objects.get(number)
        data = _stream(body) if body is not None else None
        if data is not None:
            parts.append(_content_text(data))
    return _tidy("\n".join(parts))


def _tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


# -- content streams -------------------------------------------------------------------------------------------------

_Operand = str | float | list["_Operand"] | None


def _content_text(data: bytes) -> str:
    """The text a content stream shows; line moves become line breaks."""
    out: list[str] = []
    operands: list[_Operand] = []
    arrays: list[list[_Operand]] = []
    index = 0
    while index < len(data):
        byte = data[index]
        if byte in _WHITESPACE:
            index += 1
        elif byte == 0x25:  # % comment
            end = data.find(b"\n", index)
            index = len(data) if end < 0 else end + 1
        elif byte == 0x28:  # (literal string)
            text, index = _literal(data, index + 1)
            (arrays[-1] if arrays else operands).append(text)
        elif data[index : index + 2] in (b"<<", b">>"):
            index += 2
        elif byte == 0x3C:  # <hex string>
            end = data.find(b">", index)
            end = len(data) if end < 0 else end
            (arrays[-1] if arrays else operands).append(_hex(data[index + 1 : end]))
            index = end + 1
        elif byte == 0x5B:  # [
            arrays.append([])
            index += 1
        elif byte == 0x5D:  # ]
            index += 1
            if arrays:
                done = arrays.pop()
                (arrays[-1] if arrays else operands).append(done)
        else:
            start = index
            index += 1
            while index < len(data) and data[index] not in _WHITESPACE and data[index] not in _DELIMITERS:
                index += 1
            token = data[start:index]
            number = _number(token)
            if number is not None or byte == 0x2F:  # numbers and /names are operands
                (arrays[-1] if arrays else operands).append(number)
                continue
            if token == b"ID":  # inline image data: skip to its end
                end = data.find(b"EI", index)
                index = len(data) if end < 0 else end + 2
            _apply(token, operands, out)
            operands.clear()
    return "".join(out)


def _apply(operator: bytes, operands: list[_Operand], out: list[str]) -> None:
    if operator == b"Tj" and operands and isinstance(operands[-1], str):
        out.append(operands[-1])
    elif operator in (b"'", b'"') and operands and isinstance(operands[-1], str):
        out.extend(("\n", operands[-1]))
    elif operator == b"TJ" and operands and isinstance(operands[-1], list):
        for item in operands[-1]:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, float) and item < -200:
                out.append(" ")  # a wide negative adjustment is how many PDFs space words
    elif operator in (b"Td", b"TD"):
        vertical = operands[-1] if operands else 0.0
        out.append("\n" if isinstance(vertical, float) and vertical != 0.0 else " ")
    elif operator in (b"T*", b"Tm", b"ET"):
        out.append("\n")


def _number(token: bytes) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


_ESCAPES = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b", ord("f"): b"\f"}


def _literal(data: bytes, index: int) -> tuple[str, int]:
    """A literal string's text and the index just past its closing parenthesis; `index` is just past the opening."""
    out = bytearray()
    depth = 1
    while index < len(data):
        byte = data[index]
        index += 1
        if byte == 0x5C:  # backslash
            if index >= len(data):
                break
            escaped = data[index]
            index += 1
            if escaped in _ESCAPES:
                out += _ESCAPES[escaped]
            elif 0x30 <= escaped <= 0x37:
                digits = bytes([escaped])
                while len(digits) < 3 and index < len(data) and 0x30 <= data[index] <= 0x37:
                    digits += data[index : index + 1]
                    index += 1
                out.append(int(digits, 8) & 0xFF)
            elif escaped == 0x0D:  # a line continuation
                if data[index : index + 1] == b"\n":
                    index += 1
            elif escaped != 0x0A:
                out.append(escaped)
            continue
        if byte == 0x28:
            depth += 1
        elif byte == 0x29:
            depth -= 1
            if depth == 0:
                break
        out.append(byte)
    return _decode(bytes(out)), index


def _hex(digits: bytes) -> str:
    clean = bytes(byte for byte in digits if byte not in _WHITESPACE)
    if len(clean) % 2:
        clean += b"0"
    try:
        return _decode(bytes.fromhex(clean.decode("ascii")))
    except (ValueError, UnicodeDecodeError):
        return ""


def _decode(raw: bytes) -> str:
    if raw.startswith(b"\xfe\xff"):
        return raw[2:].decode("utf-16-be", errors="replace")
    return raw.decode("latin-1")
