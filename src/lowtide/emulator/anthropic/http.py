"""What the Anthropic API asks of every call's headers: a key (`x-api-key`, or a bearer token), the
`anthropic-version` header, and the betas `anthropic-beta` names; and how its callers are told from other APIs'."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import Request

from lowtide.emulator.anthropic.betas import parse_betas
from lowtide.emulator.core.errors import ApiError, invalid_request
from lowtide.emulator.core.http import api_key

__all__ = ["authenticate", "betas", "is_anthropic_caller", "require_version"]


def is_anthropic_caller(headers: Headers) -> bool:
    """Anthropic's clients send `x-api-key` or `anthropic-version`, which no other API's client sends."""
    return "x-api-key" in headers or "anthropic-version" in headers


def authenticate(request: Request, api_keys: frozenset[str] | None) -> None:
    """The key from `x-api-key` or `Authorization: Bearer`; any non-empty one unless `api_keys` restricts."""
    key = api_key(request)
    if not key:
        raise ApiError("authentication_error", "x-api-key header is required")
    if api_keys is not None and key not in api_keys:
        raise ApiError("authentication_error", "invalid x-api-key")


def betas(request: Request) -> frozenset[str]:
    """The betas the request's `anthropic-beta` headers name."""
    return parse_betas(request.headers.getlist("anthropic-beta"))


def require_version(request: Request) -> None:
    if not request.headers.get("anthropic-version"):
        raise invalid_request("anthropic-version: header is required")
