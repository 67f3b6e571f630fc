"""An emulator whose streamed answers wait after their first piece (of text, or of a tool call's arguments) until the
test lets them go on (`HeldStreams.release`), or until the one asking closes its connection, which is noted: so that
a scenario tells a piece relayed before the answer's end by order, not by time, and sees an abandoned stream closed.
Shared by serve_live.feature and streaming.feature."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from lowtide.emulator.emulator import Emulator
from lowtide.http.dropped import ConnectionDropped

__all__ = ["HOLD_SECONDS", "HeldStreams"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

HOLD_SECONDS = 60.0
"""The longest the emulator holds a stream for a client that never gets its first piece (the product's failure, the
scenario fails then): never reached when the relay works, whatever the machine's load."""
_PIECE = re.compile(
    rb'"text_delta"|"thinking_delta"|response\.output_text\.delta|"content":"[^"]|"text":"[^"]'
    rb'|"partial_json":"[^"]|function_call_arguments\.delta|"arguments":"[^"]'
)
"""A body chunk holding a piece of the answer (its text, its thinking, or a tool call's arguments), in any of the
emulator's stream shapes."""


class HeldStreams:
    """The emulator's app, its streamed answers held after their first piece until `release` (or until the
    one asking closes its connection, which is noted)."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self._app: Callable[[Scope, Receive, Send], Awaitable[None]] = emulator.app
        self.loop: asyncio.AbstractEventLoop | None = None
        self._released: asyncio.Event | None = None
        self.streams = 0
        self.held = 0
        """How many streams had their first piece sent and were waiting."""
        self.closed_while_held = threading.Event()
        self.cut_next = False
        """Whether the next stream breaks after its first piece instead, its connection dropped."""
        self.overran = 0
        """Streams that went on unreleased, after `HOLD_SECONDS`."""

    def reset(self) -> None:
        self.streams = self.held = self.overran = 0
        self.closed_while_held.clear()
        self._released = None

    def release(self) -> None:
        """Let the held streams go on (from any thread)."""
        loop, released = self.loop, self._released
        if loop is not None and released is not None:
            loop.call_soon_threadsafe(released.set)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        self.loop = asyncio.get_running_loop()
        if self._released is None:
            self._released = asyncio.Event()
        released = self._released
        state = {"streamed": False, "held": False}
        request_done = asyncio.Event()

        async def reading() -> Message:
            message = await receive()
            if not message.get("more_body"):
                request_done.set()
            return message

        async def holding(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                state["streamed"] = headers.get(b"content-type", b"").startswith(b"text/event-stream")
                self.streams += state["streamed"]
            body = message.get("body", b"") if message["type"] == "http.response.body" else b""
            first = state["streamed"] and not state["held"] and _PIECE.search(body) is not None
            cut = first and self.cut_next
            if first and not cut:
                # Counted before the piece is sent: a client (on another thread) may read it, and ask whether the
                # stream is held, before this coroutine runs again (it did, once, at a load of 8).
                self.held += 1
            await send(message)
            if not first:
                return
            state["held"] = True
            if cut:
                self.cut_next = False
                raise ConnectionDropped("the emulator broke the stream after its first piece, as asked")
            await self._hold(receive, released)

        await self._app(scope, reading, holding)

    async def _hold(self, receive: Receive, released: asyncio.Event) -> None:
        """Wait for `release`. A client that closes its connection meanwhile ends the answer here: seen as the
        disconnect itself, or as the cancel of the emulator's response that hears it first."""
        gone = asyncio.ensure_future(_disconnected(receive))
        opened = asyncio.ensure_future(released.wait())
        try:
            done, _ = await asyncio.wait({gone, opened}, timeout=HOLD_SECONDS, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self.closed_while_held.set()
            raise
        finally:
            for task in (gone, opened):
                task.cancel()
        if gone in done:
            self.closed_while_held.set()
            raise ConnectionResetError("the client closed the held stream")
        if not done:
            self.overran += 1


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
