"""One TLS context for every HTTP client a behave process makes: the SDKs' clients (httpx's) each build one from the
certificate bundle (40 ms of CPU apiece), though every test reaches its servers over plain HTTP on loopback."""

from __future__ import annotations

import ssl
from typing import Any

_DEFAULT = ssl.create_default_context
_MADE: dict[tuple[object, ...], ssl.SSLContext] = {}


def _create_default_context(
    purpose: ssl.Purpose = ssl.Purpose.SERVER_AUTH,
    *,
    cafile: Any = None,
    capath: Any = None,
    cadata: Any = None,
) -> ssl.SSLContext:
    """`ssl.create_default_context`, made once for each set of arguments and shared (as httpx's documentation has a
    program share one context between clients); the clients only read it: no test opens a TLS connection."""
    key = (purpose, cafile, capath, cadata)
    if key not in _MADE:
        _MADE[key] = _DEFAULT(purpose, cafile=cafile, capath=capath, cadata=cadata)
    return _MADE[key]


def install() -> None:
    """Share the contexts in this process (features/environment.py, as behave starts)."""
    ssl.create_default_context = _create_default_context
