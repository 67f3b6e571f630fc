"""`DurableToolAgent`: a LangChain tool-calling agent (a chat model with tools bound, called until it asks for no tool)
run as a lowtide durable agent (`lowtide.agents`): each model call a journaled batch turn through `LowtideChatModel`,
each tool call a journaled step, so that a run parks while a batch is out, is resumed by `lowtide agents resume`, and
never runs a tool twice."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool
from pydantic import ConfigDict

from lowtide.actor import Actor
from lowtide.agents.agent import AgentHandle, LedgerLike
from lowtide.agents.context import AgentContext
from lowtide.errors import AgentError
from lowtide.integrations.durable import FrameworkAgent, journaled_object, tool_step
from lowtide.integrations.langchain.messages import to_ai_message
from lowtide.integrations.langchain.model import LowtideChatModel

__all__ = ["DurableToolAgent"]

_TOOL_FAILED = "__langchain_tool_failed__"
"""The key under which a tool's error is journaled as its step's result: the model is told of it (as LangChain's
`ToolNode` does), and each replay tells it the same, without running the tool again."""


class _JournaledChatModel(LowtideChatModel):
    """`LowtideChatModel` whose calls are the run's model turns (`ctx.run`): answered from the journal on replay, else
    submitted under the turn's key, the run parked until the batch's answer is in."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    journal: AgentContext

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        call = self._call(messages, stop, kwargs)
        del call["key"]  # the turn's key is the run's own (`<run id>/<position>`)
        if call["max_cost_usd"] is None:
            del call["max_cost_usd"]
        try:
            response = await self.journal.run(self.actor, **call)
        except (Exception, asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as flow:  # the run parks or stops here: carried through LangChain as an Exception
            raise _Carried(flow) from None
        return ChatResult(generations=[ChatGeneration(message=to_ai_message(response))])


class _Carried(Exception):
    """The journal's control flow (`Parked`, `Stopped`: `BaseException`s, so that no user's `except Exception` stops
    them) carried through LangChain's call machinery, which takes any other `BaseException` for a result; raised
    again as it was once out of it."""

    def __init__(self, flow: BaseException) -> None:
        super().__init__(repr(flow))
        self.flow = flow


class DurableToolAgent(FrameworkAgent):
    """A LangChain tool-calling agent made durable: `DurableToolAgent(actor, [weather, post_note], name="helper")`,
    assigned at the top of a module under that `name`, so that `lowtide agents resume` imports it again.

    Its tools are LangChain tools (`@tool`, `BaseTool`) or plain functions (made tools by `langchain_core`'s `tool`).
    `start(prompt, run_id=...)` returns once the run has parked on its first call's batch. Each turn asks the model,
    through `actor` (or what `actor()` makes, in each process that advances the run), with the conversation so far and
    the tools bound; each tool it calls runs once, its result (or its error, told to the model) journaled; the run
    ends with the text of the first answer that calls no tool, or fails after `max_turns` turns that all did."""

    def __init__(
        self,
        actor: Actor | Callable[[], Actor],
        tools: Sequence[BaseTool | Callable[..., Any]],
        *,
        name: str,
        system_prompt: str | None = None,
        max_turns: int = 10,
    ) -> None:
        self.tools = [found if isinstance(found, BaseTool) else tool(found) for found in tools]
        self._by_name = {found.name: found for found in self.tools}
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        super().__init__(self._advance, actor, name=name)

    async def start(  # pyright: ignore[reportIncompatibleMethodOverride] - a prompt, not the function's arguments
        self,
        prompt: str,
        *,
        run_id: str | None = None,
        ledger: LedgerLike = None,
        max_cost_usd: float | Decimal | None = None,
    ) -> AgentHandle:
        """Start a run of the agent on `prompt` (see `Agent.start`)."""
        return await super().start(prompt, run_id=run_id, ledger=ledger, max_cost_usd=max_cost_usd)

    async def _advance(self, ctx: AgentContext, prompt: str) -> str:
        model = _JournaledChatModel(actor=self.actor, journal=ctx).bind_tools(self.tools)
        messages: list[BaseMessage] = [SystemMessage(self.system_prompt)] if self.system_prompt else []
        messages.append(HumanMessage(prompt))
        for _ in range(self.max_turns):
            try:
                reply = await model.ainvoke(messages)
            except _Carried as carried:
                raise carried.flow from None
            messages.append(reply)
            if not reply.tool_calls:
                return reply.text
            for call in reply.tool_calls:  # one at a time, in the model's order: each takes the journal's next place
                messages.append(await self._tool_message(ctx, call))
        raise AgentError(
            f"The agent {self.reference} asked for tools in each of its {self.max_turns} turns (max_turns): the run"
            " ends without an answer.",
            run_id=ctx.run_id,
        )

    async def _tool_message(self, ctx: AgentContext, call: ToolCall) -> ToolMessage:
        """The tool's answer to `call`, as the model reads it: run once as a step, or told it has no such tool."""
        name, call_id = call["name"], call["id"] or ""
        found = self._by_name.get(name)
        if found is None:  # nothing runs: the model is told, as LangChain's own agents tell it
            known = ", ".join(sorted(self._by_name))
            return ToolMessage(f"Error: there is no tool {name!r} (the tools: {known}).", tool_call_id=call_id,
                               status="error")  # fmt: skip

        async def called() -> Any:
            try:
                return await found.ainvoke(call["args"])
            except Exception as exc:  # a tool's error is the model's to hear, journaled so that it is heard once
                return {_TOOL_FAILED: f"{type(exc).__name__}: {exc}"}

        value: Any = await tool_step(ctx, "langchain", name, call["args"], called)
        failed = journaled_object(value).get(_TOOL_FAILED)
        if failed is not None:
            return ToolMessage(f"Error: {failed}", tool_call_id=call_id, status="error")
        return ToolMessage(value if isinstance(value, str) else json.dumps(value), tool_call_id=call_id)
