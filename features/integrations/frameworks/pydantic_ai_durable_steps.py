"""Steps of `pydantic_ai_durable.feature`: the durable pydantic-ai agent of features/plugins/lowtide_durable_forecast.py
started, resumed and approved in this process, and resumed by `lowtide agents` processes that are killed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from _durable_runs import batch_ended, plugin, resume_until, run_of, serve_agents, store
from _world import HANG_SECONDS, World, world
from step_context import Context, given, then, when

from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.journal_records import AgentRun, AgentState


def _examples() -> Any:
    return plugin("lowtide_durable_forecast")


def _store() -> LedgerStore:
    return store()


def _run(run_id: str) -> AgentRun:
    return run_of(run_id)


def _log() -> Path:
    return Path(os.environ["DURABLE_FORECAST_LOG"])


@given("the durable forecast agent reaches the emulated Anthropic API on a loopback socket")
def step_durable_socket(context: Context) -> None:
    serve_agents(world(context), "lowtide_durable_forecast", "DURABLE_FORECAST")


@given("the weather tool asks the model to call it again the first time")
def step_weather_retries(context: Context) -> None:
    world(context).set_env("DURABLE_FORECAST_RETRY", "1")


PROMPTS = {"forecast": "[[emulator:tool:weather]] Forecast for Paris", "tides": "[[emulator:tool:tide_table]] Brest"}


@when('the durable {name} agent is started as the run "{run_id}"')
def step_durable_start(context: Context, name: str, run_id: str) -> None:
    w = world(context)
    w.run(getattr(_examples(), name).start(PROMPTS[name], run_id=run_id))


@when('the agent runs are resumed in this process until the run "{run_id}" is {state}')
def step_resume_until(context: Context, run_id: str, state: str) -> None:
    resume_until(world(context), run_id, state)


@when('the batch the run "{run_id}" waits on has ended')
def step_batch_ended(context: Context, run_id: str) -> None:
    batch_ended(world(context), run_id)


@when("`lowtide agents {command}` runs here")
def step_agents_here(context: Context, command: str) -> None:
    from lowtide.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["agents", *shlex.split(command)])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    assert code == 0, (code, out.getvalue(), err.getvalue())


def _process(w: World, command: str, variables: str) -> None:
    env = {**os.environ, **dict(item.split("=", 1) for item in variables.split())}
    argv = [sys.executable, "-m", "lowtide", "agents", *shlex.split(command)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=HANG_SECONDS * 2, check=False)
    w.results.append({"code": done.returncode, "out": done.stdout, "err": done.stderr})


@when('the run "{run_id}" is retried in this process')
def step_retry_here(context: Context, run_id: str) -> None:
    """`lowtide agents retry` as this process's loop runs it (the command's own `asyncio.run` would leave the actor
    this module keeps bound to a loop it closed)."""
    from lowtide.agents.fleet import retry_run

    done = world(context).run(retry_run(_store(), run_id))
    assert not done.errors, done.errors


@when("`lowtide agents {command}` runs in a new process with `{variables}`")
@when("`lowtide agents {command}` runs in a new process")
def step_agents_process(context: Context, command: str, variables: str = "") -> None:
    _process(world(context), command, variables)


@then("the new process was killed")
def step_process_killed(context: Context) -> None:
    done = world(context).results[-1]
    assert done["code"] == -9, done


@then('the run "{run_id}" stands parked')
def step_stands_parked(context: Context, run_id: str) -> None:
    run = _run(run_id)
    assert (run.state, run.holder) == (AgentState.PARKED, None), run


@then('the run "{run_id}" stands in-doubt, its error naming "{text}"')
def step_stands_in_doubt(context: Context, run_id: str, text: str) -> None:
    run = _run(run_id)
    assert (run.state, text in (run.error or "")) == (AgentState.IN_DOUBT, True), run


@then('the run "{run_id}" asks a person "{question}"')
def step_asks(context: Context, run_id: str, question: str) -> None:
    run = _run(run_id)
    [asked] = [e for e in _store().agent_journal.entries(run_id) if e.key == run.awaiting]
    assert (run.state, asked.name.startswith(question), asked.result) == (
        AgentState.WAITING_ON_PERSON, True, None
    ), (run, asked)  # fmt: skip
    assert '"args":{' in asked.name, asked  # the call's arguments shown with the question


@then("the tools' side effects are exactly {tools}")
def step_side_effects(context: Context, tools: str) -> None:
    found = _log().read_text().splitlines() if _log().exists() else []
    assert found == [t.strip() for t in tools.split(",")], found


@then('the run "{run_id}" finished with a forecast')
def step_finished_forecast(context: Context, run_id: str) -> None:
    from lowtide.agents.values import decoded

    run = _run(run_id)
    assert run.state is AgentState.FINISHED, run
    assert isinstance(decoded(run.result or "null"), _examples().Forecast), run.result


@then('the run "{run_id}" finished with the model\'s text')
def step_finished_text(context: Context, run_id: str) -> None:
    from lowtide.agents.values import decoded

    run = _run(run_id)
    assert run.state is AgentState.FINISHED, run
    assert str(decoded(run.result or "null")).startswith("Emulated reply"), run.result


@then('the run "{run_id}"\'s journal holds {kinds}')
def step_journal_kinds(context: Context, run_id: str, kinds: str) -> None:
    entries = _store().agent_journal.entries(run_id)
    assert [e.kind.value for e in entries] == [k.strip() for k in kinds.split(",")], entries
    assert all(e.done and e.attempts == 1 for e in entries), entries


@then('the model\'s last request carried the tool result "{text}"')
def step_last_request(context: Context, text: str) -> None:
    emu = world(context).emu
    [(_, params)] = emu.batch(emu.anthropic.batches.newest_first()[0]).requests
    last = params["messages"][-1]
    assert (text in json.dumps(last), "tool_result" in json.dumps(last)) == (True, True), last


HISTORY_ASKED, HISTORY_ANSWERED = "Which harbour is ours?", "Ours is Brest."


def _history() -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    return [ModelRequest(parts=[UserPromptPart(HISTORY_ASKED)]), ModelResponse(parts=[TextPart(HISTORY_ANSWERED)])]


def _harbour_start(context: Context, run_id: str, **options: Any) -> None:
    world(context).run(_examples().harbour.start("[[emulator:tool:tide_for]] High water?", run_id=run_id, **options))


@when(
    'the durable harbour agent is started as the run "{run_id}" with the deps {deps}, a message history and the model'
    " settings {settings}"
)
def step_harbour_start_given(context: Context, run_id: str, deps: str, settings: str) -> None:
    _harbour_start(
        context, run_id, deps=json.loads(deps), message_history=_history(), model_settings=json.loads(settings)
    )


@when('the durable harbour agent is started as the run "{run_id}" with its deps_factory')
def step_harbour_start_factory(context: Context, run_id: str) -> None:
    _harbour_start(context, run_id, deps_factory=_examples().harbour_deps)


def _refused_options(given: str) -> dict[str, Any]:
    examples = _examples()

    def nested() -> object:
        return examples.Harbour("Brest")

    return {
        "deps a journal cannot store": {"deps": examples.Harbour("Brest")},
        "a deps_factory no other process can import": {"deps_factory": nested},
        "a deps_factory naming no function": {"deps_factory": "lowtide_durable_forecast:ACTORS"},
        "both deps and a deps_factory": {"deps": {"port": "Brest"}, "deps_factory": examples.harbour_deps},
        "model settings a journal cannot store": {"model_settings": {"temperature": 0.2, "extra_body": {1: "x"}}},
    }[given]


@when('the durable harbour agent is started as the run "{run_id}" with {given}')
def step_harbour_start_refused(context: Context, run_id: str, given: str) -> None:
    from lowtide.errors import ActorError

    w = world(context)
    w.error = None
    try:
        _harbour_start(context, run_id, **_refused_options(given))
    except ActorError as exc:
        w.error = exc


@then('the start was refused naming "{text}", and no run "{run_id}" was recorded')
def step_harbour_refused(context: Context, text: str, run_id: str) -> None:
    w = world(context)
    assert text in str(w.error or "no error"), w.error
    assert _store().agent_journal.agent_run(run_id) is None, "the refused run was recorded"
    assert w.emu.created_custom_ids == {}, "a refused run sent a request"


@given('the harbour\'s deps_factory makes the port "{port}"')
def step_factory_port(context: Context, port: str) -> None:
    world(context).set_env("DURABLE_FORECAST_PORT", port)


@then("the new process ended well")
def step_process_ended(context: Context) -> None:
    done = world(context).results[-1]
    assert done["code"] == 0, done


@then("each of the {count:d} requests the emulator was sent carried the message history and the temperature {t:f}")
def step_requests_history(context: Context, count: int, t: float) -> None:
    emu = world(context).emu
    sent = [params for batch in emu.anthropic.batches.newest_first() for _, params in emu.batch(batch).requests]
    assert len(sent) == count, sent
    for params in sent:
        said = [json.dumps(m["content"]) for m in params["messages"][:2]]
        assert (HISTORY_ASKED in said[0], HISTORY_ANSWERED in said[1], params.get("temperature")) == (True, True, t), (
            params
        )


@then('the run "{run_id}"\'s input names the deps_factory "{reference}"')
def step_input_factory(context: Context, run_id: str, reference: str) -> None:
    stored = json.loads(_run(run_id).input)
    assert stored["kwargs"] == {"deps_factory": reference}, stored
