"""An actor's call as a span: its attributes read from the actor's configuration and the call's own arguments, and,
for the answer of a parked call, the trace it was parked in. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar, cast

from opentelemetry.context import Context

from lowtide.config import ActorConfiguration
from lowtide.telemetry.attributes import Attributes, content_attributes, request_attributes
from lowtide.telemetry.calls import traced_call
from lowtide.telemetry.propagation import context_of
from lowtide.telemetry.switch import capture_content
from lowtide.types import ChatMessage

__all__ = ["call_attributes", "traced_actor_call"]

R = TypeVar("R")

_PARAMETERS = ("max_tokens", "temperature", "top_p", "top_k", "stop_sequences")


def call_attributes(
    configuration: ActorConfiguration,
    *,
    mode: str,
    key: str | None,
    prompt: str | None,
    arguments: Mapping[str, object],
) -> tuple[str, Attributes]:
    """The model and span attributes of a call of an actor with `arguments` (its own, over the configuration's)."""
    model = arguments.get("model")
    model = model if isinstance(model, str) else configuration.model
    parameters = {name: arguments.get(name, getattr(configuration, name, None)) for name in _PARAMETERS}
    attributes = request_attributes(
        provider=configuration.provider, model=model, mode=mode, parameters=parameters, key=key
    )
    attributes["lowtide.actor"] = configuration.name
    if capture_content():
        messages = arguments.get("messages")
        system = arguments.get("system", configuration.system_prompt)
        attributes.update(content_attributes(_messages(messages), system, prompt))
    return model, attributes


def _messages(value: object) -> Sequence[ChatMessage | Mapping[str, object]] | None:
    """A call's `messages` as given: ChatMessages or mappings (anything else is left out of the attribute)."""
    if not isinstance(value, list | tuple):
        return None
    items = cast("Sequence[object]", value)
    return [cast("ChatMessage | Mapping[str, object]", item) for item in items if isinstance(item, ChatMessage | dict)]


async def traced_actor_call(
    model: str,
    attributes: Attributes,
    answer: Callable[[], Awaitable[R]],
    *,
    stored: str | None = None,
) -> R:
    """`answer()` in a call's span: a child of the current span, or of the trace `stored` with a parked request."""
    parent: Context | None = context_of(stored)
    return await traced_call(model, attributes, answer, context=parent)
