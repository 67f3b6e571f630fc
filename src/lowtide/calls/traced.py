"""An actor's calls wrapped in their spans (`TracedCalls`), beside the path they wrap (`path.ActorCalls`): each span's
attributes read from the actor's configuration and the call's own arguments, and, for the answer of a parked call,
the trace it was parked in. Imported only when telemetry is on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel

from lowtide.batching.tickets import Ticket
from lowtide.calls.path import Calls
from lowtide.config.actors import ActorConfiguration, BatchProcessingMode
from lowtide.errors import ActorError
from lowtide.ledger.records import RequestRecord
from lowtide.provider import Provider
from lowtide.telemetry.actor_calls import call_attributes
from lowtide.telemetry.attributes import Attributes
from lowtide.telemetry.calls import traced_call
from lowtide.telemetry.propagation import context_of
from lowtide.types import ActorResponse

__all__ = ["TracedActor", "TracedCalls"]


class TracedActor(Protocol):
    """What a call's span needs of its actor."""

    @property
    def configuration(self) -> ActorConfiguration: ...

    def resolve_mode(self, mode: BatchProcessingMode | str | None = None) -> BatchProcessingMode: ...

    async def ready(self, mode: BatchProcessingMode | str | None = None) -> Provider: ...


class TracedCalls:
    """An actor's calls, each inside its call span (`chat {model}`): the calls it wraps (`ActorCalls`), unchanged,
    with the same face. Made once, the first time an actor calls with telemetry on."""

    def __init__(self, actor: TracedActor, calls: Calls) -> None:
        self._actor = actor
        self._calls = calls

    async def run(
        self,
        prompt: str | None,
        response_model: type[BaseModel] | None,
        mode: BatchProcessingMode | str | None,
        key: str | None,
        max_cost_usd: float | None,
        arguments: dict[str, Any],
    ) -> ActorResponse[object]:
        model, attributes = await self._span_of("run", mode, key, prompt, arguments)
        calls = self._calls
        return await traced_call(
            model, attributes, lambda: calls.run(prompt, response_model, mode, key, max_cost_usd, arguments)
        )

    async def submit(
        self, prompt: str | None, key: str | None, max_cost_usd: float | None, arguments: dict[str, Any]
    ) -> Ticket:
        model, attributes = await self._span_of("submit", BatchProcessingMode.BATCH, key, prompt, arguments)
        calls = self._calls
        return await traced_call(model, attributes, lambda: calls.submit(prompt, key, max_cost_usd, arguments))

    async def result(
        self, key: str, response_model: type[BaseModel] | None, known: RequestRecord | None = None
    ) -> ActorResponse[object]:
        """A parked call's answer, its span a child of the trace the call was parked in (else of the current span)."""
        stored = await self._calls.parked_trace(key)
        model, attributes = await self._span_of("result", BatchProcessingMode.BATCH, key, None, {})
        calls = self._calls
        return await traced_call(
            model, attributes, lambda: calls.result(key, response_model, known), context=context_of(stored)
        )

    async def parked_trace(self, key: str) -> str | None:
        return await self._calls.parked_trace(key)

    async def _span_of(
        self,
        entry: str,
        mode: BatchProcessingMode | str | None,
        key: str | None,
        prompt: str | None,
        arguments: Mapping[str, object],
    ) -> tuple[str, Attributes]:
        """The model and attributes of the span of a call of `entry` (`run`, `submit` or `result`)."""
        actor = self._actor
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
        return model, attributes
