"""Steps of `langchain_durable.feature`: the durable LangChain agents of features/plugins/lowtide_durable_helper.py
started and resumed in this process, and resumed by `lowtide agents` processes that are killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _world import HANG_SECONDS, world
from step_context import Context, given, then, when

from lowtide.ledger.journal_records import AgentRun, AgentState
from lowtide.ledger.store import open_ledger

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
PROMPTS = {
    "helper": "[[emulator:tool:weather]] What is the weather in Paris?",
    "clerk": "[[emulator:tool:lookup]] Where is order 42?",
    "hasty": "[[emulator:tool:weather]] Weather?",
}


def _helpers() -> Any:
    if str(PLUGINS) not in sys.path:
        sys.path.insert(0, str(PLUGINS))
    import lowtide_durable_helper

    return lowtide_durable_helper


def _run(run_id: str) -> AgentRun:
    run = open_ledger(os.environ["LOWTIDE_LEDGER"]).agent_journal.agent_run(run_id)
    assert run is not None, f"no run {run_id!r}"
    return run


def _log() -> Path:
    return Path(os.environ["DURABLE_HELPER_LOG"])


@given("the durable LangChain agents reach the emulated Anthropic API on a loopback socket")
def step_helper_socket(context: Context) -> None:
    from lowtide.emulator import Emulator

    w = world(context)
    w.emulator = Emulator(processing_seconds=0.2)
    w.set_env("DURABLE_HELPER_URL", w.served_url())
    w.set_env("DURABLE_HELPER_KEY", "emulator-key")
    w.set_env("ANTHROPIC_API_KEY", "emulator-key")  # what `collect` reaches the API's batches with
    w.set_env("DURABLE_HELPER_LOG", str(Path(os.environ["LOWTIDE_LEDGER"]).parent / "side-effects.log"))
    w.set_env("PYTHONPATH", os.pathsep.join(p for p in (str(PLUGINS), os.environ.get("PYTHONPATH", "")) if p))
    helpers = _helpers()

    async def close() -> None:  # the actor built from this scenario's socket goes with it
        for actor in helpers.ACTORS.values():
            await actor.aclose()
        helpers.ACTORS.clear()

    w.cleanups.append(close)


@when('the durable LangChain agent "{name}" is started as the run "{run_id}"')
def step_helper_start(context: Context, name: str, run_id: str) -> None:
    world(context).run(getattr(_helpers(), name).start(PROMPTS[name], run_id=run_id))


@when('the LangChain runs are resumed in this process until the run "{run_id}" is {state}')
def step_helper_resume_until(context: Context, run_id: str, state: str) -> None:
    """`resume --once` passes, as cron's would be, until the run reaches `state` (its batches end in 0.2 s)."""
    from lowtide.agents.fleet import resume_once

    w = world(context)
    deadline = time.monotonic() + HANG_SECONDS
    while (run := _run(run_id)).state.value != state:
        assert run.state in (AgentState.PARKED, AgentState.RUNNING), run
        assert time.monotonic() < deadline, f"the run is still {run.state.value} after {HANG_SECONDS:g} s: {run}"
        done = w.run(resume_once(open_ledger(os.environ["LOWTIDE_LEDGER"])))
        assert not done.errors, done.errors
        if _run(run_id).state is AgentState.PARKED:
            time.sleep(0.1)  # the emulator, on its own thread, ends the batch 0.2 s after it was created


@when('the LangChain run "{run_id}" has its batch ended')
def step_helper_batch_ended(context: Context, run_id: str) -> None:
    from lowtide.agents.waiting import collect_for

    w = world(context)
    store = open_ledger(os.environ["LOWTIDE_LEDGER"])
    deadline = time.monotonic() + HANG_SECONDS
    run = _run(run_id)
    while not ((record := store.request(run.awaiting or "")) is not None and record.state.final):
        assert time.monotonic() < deadline, f"the batch of {run.awaiting} has not ended: {record}"
        w.run(collect_for(store, run))
        time.sleep(0.1)


@when("`lowtide agents {command}` runs in a new process, with `{variable}` set to kill it")
def step_helper_process(context: Context, command: str, variable: str) -> None:
    name, _, value = variable.partition("=")
    argv = [sys.executable, "-m", "lowtide", "agents", *command.split()]
    done = subprocess.run(
        argv, env={**os.environ, name: value}, capture_output=True, text=True, timeout=HANG_SECONDS * 2, check=False
    )
    assert done.returncode == -9, (done.returncode, done.stderr)


@when('the LangChain run "{run_id}" is retried in this process')
def step_helper_retry(context: Context, run_id: str) -> None:
    from lowtide.agents.fleet import retry_run

    done = world(context).run(retry_run(open_ledger(os.environ["LOWTIDE_LEDGER"]), run_id))
    assert not done.errors, done.errors


@then('the LangChain run "{run_id}" stands {state}')
def step_helper_stands(context: Context, run_id: str, state: str) -> None:
    run = _run(run_id)
    assert run.state.value == state, run


@then('the LangChain run "{run_id}" {state} with an error naming "{text}"')
def step_helper_error(context: Context, run_id: str, state: str, text: str) -> None:
    run = _run(run_id)
    assert (run.state.value, text in (run.error or "")) == (state, True), run


@then('the LangChain run "{run_id}" finished with the text "{text}"')
def step_helper_finished(context: Context, run_id: str, text: str) -> None:
    from lowtide.agents.values import decoded

    run = _run(run_id)
    assert run.state is AgentState.FINISHED, run
    assert str(decoded(run.result or "null")).startswith(text), run.result


@then("the LangChain tools' side effects are exactly {lines}")
def step_helper_side_effects(context: Context, lines: str) -> None:
    found = _log().read_text().splitlines() if _log().exists() else []
    assert found == [line.strip() for line in lines.split(",")], found


@then('the LangChain run "{run_id}"\'s journal holds {kinds}, each done once, the steps named {names}')
def step_helper_journal(context: Context, run_id: str, kinds: str, names: str) -> None:
    entries = open_ledger(os.environ["LOWTIDE_LEDGER"]).agent_journal.entries(run_id)
    assert [e.kind.value for e in entries] == [k.strip() for k in kinds.split(",")], entries
    assert all(e.done and e.attempts == 1 for e in entries), entries
    steps = [e.name for e in entries if e.kind.value == "step"]
    assert all(name.strip() in step for name, step in zip(names.split(","), steps, strict=True)), steps


@then('the model\'s last request in the emulator carried the tool {kind} "{text}"')
def step_helper_last_request(context: Context, kind: str, text: str) -> None:
    """`kind`: "result", or "error" (a result marked as the tool's error)."""
    emu = world(context).emu
    [(_, params)] = emu.batch(emu.anthropic.batches.newest_first()[0]).requests
    [result] = [block for block in params["messages"][-1]["content"] if block.get("type") == "tool_result"]
    assert (text in json.dumps(result), bool(result.get("is_error"))) == (True, kind == "error"), result
