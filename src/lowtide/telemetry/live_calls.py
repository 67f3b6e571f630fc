"""A live call's span when the live caller is reached without an actor's call around it (a live bulk run's item):
`TracedLiveCalls`, the caller's own path wrapped in its span; and the events of any live call: retries by class,
rate-limit pauses. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from lowtide.telemetry.attributes import content_attributes, request_attributes
from lowtide.telemetry.calls import call_event, traced_call
from lowtide.telemetry.metrics import instruments
from lowtide.telemetry.switch import capture_content, metering
from lowtide.types import ActorRequest, ActorResponse

__all__ = ["TracedLiveCalls", "rate_limited", "retried"]

Answer = Callable[[ActorRequest, float | None], Coroutine[Any, Any, ActorResponse[object]]]


class TracedLiveCalls:
    """A live caller's calls, each inside its call span (`chat {model}`): the caller's own path (`answer`),
    unchanged, with the same face. Made once, the first time a live caller calls with telemetry on."""

    def __init__(self, provider: str, gen_ai_provider: str | None, answer: Answer) -> None:
        self._provider = provider
        """`lowtide.provider` of the spans."""
        self._gen_ai_provider = gen_ai_provider
        """`gen_ai.provider.name` of the spans (the provider's `telemetry_name()`; None: `provider`)."""
        self._answer = answer

    def call(self, request: ActorRequest, deadline: float | None) -> Coroutine[Any, Any, ActorResponse[object]]:
        """`request` answered inside its span (a coroutine: the span's own is the only frame it adds)."""
        parameters = request.model_dump(include={"max_tokens", "temperature", "top_p", "top_k", "stop_sequences"})
        attributes = request_attributes(
            provider=self._provider,
            gen_ai_provider=self._gen_ai_provider,
            model=request.model,
            mode="live",
            parameters=parameters,
            key=request.custom_id,
        )
        if capture_content():
            attributes.update(content_attributes(request.messages, request.system, None))
        answer = self._answer
        return traced_call(request.model, attributes, lambda: answer(request, deadline))


def retried(reason: str, attempt: int, wait: float) -> None:
    """A live call tried again (`live.events.Retried`): an event on its span, and `lowtide.retries` by class."""
    call_event("retry", {"lowtide.retry.class": reason, "lowtide.retry.attempt": attempt,
                         "lowtide.retry.wait_s": wait})  # fmt: skip
    if metering():
        instruments().retries.add(1, {"lowtide.retry.class": reason})


def rate_limited(retry_after: float | None, attempt: int) -> None:
    """A 429: the scope pauses (an event on the call's span, and `lowtide.rate_limit.pauses`)."""
    attributes: dict[str, str | int | float | bool] = {"lowtide.attempt": attempt}
    if retry_after is not None:
        attributes["lowtide.retry_after_s"] = retry_after
    call_event("rate_limit.pause", attributes)
    if metering():
        instruments().rate_limit_pauses.add(1)
