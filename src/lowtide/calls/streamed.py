"""`Actor.stream`'s path: a live call through its provider's streaming API (the actor's live caller around it); any
other call answered as `run` answers it (the ledger, its keys, never paying twice), as the one event."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing

from lowtide.calls.checks import refuse_over
from lowtide.calls.face import ActorFace
from lowtide.config.actors import BatchProcessingMode
from lowtide.live.caller import LiveCaller
from lowtide.provider import Provider
from lowtide.streaming import StreamEvent
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["streamed"]

Mode = BatchProcessingMode | str | None


async def streamed(
    actor: ActorFace,
    mode: Mode,
    live: Callable[[Provider], LiveCaller],
    whole: Callable[[], Awaitable[ActorResponse[object]]],
    request: Callable[[], ActorRequest],
    max_cost_usd: float | None,
) -> AsyncGenerator[StreamEvent, None]:
    """The call's pieces, then its `ActorResponse`: streamed when it is a live call (its `request()` built, checked
    and within `max_cost_usd`), else `whole()`'s answer alone (`run`'s)."""
    provider = await actor.ready(mode)
    if provider.mode is not BatchProcessingMode.LIVE or provider.batch_backend() is not None:
        yield await whole()
        return
    call = request()
    await provider.preflight(call)
    if max_cost_usd is not None:
        refuse_over(actor.configuration, call, max_cost_usd, mode=provider.mode)
    async with aclosing(live(provider).stream(call, provider.stream)) as stream:
        async for event in stream:
            yield event
