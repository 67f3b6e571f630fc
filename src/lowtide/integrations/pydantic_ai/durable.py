"""`DurableAgent`: an unchanged pydantic-ai `Agent` run as a lowtide durable agent (`lowtide.agents`): each model
request a journaled batch turn through `LowtideModel`, each tool call a journaled step, each tool that needs a
person's approval (`requires_approval`) a question the run waits on (`lowtide agents approve`). As pydantic-ai's own
Temporal and DBOS integrations do, it wraps the agent through its public interfaces only (`override`, toolsets)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry
from pydantic_ai.messages import ModelMessage, ToolCallPart
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from lowtide.actor import Actor
from lowtide.agents.agent import AgentHandle, LedgerLike
from lowtide.agents.context import AgentContext, Decision
from lowtide.integrations.durable import FrameworkAgent, journaled_object, tool_step
from lowtide.integrations.pydantic_ai.messages import Call
from lowtide.integrations.pydantic_ai.model import LowtideModel
from lowtide.integrations.pydantic_ai.run_input import DepsFactory, RunInput, stored_input
from lowtide.types import ActorResponse

__all__ = ["DurableAgent"]

_RAISED = "__pydantic_ai_raised__"
"""The key under which a tool's control-flow exception (a retry asked of the model, a call deferred) is journaled as
the step's result, so that replay raises it again for pydantic-ai rather than fail the step."""


class _JournaledModel(LowtideModel):
    """`LowtideModel` whose requests are the run's model turns (`ctx.run`): answered from the journal on replay,
    else submitted under the turn's key, the run parked until the batch's answer is in."""

    def __init__(self, actor: Actor, ctx: AgentContext) -> None:
        super().__init__(actor)
        self._ctx = ctx

    async def answer(self, call: Call, key: str | None, budget: float | None) -> ActorResponse[object]:
        limit: dict[str, Any] = {} if budget is None else {"max_cost_usd": budget}
        return await self._ctx.run(self.actor, response_model=call.response_model, **limit, **call.arguments())


@dataclass
class _JournaledToolset(WrapperToolset[Any]):
    """Each tool call of the wrapped toolset a step of the run: run once, its result journaled and replayed."""

    journal: AgentContext

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        async def called() -> Any:
            try:
                return await self.wrapped.call_tool(name, tool_args, ctx, tool)
            except ModelRetry as retry:
                return {_RAISED: "retry", "message": retry.message}
            except (ApprovalRequired, CallDeferred) as deferred:
                return {_RAISED: type(deferred).__name__, "metadata": deferred.metadata}

        value: Any = await tool_step(self.journal, "pydantic-ai", name, tool_args, called)
        raised = _raised(value)
        if raised is not None:
            raise raised
        return value


def _raised(value: Any) -> Exception | None:
    """The control-flow exception a tool raised, as journaled (see `_RAISED`), or None for a tool's result."""
    said = journaled_object(value)
    if said.get(_RAISED) == "retry":
        return ModelRetry(said["message"])
    if said.get(_RAISED) in ("ApprovalRequired", "CallDeferred"):
        kind = ApprovalRequired if said[_RAISED] == "ApprovalRequired" else CallDeferred
        return kind(metadata=said["metadata"])
    return None


def _question(call: ToolCallPart) -> str:
    return f"Run the tool {call.tool_name}?"


class DurableAgent(FrameworkAgent):
    """A pydantic-ai agent made durable: `DurableAgent(agent, actor, name="forecast")`, assigned at the top of a
    module under that `name`, so that `lowtide agents resume` imports it again. `start(prompt, run_id=...)` returns
    once the run has parked on its first request's batch; every tool call runs once; a tool with
    `requires_approval=True` makes the run wait on a person, its decision given to the agent as
    `DeferredToolResults`: `approve RUN` runs the tool, `--result '{"arg": ...}'` with those arguments instead of the
    model's; `--deny --result '"why"'` tells the model why not. `start` takes pydantic-ai's `deps` (JSON values or
    pydantic models; else `deps_factory`, a module-level function called on every advance), `message_history` and
    `model_settings`, stored with the run's input so that every process that advances it replays the same run."""

    def __init__(self, wrapped: PydanticAgent[Any, Any], actor: Actor | Callable[[], Actor], *, name: str) -> None:
        self.wrapped = wrapped
        super().__init__(self._advance, actor, name=name)

    async def start(  # pyright: ignore[reportIncompatibleMethodOverride] - a prompt and pydantic-ai's run options
        self,
        prompt: str,
        *,
        deps: Any = None,
        deps_factory: DepsFactory | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        model_settings: ModelSettings | None = None,
        run_id: str | None = None,
        ledger: LedgerLike = None,
        max_cost_usd: float | Decimal | None = None,
    ) -> AgentHandle:
        """Start a run of the agent on `prompt` (see `Agent.start`), with pydantic-ai's `deps` (or `deps_factory`),
        `message_history` and `model_settings`: all refused before anything is recorded if a later process could not
        have them again (deps that are not JSON or pydantic models, naming the type; a factory not importable)."""
        given = stored_input(deps, deps_factory, message_history, model_settings)
        return await super().start(prompt, run_id=run_id, ledger=ledger, max_cost_usd=max_cost_usd, **given)

    async def _advance(self, ctx: AgentContext, prompt: str, **stored: Any) -> Any:
        given = RunInput(**stored)
        model = _JournaledModel(self.actor, ctx)
        toolsets = [_JournaledToolset(t, ctx) for t in self.wrapped.toolsets]
        history: Sequence[ModelMessage] | None = given.message_history
        results: DeferredToolResults | None = None
        asked: str | None = prompt
        output_type: Any = [self.wrapped.output_type, DeferredToolRequests]
        # Tool calls one at a time, in the order the model asked them: each takes the journal's next position.
        with (
            self.wrapped.override(model=model, toolsets=toolsets, tools=[]),
            self.wrapped.parallel_tool_call_execution_mode("sequential"),
        ):
            while True:
                run = await self.wrapped.run(
                    asked, message_history=history, deferred_tool_results=results, output_type=output_type,
                    deps=given.deps, model_settings=given.model_settings,
                )  # fmt: skip
                if not isinstance(run.output, DeferredToolRequests):
                    return run.output
                results = await _decided(ctx, run.output)
                history, asked = run.all_messages(), None


def _approval(decision: Decision) -> bool | ToolApproved | ToolDenied:
    """pydantic-ai's answer to an approval asked: denied, with the person's text as the model's reason; approved, with
    the arguments the person gave (a JSON object) instead of the model's, or as the model asked."""
    if not decision.approved:
        return ToolDenied(decision.result if isinstance(decision.result, str) else "The tool call was denied.")
    given: Any = decision.result
    if isinstance(given, dict):
        arguments: dict[str, Any] = given  # pyright: ignore[reportUnknownVariableType] - a JSON object's keys are str
        return ToolApproved(override_args=arguments)
    return True


async def _decided(ctx: AgentContext, requests: DeferredToolRequests) -> DeferredToolResults:
    """A person's decision on each call that needs one (the run waits on the first undecided), as pydantic-ai's
    deferred results: an approval runs the tool; a denial tells the model why (the decision's result, if text); for
    a call the tool deferred, the decision's result is the tool's result."""
    results = DeferredToolResults()
    for call in requests.approvals:
        decision = await ctx.approval(
            _question(call), details={"tool_call_id": call.tool_call_id, "args": call.args_as_dict()}
        )
        results.approvals[call.tool_call_id] = _approval(decision)
    for call in requests.calls:
        decision = await ctx.approval(
            f"Give the result of the tool {call.tool_name}",
            details={"tool_call_id": call.tool_call_id, "args": call.args_as_dict()},
        )
        results.calls[call.tool_call_id] = decision.result if decision.approved else ToolDenied("Not given.")
    return results
