"""`lowtide serve`'s streamed answers: in batch mode the finished answer replayed once its batch has ended; in live mode
`Actor.stream`'s pieces relayed as they arrive, in the served API's own stream shapes (`LiveWire.relay`), and the
upstream call canceled when the client goes away. Also how a failure is answered, streamed or not."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterator

from starlette.responses import JSONResponse, Response, StreamingResponse

from lowtide.errors import ActorError
from lowtide.messages.relay import Relay, RelayStep, StreamFinished, ThinkingRelay, steps
from lowtide.messages.wire import LiveWire, Refusal, ServedCall, Wire
from lowtide.streaming import StreamEvent
from lowtide.types import ActorResponse

__all__ = ["KEEPALIVE_SECONDS", "failure", "refused", "relayed", "replayed"]

KEEPALIVE_SECONDS = 15.0
"""How often a streamed answer waiting on its batch sends an SSE comment, so that idle-connection timeouts do not end
the wait."""
_log = logging.getLogger("lowtide.serve")


def failure(wire: Wire, error: BaseException) -> Refusal:
    """A call that failed after its checks, as the API would answer: lowtide's errors as the wire maps them, anything
    else a 500 in the API's shape (its traceback logged at debug level)."""
    if isinstance(error, ActorError):
        return wire.refusal(error)
    _log.debug("traceback", exc_info=error)
    return Refusal(500, "api_error", f"lowtide serve failed to answer: {type(error).__name__}: {error}")


def logged(refusal: Refusal) -> Refusal:
    if refusal.status >= 500:
        _log.warning("request failed: %s", refusal.message)
    return refusal


def refused(wire: Wire, refusal: Refusal) -> JSONResponse:
    body = wire.error_body(logged(refusal))
    return JSONResponse(body, status_code=refusal.status, headers=dict(refusal.headers))


def replayed(wire: Wire, call: ServedCall, outcome: asyncio.Future[ActorResponse[object]]) -> StreamingResponse:
    """The answer replayed as events once its batch has ended; until then an SSE comment now and then, which clients
    ignore. A client that goes away leaves the call running: its answer is kept in the ledger for the next ask."""
    return StreamingResponse(_replay(wire, call, outcome), media_type="text/event-stream")


async def _replay(wire: Wire, call: ServedCall, outcome: asyncio.Future[ActorResponse[object]]) -> AsyncIterator[bytes]:
    try:
        while True:
            done, _ = await asyncio.wait({outcome}, timeout=KEEPALIVE_SECONDS)
            if done:
                break
            yield b": waiting on a batch\n\n"
        response = outcome.result()
    except Exception as error:
        yield wire.error_event(logged(failure(wire, error)))
        return
    for event in wire.events(wire.message(response, call), call):
        yield event


async def relayed(wire: Wire, call: ServedCall, events: AsyncGenerator[StreamEvent, None]) -> Response:
    """A live call's answer relayed while it is written. Its first piece is awaited before the stream opens, so that a
    call refused or failed before any piece is answered with the API's status and error body, as unstreamed; a failure
    after it ends the stream with the API's error event. A client that goes away mid-stream cancels the call (the
    server stops reading the stream, which closes it: `Actor.stream` cancels its upstream call when left)."""
    relay = wire.relay(call) if isinstance(wire, LiveWire) else _Replay(wire, call)
    walked = steps(events, thinking=isinstance(relay, ThinkingRelay))
    try:
        first = await anext(walked)
    except Exception as error:
        await walked.aclose()
        await events.aclose()
        return refused(wire, failure(wire, error))
    return StreamingResponse(_relay(wire, relay, first, walked, events), media_type="text/event-stream")


async def _relay(
    wire: Wire,
    relay: Relay,
    first: RelayStep,
    walked: AsyncGenerator[RelayStep, None],
    events: AsyncGenerator[StreamEvent, None],
) -> AsyncIterator[bytes]:
    step = first
    try:
        while True:
            for chunk in relay.step(step):
                yield chunk
            if isinstance(step, StreamFinished):
                return
            step = await anext(walked)
    except Exception as error:
        yield wire.error_event(logged(failure(wire, error)))
    finally:
        # Left early (the client went away, or a failure), `Actor.stream` cancels its upstream call when closed.
        await walked.aclose()
        await events.aclose()


class _Replay:
    """The relay of a wire that has none (a provider's own wire written before `LiveWire`): the answer replayed whole
    once it is."""

    def __init__(self, wire: Wire, call: ServedCall) -> None:
        self._wire = wire
        self._call = call

    def step(self, step: RelayStep) -> Iterator[bytes]:
        if isinstance(step, StreamFinished):
            yield from self._wire.events(self._wire.message(step.response, self._call), self._call)
