"""HTTP plumbing of the Gemini routes: the caller's key (`x-goog-api-key`, or the `key` query parameter), checked as
the API checks it, and which callers are Gemini's (the SDK's key header, or its client header)."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request

from lowtide.emulator.gemini.errors import GeminiError, bad_key

__all__ = ["authenticate", "gemini_key", "is_gemini_caller"]

_NO_KEY = (
    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other "
    "form of API consumer identity to call this API."
)


def gemini_key(request: Request) -> str:
    return (request.headers.get("x-goog-api-key") or request.query_params.get("key") or "").strip()


def authenticate(request: Request, api_keys: frozenset[str] | None) -> None:
    """Any non-empty key unless `api_keys` restricts; a missing key is 403, a wrong one 400 (as Gemini answers)."""
    key = gemini_key(request)
    if not key:
        raise GeminiError(403, _NO_KEY)
    if api_keys is not None and key not in api_keys:
        raise bad_key()


def is_gemini_caller(headers: Headers) -> bool:
    """The google-genai SDK sends its key as `x-goog-api-key` and names itself in `x-goog-api-client`."""
    return "x-goog-api-key" in headers or "google-genai-sdk" in headers.get("x-goog-api-client", "")
