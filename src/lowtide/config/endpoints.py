"""The address and key a provider's client is built with, checked before anything is recorded or sent, and a
connection to that address that could not be made, said in a user's words.

A malformed base URL, or a key holding whitespace or a control character (a newline a copy left at its end), is a
`ConfigurationError` at once, naming `base_url` or `api_key` and where the value came from; a key is never echoed.
A connection that could not be made at all (refused: nothing listens there; a host name that does not resolve) is
`APIUnreachableError`, naming host and port: nothing of that call was sent, and it is almost always the configuration,
so it is retried only briefly (`UNREACHABLE_WAITS`), unlike a timeout or a connection dropped mid-call.

Which environment variables hold a provider's address and key is the provider's to say: it passes their names here
as `source`.
"""

from __future__ import annotations

import errno
import socket
import unicodedata
from urllib.parse import urlsplit

from lowtide.errors import APIUnreachableError, ConfigurationError
from lowtide.ledger.location import redacted

__all__ = ["UNREACHABLE_WAITS", "base_url_problem", "check_api_key", "check_base_url", "unreachable"]

UNREACHABLE_WAITS = (0.5, 1.0, 2.0)
"""Seconds before each retry of a call whose connection could not be made: three more tries within 3.5 s, for an API
that is starting up; then the error is the caller's."""

_SCHEMES = ("http", "https")
_CHARACTER_NAMES = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", " ": "a space"}


def check_base_url(value: str, *, source: str = "base_url") -> str:
    """`value` if it is a URL an SDK can call (http or https, a host, a valid port, no whitespace), else a
    `ConfigurationError` naming `base_url` and `source` (the setting or environment variable it came from)."""
    problem = base_url_problem(value)
    if problem is None:
        return value
    where = "base_url" if source == "base_url" else f"base_url (from {source})"
    shown = f" {redacted(value)!r}" if value.strip() else ""
    raise ConfigurationError(f"{where}{shown} {problem}", field="base_url")


def base_url_problem(value: str) -> str | None:
    """What makes `value` a base URL no SDK can call, in words that follow the URL; None when it is usable."""
    if not value.strip():
        return "is empty; give the API's address (as in https://api.example.com), or unset it for the provider's own."
    bad = _unusable_character(value)
    if bad is not None:
        return f"holds {bad}; a URL holds none (percent-encode it, as %20 for a space)."
    parts = urlsplit(value)
    if parts.scheme.lower() not in _SCHEMES:
        found = f"its scheme is {parts.scheme!r}" if parts.scheme else "it has no scheme"
        return f"is not an http:// or https:// URL ({found}); write it as https://host[:port][/path]."
    if not parts.hostname:
        return "has no host; write it as https://host[:port][/path]."
    try:
        _ = parts.port
    except ValueError:
        return "has a port that is not a number from 0 to 65535; write it as https://host[:port][/path]."
    return None


def check_api_key(value: str, *, source: str) -> str:
    """`value` if it can travel in an HTTP header as it is: printable ASCII, no whitespace. Else a
    `ConfigurationError` naming `api_key`, `source` (the variable or argument it came from) and what is wrong with
    it, never the key itself."""
    for position, character in enumerate(value):
        if "!" <= character <= "~":
            continue
        what = _CHARACTER_NAMES.get(character) or ("whitespace" if character.isspace() else "a control character")
        if character > "~" and not character.isspace() and not unicodedata.category(character).startswith("C"):
            what = "a character beyond ASCII"
        at = "at its start" if position == 0 else "at its end" if position == len(value) - 1 else "inside it"
        raise ConfigurationError(
            f"The API key (from {source}) holds {what} {at}; a key is letters, digits and punctuation only. A copy"
            " often brings a newline or a space along: set the key again without it.",
            field="api_key",
        )
    return value


def unreachable(error: BaseException, url: str) -> APIUnreachableError | None:
    """The `APIUnreachableError` for a call to `url` that failed with `error`, when the connection could not be made
    at all (refused, unknown host, no route); None for any other failure (a timeout, a connection dropped mid-call)."""
    reason = _connect_failure(error)
    if reason is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or "(no host)"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = 443 if parts.scheme.lower() == "https" else 80
    shown = f"[{host}]" if ":" in host else host
    return APIUnreachableError(f"could not connect to {shown}:{port} ({reason})", host=host, port=port, reason=reason)


def _connect_failure(error: BaseException) -> str | None:
    """Why a connection could not be made, from the OS error at the bottom of `error`'s chain; None if it was
    made (or the chain does not say)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        match current:
            case ConnectionRefusedError():
                return "connection refused"
            case socket.gaierror():
                if current.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
                    return "host not found"
                return f"host name lookup failed: {current.strerror or current}"
            case OSError() if current.errno == errno.ENETUNREACH:
                return "network unreachable"
            case OSError() if current.errno == errno.EHOSTUNREACH:
                return "no route to host"
            case _:
                pass
        current = current.__cause__ or current.__context__
    return None


def _unusable_character(value: str) -> str | None:
    for character in value:
        if character.isspace() or unicodedata.category(character).startswith("C"):
            return _CHARACTER_NAMES.get(character) or _kind_of(character)
    return None


def _kind_of(character: str) -> str:
    # Only whitespace and control characters are asked about (`_unusable_character`).
    return "whitespace" if character.isspace() else f"a control character (U+{ord(character):04X})"
