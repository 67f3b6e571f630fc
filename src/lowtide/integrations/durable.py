"""What the frameworks' durable agents share (`pydantic_ai.durable.DurableAgent`, `langchain.durable.DurableToolAgent`):
the agent named by the module that made it and the name it is assigned to, its actor (given, or made in each process
that advances a run), and each tool call a journaled step named `<framework>:tool <name>`. Imports no framework."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from types import FrameType, SimpleNamespace
from typing import Any

from lowtide.actor import Actor
from lowtide.agents.agent import Agent
from lowtide.agents.context import AgentContext
from lowtide.agents.driver import AgentFunction
from lowtide.agents.values import reference_of

__all__ = ["FrameworkAgent", "journaled_object", "tool_step"]


class FrameworkAgent(Agent):
    """A framework's agent made durable: `reference` names the module that made it (the caller of the subclass's
    constructor) and `name`, so that `lowtide agents resume` imports it again from there."""

    def __init__(self, advance: AgentFunction, actor: Actor | Callable[[], Actor], *, name: str) -> None:
        self._actor = actor
        made_by = _frames_up(inspect.currentframe(), 2)  # this, the subclass's constructor, then the module's line
        module = made_by.f_globals.get("__name__", "?") if made_by is not None else "?"
        super().__init__(advance)
        self.reference = reference_of(SimpleNamespace(__module__=module, __qualname__=name))

    @property
    def actor(self) -> Actor:
        """The actor the agent's model calls go through: given, or what `actor=make_actor` makes each time a run is
        advanced (so that it can keep one per process, or per ledger, as it likes)."""
        return self._actor if isinstance(self._actor, Actor) else self._actor()


def _frames_up(frame: FrameType | None, count: int) -> FrameType | None:
    for _ in range(count):
        frame = frame.f_back if frame is not None else None
    return frame


async def tool_step(
    ctx: AgentContext, framework: str, name: str, arguments: dict[str, Any], call: Callable[[], Awaitable[Any]]
) -> Any:
    """The tool `name` called with `arguments` once, as a step of the run named `<framework>:tool <name>` in the
    journal: `call()`'s result journaled, and on replay the journaled result, `call` not run again."""

    async def called(tool_name: str, arguments: dict[str, Any]) -> Any:
        return await call()

    called.__module__, called.__qualname__ = framework, f"tool {name}"  # the journal names the step so
    return await ctx.step(called, name, arguments)


def journaled_object(value: Any) -> dict[str, Any]:
    """A step's journaled result as the JSON object it is, or an empty one when it is not an object."""
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType] - JSON's keys: str
