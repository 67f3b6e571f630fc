"""Servers on loopback sockets started once per feature and shared by its scenarios: each scenario puts its own ASGI
app (a new emulator, a new `lowtide serve` app over new actors) behind a server the feature keeps, so that what a
scenario sees is its own, as with servers of its own, without a uvicorn start and stop (0.2 to 2 s on a loaded
machine, three times a scenario in serve_refusals.feature) each time.

A scenario's apps are taken down at its end (`Slot.serve` registers that): its actors closed on the server's event
loop, where their engines and clients live (a server of the scenario's own closed them by ending its loop), then the
slot emptied, so that nothing of one scenario answers or runs in the next. The feature's servers stop after its last
scenario (`context.feature_cleanups`, features/environment.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from step_context import Context as StepContext

from lowtide.http.server import app_in_thread

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
_CLOSE_TIMEOUT = 60.0


class Closable(Protocol):
    async def aclose(self) -> None: ...


@dataclass
class Slot:
    """A server the feature keeps: its URL, and the app of the scenario now running (None between scenarios)."""

    url: str = ""
    app: ASGIApp | None = None
    loop: asyncio.AbstractEventLoop | None = None
    closing: list[Closable] = field(default_factory=list[Closable])
    taken_down: bool = True
    """Whether the scenario's apps are gone (or none came): the next `serve` registers their take-down."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # the server's own start and stop: the scenarios' apps have no lifespan
            self.loop = asyncio.get_running_loop()
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        app = self.app
        if app is None:  # a client still sending after its scenario ended: no scenario's app answers it
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b"no scenario is running"})
            return
        await app(scope, receive, send)

    def serve(self, context: StepContext, app: ASGIApp, *closing: Closable) -> None:
        """`app` answers at `url` until the scenario ends; then `closing` (its actors) are closed on the server's loop
        and the slot emptied."""
        self.app = app
        self.closing.extend(closing)
        if self.taken_down:  # the scenario's first app here: one take-down for all of them
            self.taken_down = False
            context.cleanups.append(self._take_down)

    def _take_down(self) -> None:
        closing, self.closing, self.taken_down = self.closing, [], True
        try:
            if closing:
                assert self.loop is not None
                done = asyncio.run_coroutine_threadsafe(_close_all(closing), self.loop)
                done.result(_CLOSE_TIMEOUT)
        finally:
            self.app = None


async def _close_all(closing: list[Closable]) -> None:
    for each in closing:
        await each.aclose()


def shared_server(context: StepContext, name: str, *, access_log: bool = False) -> Slot:
    """The feature's server called `name`, started on the first call in the feature (on a loopback port of its own,
    with lowtide's access log if `access_log`)."""
    servers = context.shared_servers
    if name not in servers:
        slot = Slot()
        slot.url, _ = context.feature_cleanups.enter_context(app_in_thread(slot, access_log=access_log))
        servers[name] = slot
    found = servers[name]
    assert isinstance(found, Slot), found
    return found
