"""What the Mistral step modules share: the transport that keeps the chat bodies sent to the emulator, and the
answers a scenario queues in place of the emulator's."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from _support import World

__all__ = ["Recording", "canned", "sent", "unreachable"]


class Recording(httpx2.AsyncBaseTransport):
    """The emulator's transport, keeping the JSON body of every chat completions call, streamed or not. A scenario
    may queue answers of its own for a path (`canned`: Mistral's API answering in a way the emulator does not) and
    name paths that cannot be reached (`unreachable`)."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        sent: list[Any],
        canned: dict[str, list[httpx2.Response]],
        unreachable: set[str],
    ) -> None:
        self._inner = inner
        self._sent = sent
        self._canned = canned
        self._unreachable = unreachable

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path.endswith("/v1/chat/completions"):
            self._sent.append(json.loads(await request.aread()))
        if any(path.startswith(prefix) for prefix in self._unreachable):
            raise httpx2.ConnectError("connection refused", request=request)
        queued = self._canned.get(path)
        if queued:
            return queued.pop(0)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def sent(w: World) -> list[Any]:
    return w.witnessed.setdefault("mistral chat", [])


def canned(w: World) -> dict[str, list[httpx2.Response]]:
    """The answers a scenario queued for a path, each given once instead of the emulator's."""
    return w.witnessed.setdefault("mistral canned", [{}])[0]


def unreachable(w: World) -> set[str]:
    """The paths a scenario made unreachable (a refused connection)."""
    return w.witnessed.setdefault("mistral unreachable", [set[str]()])[0]
