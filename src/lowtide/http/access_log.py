"""`--access-log` (`lowtide serve`, `lowtide emulator`): one line per request on lowtide's log, at info level on the
`lowtide.access` logger (which the option turns on): its method, path, status and how long the answer took, logged
once the answer has been sent (a streamed one at its end). Never its query string, headers or body, which may hold
keys; characters in the path that could forge a line of the log are escaped."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AccessLog"]

_log = logging.getLogger("lowtide.access")
_LONGEST_PATH = 200


class AccessLog:
    """An ASGI app that logs each HTTP request `app` answers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        _log.setLevel(logging.INFO)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            _log.info("%s %s %s %.1f ms", scope["method"], _printable(scope["path"]), status or "-", elapsed)


def _printable(path: str) -> str:
    """`path` as one line of plain ASCII: control and other characters escaped, and cut when very long."""
    shown = path.encode("unicode_escape").decode("ascii")
    return shown if len(shown) <= _LONGEST_PATH else f"{shown[:_LONGEST_PATH]}..."
