"""Durable agents in batch mode: an async function (`@agent`) whose model turns (`ctx.run`) and steps (`ctx.step`)
are journaled in the ledger, so that a run parks while a turn's batch is out, its process exits, and any later
process resumes it (`lowtide agents resume`) without paying or running anything twice. docs/agents.md."""

from lowtide.agents.agent import Agent, AgentHandle, agent
from lowtide.agents.context import AgentContext, Decision

__all__ = ["Agent", "AgentContext", "AgentHandle", "Decision", "agent"]
