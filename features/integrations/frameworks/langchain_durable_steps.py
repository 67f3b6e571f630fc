"""Steps of `langchain_durable.feature`: the durable LangChain agents of features/plugins/lowtide_durable_helper.py
started and resumed in this process, and resumed by `lowtide agents` processes that are killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _durable_runs import batch_ended, plugin, resume_until, run_of, serve_agents, store
from _world import HANG_SECONDS, world
from step_context import Context, given, then, when

from lowtide.ledger.journal_records import AgentState

PROMPTS = {
    "helper": "[[emulator:tool:weather]] What is the weather in Paris?",
    "clerk": "[[emulator:tool:lookup]] Where is order 42?",
    "hasty": "[[emulator:tool:weather]] Weather?",
}


def _helpers() -> Any:
    return plugin("lowtide_durable_helper")


def _log() -> Path:
    return Path(os.environ["DURABLE_HELPER_LOG"])


@given("the durable LangChain agents reach the emulated Anthropic API on a loopback socket")
def step_helper_socket(context: Context) -> None:
    serve_agents(world(context), "lowtide_durable_helper", "DURABLE_HELPER")


@when('the durable LangChain agent "{name}" is started as the run "{run_id}"')
def step_helper_start(context: Context, name: str, run_id: str) -> None:
    world(context).run(getattr(_helpers(), name).start(PROMPTS[name], run_id=run_id))


@when('the LangChain runs are resumed in this process until the run "{run_id}" is {state}')
def step_helper_resume_until(context: Context, run_id: str, state: str) -> None:
    resume_until(world(context), run_id, state)


@when('the LangChain run "{run_id}" has its batch ended')
def step_helper_batch_ended(context: Context, run_id: str) -> None:
    batch_ended(world(context), run_id)


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

    done = world(context).run(retry_run(store(), run_id))
    assert not done.errors, done.errors


@then('the LangChain run "{run_id}" stands {state}')
def step_helper_stands(context: Context, run_id: str, state: str) -> None:
    run = run_of(run_id)
    assert run.state.value == state, run


@then('the LangChain run "{run_id}" {state} with an error naming "{text}"')
def step_helper_error(context: Context, run_id: str, state: str, text: str) -> None:
    run = run_of(run_id)
    assert (run.state.value, text in (run.error or "")) == (state, True), run


@then('the LangChain run "{run_id}" finished with the text "{text}"')
def step_helper_finished(context: Context, run_id: str, text: str) -> None:
    from lowtide.agents.values import decoded

    run = run_of(run_id)
    assert run.state is AgentState.FINISHED, run
    assert str(decoded(run.result or "null")).startswith(text), run.result


@then("the LangChain tools' side effects are exactly {lines}")
def step_helper_side_effects(context: Context, lines: str) -> None:
    found = _log().read_text().splitlines() if _log().exists() else []
    assert found == [line.strip() for line in lines.split(",")], found


@then('the LangChain run "{run_id}"\'s journal holds {kinds}, each done once, the steps named {names}')
def step_helper_journal(context: Context, run_id: str, kinds: str, names: str) -> None:
    entries = store().agent_journal.entries(run_id)
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
