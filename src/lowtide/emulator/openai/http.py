"""HTTP plumbing of the OpenAI routes: bearer authentication, multipart uploads, and OpenAI's error responses (for
the routes' own errors, and the unknown paths and crashes its callers meet)."""

from __future__ import annotations

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lowtide.emulator.core.http import request_id
from lowtide.emulator.openai.errors import OpenAIError, missing_parameter

__all__ = ["Upload", "authenticate", "openai_error_response", "read_upload"]

_NO_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth "
    "(i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the "
    "API from your browser and are prompted for a username. You can obtain an API key from "
    "https://platform.openai.com/account/api-keys."
)
# Room for the multipart boundaries and the other fields around an upload's bytes.
_FORM_OVERHEAD = 64 * 1024


def authenticate(request: Request, api_keys: frozenset[str] | None) -> None:
    """The bearer key; any non-empty one unless `api_keys` restricts. The key is never echoed whole."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    key = token.strip() if scheme.lower() == "bearer" else ""
    if not key:
        raise OpenAIError(401, _NO_KEY)
    if api_keys is not None and key not in api_keys:
        raise OpenAIError(
            401,
            f"Incorrect API key provided: {_masked(key)}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            code="invalid_api_key",
        )


def _masked(key: str) -> str:
    return "*" * len(key) if len(key) < 12 else f"{key[:3]}{'*' * (len(key) - 7)}{key[-4:]}"


def openai_error_response(request: Request, error: Exception) -> Response:
    """An `OpenAIError`, or a routing error or crash met by an OpenAI caller, in OpenAI's error shape."""
    if isinstance(error, HTTPException):
        status = error.status_code
        what = "URL" if status == 404 else "method for URL"
        message = f"Invalid {what} ({request.method} {request.url.path})"
        if status not in (404, 405):
            message = str(error.detail)
        error = OpenAIError(status, message)
    elif not isinstance(error, OpenAIError):
        error = OpenAIError(500)
    identifier = request_id(request)
    headers = {**error.headers, "x-request-id": identifier, "request-id": identifier}
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


class Upload:
    """A multipart upload: the file's name and bytes, and the other fields as text."""

    def __init__(self, filename: str, content: bytes, fields: dict[str, str]) -> None:
        self.filename = filename
        self.content = content
        self.fields = fields


async def read_upload(request: Request, limit: int) -> Upload:
    """The `file` part and the text fields of a `multipart/form-data` body of at most `limit` bytes of file."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + _FORM_OVERHEAD:
        raise OpenAIError(413, f"File is too large. Files can be at most {limit} bytes.", param="file")
    async with request.form(max_files=1, max_fields=16) as form:
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise missing_parameter("file")
        content = await file.read()
        fields = {key: value for key, value in form.multi_items() if isinstance(value, str)}
        return Upload(file.filename or "file", content, fields)
