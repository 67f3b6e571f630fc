"""An actor's call as a span: its attributes read from the actor's configuration and the call's own arguments, and,
for the answer of a parked call, the trace it was parked in. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from opentelemetry.context import Context

from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.errors import ActorError
from lowtide.telemetry.attributes import Attributes, content_attributes, request_attributes
from lowtide.telemetry.calls import traced_call
from lowtide.telemetry.propagation import context_of
from lowtide.telemetry.switch import capture_content
from lowtide.types import ChatMessage

if TYPE_CHECKING:
    from lowtide.provider import Provider

__all__ = ["TracedActor", "call_attributes", "traced"]

R = TypeVar("R")

_PARAMETERS = ("max_tokens", "temperature", "top_p", "top_k", "stop_sequences")


def call_attributes(
    configuration: ActorConfiguration,
    *,
    gen_ai_provider: str | None = None,
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
        provider=configuration.provider,
        gen_ai_provider=gen_ai_provider,
        model=model,
        mode=mode,
        parameters=parameters,
        key=key,
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


class TracedActor(Protocol):
    """What a call's span needs of its actor."""

    @property
    def configuration(self) -> ActorConfiguration: ...

    def resolve_mode(self, mode: BatchProcessingMode | str | None = None) -> BatchProcessingMode: ...

    async def ready(self, mode: BatchProcessingMode | str | None = None) -> Provider: ...


async def traced(
    actor: TracedActor,
    entry: str,
    mode: BatchProcessingMode | str | None,
    key: str | None,
    prompt: str | None,
    arguments: Mapping[str, object],
    answer: Callable[[], Awaitable[R]],
    *,
    stored: str | None = None,
) -> R:
    """`answer()` (an actor's `run`, `submit` or `result`: `entry`) in a call's span: a child of the current span, or
    of the trace `stored` with a parked request."""
    resolved, gen_ai_provider = str(mode or actor.configuration.batch_processing), None
    try:
        chosen = actor.resolve_mode(mode)
        resolved = chosen.value
        gen_ai_provider = (await actor.ready(chosen)).telemetry_name()  # its SDK loaded off the event loop
    except ActorError:  # the call itself says why (raised inside its span)
        pass
    model, attributes = call_attributes(
        actor.configuration,
        gen_ai_provider=gen_ai_provider,
        mode=resolved,
        key=key,
        prompt=prompt,
        arguments=arguments,
    )
    attributes["lowtide.call"] = entry
    parent: Context | None = context_of(stored)
    return await traced_call(model, attributes, answer, context=parent)
