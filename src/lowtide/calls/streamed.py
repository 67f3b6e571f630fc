"""`Actor.stream`'s path: a live call through its provider's streaming API (the actor's live caller around it); any
other call answered as `run` answers it (the ledger, its keys, never paying twice), as the one event."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

from pydantic import BaseModel

from lowtide.calls.arguments import check_call, check_response_model
from lowtide.calls.checks import refuse_over
from lowtide.calls.face import ActorFace
from lowtide.config.actors import BatchProcessingMode
from lowtide.live.caller import LiveCaller
from lowtide.provider import Provider
from lowtide.streaming import StreamEvent
from lowtide.types import ActorResponse

__all__ = ["streamed"]

Mode = BatchProcessingMode | str | None


async def streamed(
    actor: ActorFace,
    live: Callable[[Provider], LiveCaller],
    run: Callable[[], Awaitable[ActorResponse[object]]],
    prompt: str | None,
    response_model: type[BaseModel] | None,
    mode: Mode,
    key: str | None,
    max_cost_usd: float | None,
    arguments: dict[str, Any],
) -> AsyncGenerator[StreamEvent, None]:
    """The call's pieces, then its `ActorResponse`: streamed when it is a live call, else `run()`'s answer alone."""
    provider = await actor.ready(mode)
    if provider.mode is not BatchProcessingMode.LIVE or provider.batch_backend() is not None:
        yield await run()
        return
    check_call(key, max_cost_usd)
    check_response_model(response_model)
    request = actor.request(prompt, response_model=response_model, **arguments)
    await provider.preflight(request)
    if max_cost_usd is not None:
        refuse_over(actor.configuration, request, max_cost_usd, mode=provider.mode)
    async with aclosing(live(provider).stream(request, provider.stream)) as stream:
        async for event in stream:
            yield event
