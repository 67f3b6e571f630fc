"""A live call answered as a stream: the provider's stream is read inside the caller's usual path (middleware, quota,
retries, spending cap, span), in a task of its own, and its pieces are handed to the consumer as they arrive.

The path wants one `ActorResponse` back from its innermost call (middleware sees the request and the answer, the
quota settles on the answer's usage), while the consumer wants each piece at once: the innermost call reads the
provider's stream, queues the pieces and returns the finished answer; the consumer reads the queue until the task
ends, then gets the answer (or the task's error) as the last item.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

from lowtide.errors import ActorError, StreamInterruptedError
from lowtide.streaming import StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["Stream", "Streamer", "stream_call"]

Stream = AsyncGenerator[StreamEvent, None]
"""A streamed call as its consumer reads it."""
Streamer = Callable[[ActorRequest], AsyncIterator[StreamEvent]]
"""A provider's `stream`: one request's pieces, then its answer."""
Path = Callable[
    [ActorRequest, Callable[[ActorRequest], Awaitable[ActorResponse[object]]]], Awaitable[ActorResponse[object]]
]
"""The caller's path for one call, given the request and what answers one attempt of it."""
Piece = TextDelta | ToolCallDelta | ThinkingDelta


async def stream_call(request: ActorRequest, opened: Streamer, path: Path) -> Stream:
    """`request`'s pieces as `opened` streams them inside `path`, then its answer. An attempt that fails before it gave
    a piece is tried again as `run`'s would be; once a piece is given, a failure (or a stream that ends without its
    answer) is a `StreamInterruptedError`, never tried again: the consumer has seen part of an answer."""
    pieces: asyncio.Queue[Piece | None] = asyncio.Queue()
    given = 0

    async def attempt(sent: ActorRequest) -> ActorResponse[object]:
        nonlocal given
        if given:
            # An earlier attempt gave pieces and then timed out: a new one would give them again.
            raise StreamInterruptedError(f"The stream stopped after {given} piece(s) of its answer, within its time.")
        stream = opened(sent)
        try:
            async for event in stream:
                if isinstance(event, ActorResponse):
                    return event
                pieces.put_nowait(event)
                given += 1
        except StreamInterruptedError:
            raise
        except ActorError as exc:
            if given:
                raise StreamInterruptedError(f"The stream broke after {given} piece(s) of its answer: {exc}") from exc
            raise
        finally:
            if isinstance(stream, AsyncGenerator):
                await stream.aclose()
        raise StreamInterruptedError(f"The stream ended after {given} piece(s), before its answer was whole.")

    task = asyncio.ensure_future(path(request, attempt))
    task.add_done_callback(lambda _: pieces.put_nowait(None))
    try:
        while (piece := await pieces.get()) is not None:
            yield piece
        yield task.result()
    finally:
        if not task.done():  # the consumer stopped early (or was canceled): the call is abandoned with it
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # seen: an abandoned call's failure is no "exception never retrieved" in the log
