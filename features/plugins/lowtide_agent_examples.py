"""The durable agents of the agent scenarios (features/agents*.feature), in a module of their own so that a
`lowtide agents resume` process imports them by reference as it would a user's: a three-turn agent with two tools
whose side effects append a line to a file, a second agent to reuse a run id with, one that asks a person
before it posts, one whose one step outlasts a run's lease, one that goes on past its tools' errors, and one whose
build log may take a while to fetch (`SLOW_READS`).

Its actors are the scenario's when it set them (`ACTORS`, in the scenario's process), else built from the
environment (`AGENT_EXAMPLES_URL`: the emulator's socket; the key in `AGENT_EXAMPLES_KEY`), as a program's would be.
`AGENT_EXAMPLES_DIE_IN=<tool>` kills the process inside that tool, before its side effect, with SIGKILL;
`AGENT_EXAMPLES_VARIANT=changed` makes the agent ask a different second turn (code changed between two processes).
`python -c 'import lowtide_agent_examples as m; m.main()' RUN LOG` starts a run of `triage` and prints its state
(imported, not run as `__main__`: a run's agent is named by the module any process imports it from)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from lowtide import Actor, AgentContext, agent
from lowtide.core.clock import Clock, SystemClock

ACTORS: dict[str, Actor] = {}


def actor(name: str) -> Actor:
    if name not in ACTORS:
        ACTORS[name] = Actor(
            {
                "name": name,
                "model": "claude-sonnet-5-5",
                "batch_processing": "batch",
                "base_url": os.environ["AGENT_EXAMPLES_URL"],
                "api_key_env": "AGENT_EXAMPLES_KEY",
            }
        )
    return ACTORS[name]


def _side_effect(tool: str, log: str, line: str) -> None:
    if os.environ.get("AGENT_EXAMPLES_DIE_IN") == tool:
        os.kill(os.getpid(), signal.SIGKILL)
    with Path(log).open("a") as out:
        out.write(line + "\n")


def read_build_log(log: str, issue: str) -> str:
    """The first tool: reads the build log (appends "read-log <issue>")."""
    _side_effect("read_build_log", log, f"read-log {issue}")
    return f"the build log of {issue}"


def post_comment(log: str, text: str) -> dict[str, int]:
    """The second tool: posts a comment (appends "comment <text>")."""
    _side_effect("post_comment", log, f"comment {text}")
    return {"comment_id": len(text)}


@agent
async def triage(ctx: AgentContext, issue: str, log: str) -> str:
    """Plan, read the build log, review, comment, summarize: three model turns, two tools."""
    plan = await ctx.run(actor("planner"), f"Plan a fix for: {issue}")
    build_log = await ctx.step(read_build_log, log, issue)
    second = "Review the plan again" if os.environ.get("AGENT_EXAMPLES_VARIANT") == "changed" else "Review the plan"
    review = await ctx.run(actor("planner"), f"{second}: {plan.text[:20]} / {build_log}")
    await ctx.step(post_comment, log, review.text[:12])
    summary = await ctx.run(actor("planner"), f"Summarize: {issue}")
    return summary.text[:40]


SLOW_READS: list[float] = []
"""Seconds (real time) the next reads of `fetch_build_log` take, one a read: set by a scenario."""


async def fetch_build_log(log: str, issue: str) -> str:
    """`read_build_log` over the network: the next read waits `SLOW_READS`' first seconds."""
    if SLOW_READS:
        await asyncio.sleep(SLOW_READS.pop(0))
    return read_build_log(log, issue)


@agent
async def fetcher(ctx: AgentContext, issue: str, log: str) -> str:
    """Plan, fetch the build log (a step that may take a while), review: two model turns, one tool."""
    plan = await ctx.run(actor("planner"), f"Plan a fix for: {issue}")
    build_log = await ctx.step(fetch_build_log, log, issue)
    review = await ctx.run(actor("planner"), f"Review the plan: {plan.text[:20]} / {build_log}")
    return review.text[:40]


@agent
async def other(ctx: AgentContext, issue: str) -> str:
    """Another agent, one turn."""
    return (await ctx.run(actor("planner"), issue)).text


@agent
async def careful(ctx: AgentContext, issue: str, log: str) -> str:
    """Plan, then ask a person before posting the plan (the text the person gives, if any, posted instead)."""
    plan = await ctx.run(actor("planner"), f"Plan a fix for: {issue}")
    decision = await ctx.approval("Post the plan as a comment?", details={"issue": issue})
    if not decision.approved:
        return f"not posted: {decision.result}"
    text = decision.result if isinstance(decision.result, str) else plan.text[:12]
    await ctx.step(post_comment, log, text)
    return f"posted {text}"


class ToolBroke(Exception):
    """A tool's own error class: a user's module, which a replay does not import to rebuild it."""


def broken_tool(kind: str) -> str:
    """Fails with a builtin error, one of lowtide's own, one of lowtide's that needs more than its message to be
    made, or one of its own module's."""
    from lowtide.errors import AgentRunError, ConfigurationError

    if kind == "builtin":
        raise ValueError("no build log")
    if kind == "lowtide":
        raise ConfigurationError("no such repository")
    if kind == "lowtide-fields":
        raise AgentRunError("the run is gone", run_id="r", state="stopped")
    raise ToolBroke("the tool broke")


@dataclass
class BrokenTools:
    """A step given as a callable object that compares by value (unhashable): its return type read each time."""

    def __call__(self, kind: str) -> str:
        return broken_tool(kind)


@agent
async def forgiving(ctx: AgentContext, issue: str, log: str) -> str:
    """Goes on past each tool's error, a turn after each (so that each later advance replays the errors before it):
    its result says which class each error was raised as, as the last advance replayed it."""
    seen: list[str] = []
    for kinds in (("builtin",), ("lowtide", "lowtide-fields"), ("own",)):
        for kind in kinds:
            try:
                await ctx.step(BrokenTools() if kind == "own" else broken_tool, kind)
            except Exception as exc:
                named = getattr(exc, "error_class", None)
                seen.append(type(exc).__name__ + (f"({named})" if named else "") + f": {exc}")
        await ctx.run(actor("planner"), f"After the {kinds[-1]} tool's error: {issue}")
    return "; ".join(seen)


CLOCK: list[Clock] = []
"""The scenario's clock, when it set one: what `long_job` waits on."""


async def long_job(log: str, seconds: int) -> str:
    """A step that takes `seconds` (of the scenario's clock), then appends "long-job <seconds>"."""
    await (CLOCK[0] if CLOCK else SystemClock()).sleep(seconds)
    _side_effect("long_job", log, f"long-job {seconds}")
    return f"done after {seconds} s"


@agent
async def patient(ctx: AgentContext, issue: str, log: str) -> str:
    """One step, longer than a run's lease."""
    return await ctx.step(long_job, log, 1500)


async def _start(run_id: str, log: str) -> None:
    handle = await triage.start("flaky test", log, run_id=run_id)
    print(handle.state)
    await actor("planner").aclose()


def main() -> None:
    asyncio.run(_start(sys.argv[1], sys.argv[2]))
