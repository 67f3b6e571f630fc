"""What the durable-agent scenarios of every framework share (pydantic_ai_durable, langchain_durable): a plugin module
of agents served the emulated Anthropic API on a socket, their runs read from the ledger, and resume passes in this
process until a run reaches a state."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from _world import HANG_SECONDS, World

from lowtide.agents.waiting import collect_for
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState
from lowtide.ledger.store import open_ledger

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
POLL_SECONDS = 0.2
"""Between two looks at a batch (the emulator ends one after 0.2 s): each look builds a provider's client and asks
the API over the socket, as a `resume --once` from cron would."""


def plugin(name: str) -> Any:
    """The plugin module `name` (features/plugins), imported as a `lowtide agents` process imports it."""
    if str(PLUGINS) not in sys.path:
        sys.path.insert(0, str(PLUGINS))
    return __import__(name)


def store() -> LedgerStore:
    return open_ledger(os.environ["LOWTIDE_LEDGER"])


def run_of(run_id: str) -> AgentRun:
    run = store().agent_journal.agent_run(run_id)
    assert run is not None, f"no run {run_id!r}"
    return run


def serve_agents(w: World, module: str, prefix: str) -> None:
    """The emulated Anthropic API (batches ended after 0.2 s) on a socket, for the agents of the plugin `module`: its
    URL in `<prefix>_URL`, the key in `<prefix>_KEY`, the side effects' file in `<prefix>_LOG`, the plugins importable
    by a new process; the actors the module built from them closed with the scenario."""
    from lowtide.emulator import Emulator

    w.emulator = Emulator(processing_seconds=0.2)
    w.set_env(f"{prefix}_URL", w.served_url())
    w.set_env(f"{prefix}_KEY", "emulator-key")
    w.set_env("ANTHROPIC_API_KEY", "emulator-key")  # what `collect` reaches the API's batches with
    w.set_env(f"{prefix}_LOG", str(Path(os.environ["LOWTIDE_LEDGER"]).parent / "side-effects.log"))
    w.set_env("PYTHONPATH", os.pathsep.join(p for p in (str(PLUGINS), os.environ.get("PYTHONPATH", "")) if p))
    agents = plugin(module)

    async def close() -> None:
        for actor in agents.ACTORS.values():
            await actor.aclose()
        agents.ACTORS.clear()

    w.cleanups.append(close)


def resume_until(w: World, run_id: str, state: str) -> None:
    """`resume --once` passes, as cron's would be, until the run reaches `state` (its batches end in 0.2 s)."""
    from lowtide.agents.fleet import resume_once

    deadline = time.monotonic() + HANG_SECONDS
    while (run := run_of(run_id)).state.value != state:
        assert run.state in (AgentState.PARKED, AgentState.RUNNING), run
        assert time.monotonic() < deadline, f"the run is still {run.state.value} after {HANG_SECONDS:g} s: {run}"
        done = w.run(resume_once(store()))
        assert not done.errors, done.errors
        if run.state is AgentState.PARKED and run_of(run_id).state is AgentState.PARKED:
            w.run(asyncio.sleep(POLL_SECONDS))


def batch_ended(w: World, run_id: str) -> None:
    """Collect until the answer the run waits on is in the ledger."""
    deadline = time.monotonic() + HANG_SECONDS
    run = run_of(run_id)
    while not ((record := store().request(run.awaiting or "")) is not None and record.state.final):
        assert time.monotonic() < deadline, f"the batch of {run.awaiting} has not ended: {record}"
        w.run(collect_for(store(), run))
        w.run(asyncio.sleep(POLL_SECONDS))
