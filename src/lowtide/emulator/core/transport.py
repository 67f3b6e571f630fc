"""The in-process transport to an emulator's app: calls wait on the emulator's clock, and an answer a fault drops
is lost as over a socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx2
from starlette.types import ASGIApp

from lowtide.emulator.core.http import IN_PROCESS
from lowtide.http.dropped import ConnectionDropped

__all__ = ["in_process_transport"]


def in_process_transport(app: ASGIApp) -> httpx2.ASGITransport:
    """A transport to `app`, declaring ASGI spec 2.4 (see `Emulator.transport`)."""

    async def in_process(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        asgi = {**scope.get("asgi", {}), "spec_version": "2.4"}
        extensions: dict[str, Any] = {**(scope.get("extensions") or {}), IN_PROCESS: {}}
        await app({**scope, "asgi": asgi, "extensions": extensions}, receive, send)

    return _InProcessTransport(app=in_process)


class _InProcessTransport(httpx2.ASGITransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """The app's answer; one it dropped (`ConnectionDropped`) is lost as over a socket: before its body, the call
        fails; part way through, what was sent arrives, then the body breaks."""
        app = self.app
        started: list[MutableMapping[str, Any]] = []
        sent: list[bytes] = []

        async def watched(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            async def keep(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    started.append(message)
                elif message["type"] == "http.response.body" and message.get("body"):
                    sent.append(message["body"])
                await send(message)

            await app(scope, receive, keep)

        transport = httpx2.ASGITransport(app=watched, root_path=self.root_path, client=self.client)
        try:
            return await transport.handle_async_request(request)
        except ConnectionDropped:
            if not sent:
                lost = "Server disconnected without sending a response."
                raise httpx2.RemoteProtocolError(lost, request=request) from None
            start = started[0]
            return httpx2.Response(
                start["status"], headers=start.get("headers", []), stream=_BrokenStream(sent, request), request=request
            )


class _BrokenStream(httpx2.AsyncByteStream):
    """A body that breaks after the bytes the app sent before it dropped the connection."""

    def __init__(self, sent: list[bytes], request: httpx2.Request) -> None:
        self._sent = sent
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._sent:
            yield part
        raise httpx2.RemoteProtocolError(
            "peer closed connection without sending complete message body (incomplete chunked read)",
            request=self._request,
        )
