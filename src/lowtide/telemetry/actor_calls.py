"""The attributes of an actor's call span, read from the actor's configuration and the call's own arguments (what
`calls.traced.TracedCalls` and the later spans of `run_many` put on a span). Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from lowtide.config.actors import ActorConfiguration
from lowtide.telemetry.attributes import Attributes, content_attributes, request_attributes
from lowtide.telemetry.switch import capture_content
from lowtide.types import ChatMessage

__all__ = ["call_attributes"]

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
