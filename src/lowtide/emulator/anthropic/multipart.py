"""`multipart/form-data` bodies (RFC 7578), as file uploads send them: a pure parser over the whole body, the
standard library reading each part's headers (quoted and RFC 2231 parameters included), bytes kept exactly."""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from email.parser import HeaderParser

__all__ = ["FormPart", "parse_form_data"]


@dataclass(frozen=True)
class FormPart:
    """One field of a form: its name, and for a file its filename and declared content type (None when absent)."""

    name: str
    filename: str | None
    content_type: str | None
    data: bytes


def parse_form_data(content_type: str, body: bytes) -> list[FormPart]:
    """The parts of `body`, in order; ValueError, saying why, when it is not a well-formed form."""
    header = Message()
    header["content-type"] = content_type
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str) or not boundary:
        raise ValueError("the body must be multipart/form-data, with a boundary")
    # Each delimiter line follows a CRLF, which belongs to it, not to the part before; the body's first may not.
    sections = (b"\r\n" + body).split(b"\r\n--" + boundary.encode("latin-1"))
    parts: list[FormPart] = []
    for section in sections[1:]:
        if section.startswith(b"--"):
            return parts
        parts.append(_part(section))
    raise ValueError("the body ends before its closing boundary")


def _part(section: bytes) -> FormPart:
    line, newline, rest = section.partition(b"\r\n")
    if not newline or line.strip():
        raise ValueError("a boundary line holds more than the boundary")
    if rest.startswith(b"\r\n"):
        head, data = b"", rest[2:]
    else:
        head, separator, data = rest.partition(b"\r\n\r\n")
        if not separator:
            raise ValueError("a part's headers do not end")
    headers = HeaderParser().parsestr(head.decode("utf-8", errors="replace"))
    name = headers.get_param("name", header="content-disposition")
    if headers.get_content_disposition() != "form-data" or not isinstance(name, str):
        raise ValueError("each part needs a Content-Disposition: form-data header with a name")
    content_type = headers.get_content_type() if headers.get("content-type") is not None else None
    return FormPart(name, headers.get_filename(), content_type, data)
