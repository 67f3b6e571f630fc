"""`LowtideModel`: a pydantic-ai `Model` whose requests are answered by a lowtide `Actor`, through batches or live
by the actor's mode, so that an agent gets the ledger, coalescing, park and resume, and budgets unchanged."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import InstructionPart, ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from lowtide.actor import Actor
from lowtide.config.actors import BatchProcessingMode
from lowtide.integrations.pydantic_ai.errors import mapped_errors
from lowtide.integrations.pydantic_ai.messages import Call, step_of, to_call, to_model_response
from lowtide.integrations.pydantic_ai.stream import FinishedStream, LiveStream
from lowtide.types import ActorResponse

__all__ = ["KeyFunction", "LowtideModel", "LowtideModelSettings"]


class LowtideModelSettings(ModelSettings, total=False):
    """pydantic-ai's model settings, and lowtide's own (`agent.run(..., model_settings=...)`)."""

    lowtide_key: str
    """The key of this agent run: step n of the run is stored under `<key>/step-<n>`, so that running the agent
    again with the same key (in this process or a later one) gets the stored answers without paying twice."""
    lowtide_max_cost_usd: float
    """The budget of each model request of the run, checked against its worst case before anything is sent."""


KeyFunction = Callable[[list[ModelMessage], int], str | None]
"""Makes the key of a request from its history and step; None: derived from the request."""


class LowtideModel(Model):
    """A pydantic-ai model answered by `actor`: `Agent(LowtideModel(actor), ...)`.

    Each request goes through `actor.run`: in batch mode, concurrent requests (of many agent runs) travel as one
    batch, every one recorded in the actor's ledger under a key. By default the key is derived from the request
    itself (the run's history up to this step), so a run resumed after a crash finds its stored answers; give the
    run a key with `LowtideModelSettings(lowtide_key=...)`, or a `key` function, to name them yourself.
    """

    def __init__(
        self,
        actor: Actor,
        *,
        key: KeyFunction | None = None,
        settings: ModelSettings | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        self.actor = actor
        self._key = key
        super().__init__(
            settings=settings,
            profile=profile
            or ModelProfile(
                supports_tools=True,
                supports_json_schema_output=True,
                supports_json_object_output=False,
                default_structured_output_mode="tool",
            ),
        )

    @property
    def model_name(self) -> str:
        return self.actor.configuration.model

    @property
    def system(self) -> str:
        return self.actor.configuration.provider

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        call, key, budget = self._prepared(messages, model_settings, model_request_parameters)
        with mapped_errors(self.model_name):
            response = await self.answer(call, key, budget)
        return to_model_response(response, system=self.system)

    def _prepared(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> tuple[Call, str | None, float | None]:
        """The call `messages` make, its key and its budget."""
        model_settings, parameters = self.prepare_request(model_settings, model_request_parameters)
        if parameters.output_mode == "auto":
            parameters = parameters.with_default_output_mode("tool")
        settings: dict[str, Any] = dict(model_settings or {})
        instructions = InstructionPart.join(self._get_instruction_parts(messages, parameters) or [])
        call = to_call(messages, parameters, model_settings or {}, instructions=instructions, system=self.system)
        return call, self._key_for(messages, settings), settings.get("lowtide_max_cost_usd")

    async def answer(self, call: Call, key: str | None, budget: float | None) -> ActorResponse[object]:
        """The actor's answer to one request (a durable agent's model answers it as a journaled turn instead)."""
        return await self.actor.run(
            response_model=call.response_model, key=key, max_cost_usd=budget, **call.arguments()
        )

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        """`request`'s answer as a stream (`agent.run_stream`, `run_stream_events`, `iter`): live, through
        `actor.stream`, token by token; in batch mode (and a durable agent's journaled turns) the finished answer,
        each part one event."""
        if type(self).answer is not LowtideModel.answer or self.actor.resolve_mode() is not BatchProcessingMode.LIVE:
            answer = await self.request(messages, model_settings, model_request_parameters)
            _, parameters = self.prepare_request(model_settings, model_request_parameters)
            yield FinishedStream(model_request_parameters=parameters, answer=answer)
            return
        call, key, budget = self._prepared(messages, model_settings, model_request_parameters)
        _, parameters = self.prepare_request(model_settings, model_request_parameters)
        events = self.actor.stream(response_model=call.response_model, key=key, max_cost_usd=budget, **call.arguments())
        try:
            yield LiveStream(
                model_request_parameters=parameters,
                events=events,
                finish=lambda response: to_model_response(response, system=self.system),
                model=self.model_name,
                system=self.system,
            )
        finally:
            await events.aclose()

    def _key_for(self, messages: list[ModelMessage], settings: dict[str, Any]) -> str | None:
        step = step_of(messages)
        if self._key is not None:
            return self._key(messages, step)
        run_key = settings.get("lowtide_key")
        return f"{run_key}/step-{step}" if isinstance(run_key, str) else None

    def __repr__(self) -> str:
        return f"LowtideModel(actor={self.actor.name!r}, model={self.model_name!r})"
