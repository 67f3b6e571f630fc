"""An emulation's route as a Starlette endpoint, the same way for every API: the call is counted in `calls` (failed
ones included), checked by the API (`Emulation.begin`: its key, its headers) and exposed to the faults armed for its
route before it touches any state; the state file is saved after it did; its answer goes out as the after-commit,
slow and cut faults let it (lost, late, paced, or broken part way). Errors of the emulator's own vocabulary
(`ApiError`) leave in the API's terms (`Emulation.translate`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lowtide.core.clock import Clock
from lowtide.emulator.core.emulation import Emulation
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.core.http import IN_PROCESS, Answer, DroppedResponse, Handler, Headed, Streamed, chunked, cut_off
from lowtide.emulator.core.jsonutil import as_object

__all__ = ["Endpoint", "Wait", "endpoint", "waiter"]

Wait = Callable[[float], Awaitable[None]]
Endpoint = Callable[[Request], Awaitable[Response]]


def waiter(clock: Clock, request: Request) -> Wait:
    """In process, waits are on the emulator clock (a `ManualClock` moves at once); over a socket, real."""
    in_process = IN_PROCESS in (as_object(request.scope.get("extensions")) or {})
    return clock.sleep if in_process else asyncio.sleep


def endpoint(emulation: Emulation, route: str, handler: Handler) -> Endpoint:
    """The endpoint serving `handler` as `emulation`'s route named `route`."""
    shared = emulation.shared

    async def serve(request: Request) -> Response:
        try:
            # Counted first, so that a call that fails (auth, fault, validation) still shows in `calls`.
            shared.calls[route] += 1
            emulation.begin(request)
            fault = shared.faults.take(route)
            if fault is not None:
                raise fault
            answer = await handler(request)
        except ApiError as error:
            translated = emulation.translate(error)
            if translated is error:
                raise
            raise translated from None
        finally:
            # Every call counts, failed ones included, and may have changed batches, files or the cache.
            shared.save()
        return await _deliver(emulation, request, route, answer)

    return serve


async def _deliver(emulation: Emulation, request: Request, route: str, answer: Answer) -> Response:
    """The answer of a call that did its work, as the after-commit and slow faults armed for `route` let it go."""
    faults = emulation.shared.faults
    wait = waiter(emulation.shared.clock, request)
    headers = emulation.answer_headers(request)
    after = faults.take_after_commit(route)
    if after is not None and after.kind == "drop":
        return DroppedResponse(_response(answer, None, wait, headers))
    if after is not None:
        await wait(after.seconds)
    pause = faults.take_slow(route)
    if pause is not None and not isinstance(answer, Streamed):
        await wait(pause)
    cut = faults.take_cut(route) if isinstance(answer, Streamed) else None
    if isinstance(answer, Streamed) and cut is not None:  # each line sent as it comes, up to the cut
        answer = Streamed(cut_off(answer.pieces, cut), answer.media_type, answer.headers)
    return _response(answer, pause, wait, headers)


def _response(answer: Answer, pause: float | None, wait: Wait, headers: dict[str, str]) -> Response:
    if isinstance(answer, Headed):
        return JSONResponse(answer.body, headers={**headers, **answer.headers})
    if not isinstance(answer, Streamed):
        return JSONResponse(answer, headers=headers)
    headers = {**headers, **(answer.headers or {})}
    if answer.media_type == "text/event-stream":
        headers["cache-control"] = "no-cache"
    if pause is not None:
        body = _paced(answer.pieces, pause, wait)
    elif answer.gather:
        body = chunked(answer.pieces)
    else:
        body = _each(answer.pieces)
    return StreamingResponse(body, media_type=answer.media_type, headers=headers)


async def _each(pieces: Iterable[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


async def _paced(pieces: Iterable[bytes], pause: float, wait: Wait) -> AsyncIterator[bytes]:
    """One piece (a results line, an event) at a time, each `pause` seconds after the one before."""
    for piece in pieces:
        await wait(pause)
        yield piece
