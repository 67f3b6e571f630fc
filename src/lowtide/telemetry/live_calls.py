"""A live call's span when the live caller is reached without an actor's call around it (a live bulk run's item),
and the events of any live call: retries by class, rate-limit pauses. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from lowtide.live.events import Retried
from lowtide.telemetry.attributes import content_attributes, request_attributes
from lowtide.telemetry.calls import call_event, traced_call
from lowtide.telemetry.metrics import instruments
from lowtide.telemetry.switch import capture_content, metering
from lowtide.types import ActorRequest

__all__ = ["rate_limited", "retried", "traced_live_call"]

R = TypeVar("R")


async def traced_live_call(
    provider: str, gen_ai_provider: str | None, request: ActorRequest, answer: Callable[[], Awaitable[R]]
) -> R:
    parameters = request.model_dump(include={"max_tokens", "temperature", "top_p", "top_k", "stop_sequences"})
    attributes = request_attributes(
        provider=provider,
        gen_ai_provider=gen_ai_provider,
        model=request.model,
        mode="live",
        parameters=parameters,
        key=request.custom_id,
    )
    if capture_content():
        attributes.update(content_attributes(request.messages, request.system, None))
    return await traced_call(request.model, attributes, answer)


def retried(event: Retried) -> None:
    """A live call tried again: an event on its span, and `lowtide.retries` by class."""
    call_event("retry", {"lowtide.retry.class": event.reason, "lowtide.retry.attempt": event.attempt,
                         "lowtide.retry.wait_s": event.wait})  # fmt: skip
    if metering():
        instruments().retries.add(1, {"lowtide.retry.class": event.reason})


def rate_limited(retry_after: float | None, attempt: int) -> None:
    """A 429: the scope pauses (an event on the call's span, and `lowtide.rate_limit.pauses`)."""
    attributes: dict[str, str | int | float | bool] = {"lowtide.attempt": attempt}
    if retry_after is not None:
        attributes["lowtide.retry_after_s"] = retry_after
    call_event("rate_limit.pause", attributes)
    if metering():
        instruments().rate_limit_pauses.add(1)
