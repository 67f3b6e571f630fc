"""The resumable upload protocol of Google's APIs, as the google-genai SDK speaks it to create a file:

1. `POST /upload/{version}/files` with `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start`, the
   size and type to come (`X-Goog-Upload-Header-Content-Length`, `-Content-Type`) and the `File` to make (`{"file":
   {"displayName", "mimeType", "name"}}`): answered with the session's `x-goog-upload-url` (its `upload_id` is the
   credential of the calls that follow, which carry no key) and `x-goog-upload-status: active`;
2. `POST` to that URL, `X-Goog-Upload-Command: upload` and `X-Goog-Upload-Offset` (the bytes received so far), the
   chunk as the body: `active` again; the last chunk's command is `upload, finalize`, answered `final` with
   `{"file": File}`. `query` asks how much was received (`x-goog-upload-size-received`).

Every answer of a session's calls carries `x-goog-upload-status` (the SDK retries a call whose answer has none); its
errors say `final` (`errors.gemini_error_response`), so the SDK stops and raises them."""

from __future__ import annotations

from starlette.datastructures import Headers

from lowtide.emulator.core.jsonutil import JsonObject, as_object
from lowtide.emulator.gemini.errors import GeminiError, invalid_argument
from lowtide.emulator.gemini.files import GeminiFile, GeminiFileStore, UploadSession, check_file_id, render_file
from lowtide.emulator.gemini.names import new_file_id, new_upload_id

__all__ = ["finish_chunk", "start_upload"]

_GRANULARITY = 8 * 1024 * 1024


def _text(mapping: JsonObject, name: str, proto_name: str) -> str | None:
    value = mapping.get(name, mapping.get(proto_name))
    return str(value) if value is not None else None


def start_upload(
    store: GeminiFileStore, headers: Headers, body: object, *, url: str, max_bytes: int
) -> tuple[JsonObject, dict[str, str]]:
    """Open a session for the file `body` describes; its answer's body and headers."""
    if headers.get("x-goog-upload-protocol", "").lower() != "resumable":
        raise invalid_argument("Only the resumable upload protocol is served here (X-Goog-Upload-Protocol: resumable).")
    if headers.get("x-goog-upload-command", "").lower() != "start":
        raise invalid_argument("A resumable upload starts with X-Goog-Upload-Command: start.")
    outer = as_object(body) if body is not None else {}
    if outer is None:
        raise invalid_argument("Invalid JSON payload received. Expected an object.")
    described = as_object(outer.get("file")) or {}
    declared = headers.get("x-goog-upload-header-content-length") or _text(described, "sizeBytes", "size_bytes")
    if declared is not None and not declared.isdigit():
        raise invalid_argument(f"Invalid upload size: {declared[:40]}")
    size = int(declared) if declared is not None else None
    if size is not None and size > max_bytes:
        raise invalid_argument(f"File size {size} bytes exceeds the limit of {max_bytes} bytes.")
    mime = headers.get("x-goog-upload-header-content-type") or _text(described, "mimeType", "mime_type")
    if not mime:
        raise invalid_argument("* File.mime_type: a file needs a MIME type (X-Goog-Upload-Header-Content-Type).\n")
    chosen = _text(described, "name", "name")
    file_id = check_file_id(chosen.removeprefix("files/")) if chosen else new_file_id()
    if store.taken(file_id):
        raise GeminiError(409, f"File files/{file_id} already exists.")
    session = UploadSession(
        upload_id=new_upload_id(),
        file_id=file_id,
        display_name=_text(described, "displayName", "display_name"),
        mime_type=mime,
        size=size,
    )
    store.sessions[session.upload_id] = session
    return {}, {
        "x-goog-upload-url": f"{url}?upload_id={session.upload_id}&upload_protocol=resumable",
        "x-goog-upload-status": "active",
        "x-goog-upload-chunk-granularity": str(_GRANULARITY),
    }


def finish_chunk(
    store: GeminiFileStore, upload_id: str, headers: Headers, chunk: bytes, *, now: float, base: str, version: str
) -> tuple[JsonObject, dict[str, str]]:
    """Take one `upload` (or `query`) call of the session `upload_id`; the last makes the file."""
    session = store.sessions.get(upload_id)
    if session is None:
        raise GeminiError(404, "No upload session has this upload_id (finished, or never started).")
    commands = {part.strip() for part in headers.get("x-goog-upload-command", "").lower().split(",")}
    if "query" in commands:
        return {}, {"x-goog-upload-status": "active", "x-goog-upload-size-received": str(len(session.received))}
    if not commands & {"upload", "finalize"}:
        raise GeminiError(400, "X-Goog-Upload-Command must be upload, finalize or query.")
    offset = headers.get("x-goog-upload-offset", "")
    if offset != str(len(session.received)):
        raise GeminiError(
            400,
            f"The upload offset {offset[:20] or '(none)'} is not the {len(session.received)} bytes received so far.",
        )
    session.received += chunk
    if session.size is not None and len(session.received) > session.size:
        del store.sessions[upload_id]
        raise GeminiError(400, f"More than the {session.size} bytes announced were uploaded.")
    if "finalize" not in commands:
        return {}, {"x-goog-upload-status": "active"}
    del store.sessions[upload_id]
    if session.size is not None and len(session.received) != session.size:
        raise GeminiError(
            400, f"The upload was finalized after {len(session.received)} of the {session.size} bytes announced."
        )
    stored = GeminiFile(
        id=session.file_id,
        display_name=session.display_name,
        mime_type=session.mime_type,
        created_at=now,
        content=bytes(session.received),
    )
    store.add(stored)
    return {"file": render_file(stored, base, version)}, {"x-goog-upload-status": "final"}
