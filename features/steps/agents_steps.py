"""Steps for durable agents (features/agents.feature, agents_cli.feature): the example agents of
features/plugins/lowtide_agent_examples.py started, resumed and inspected, in this process or in `lowtide` processes
against the emulator on a socket."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from _support import PLUGINS, World, plugins_importable, run_cli, set_env, world
from step_context import Context, given, then, when

from lowtide.errors import ActorError
from lowtide.ledger.journal_records import AgentRun, AgentState, EntryKind

PROCESS_SECONDS = 120.0
"""A `lowtide` process of these scenarios takes about a second; one still running after this has hung."""


def _examples() -> Any:
    plugins_importable()
    import lowtide_agent_examples

    return lowtide_agent_examples


def _log(w: World) -> Path:
    return w.path("side-effects.log")


def _run(w: World, run_id: str) -> AgentRun:
    run = w.ledger().agent_journal.agent_run(run_id)
    assert run is not None, f"no run {run_id!r}"
    return run


def _in_process(w: World) -> bool:
    return "agent client" in w.witnessed


# -- the agents in this process ---------------------------------------------------------------------------------------


@given('the example agents use a batch-mode actor "{name}" of the scenario\'s ledger')
def step_examples_actor(context: Context, name: str) -> None:
    w = world(context)
    examples = _examples()
    actor = w.add_actor({"name": name, "model": "claude-sonnet-5-5", "batch_processing": "batch"})
    examples.ACTORS[name] = actor
    w.cleanups.append(lambda: examples.ACTORS.pop(name, None))
    w.witnessed["agent client"] = [w.client]


@when('the agent "{name}" is started as the run "{run_id}"')
@when('the agent "{name}" is started as the run "{run_id}" again')
def step_start(context: Context, name: str, run_id: str) -> None:
    w = world(context)
    found = getattr(_examples(), name)
    args = ("flaky test", str(_log(w))) if name in ("triage", "careful", "forgiving") else ("flaky test",)
    # Started on the scenario's clock, as it is resumed: a run's times (its journal's waits) read on one clock.
    before, found.clock = found.clock, w.clock
    w.cleanups.append(lambda: setattr(found, "clock", before))
    w.error = None
    try:
        w.value = w.run(found.start(*args, run_id=run_id, ledger=w.ledger()))
    except ActorError as exc:
        w.error = exc


@when('the agent "{name}" is started as the run "{run_id}" with a budget of ${amount}')
def step_start_budget(context: Context, name: str, run_id: str, amount: str) -> None:
    w = world(context)
    found = getattr(_examples(), name)
    w.run(found.start("flaky test", str(_log(w)), run_id=run_id, ledger=w.ledger(), max_cost_usd=Decimal(amount)))


@then('`lowtide agents list --json` says the run "{run_id}" spent its turns\' cost of its budget "{amount}"')
def step_list_budget(context: Context, run_id: str, amount: str) -> None:
    w = world(context)
    run_cli(w, "lowtide agents list --json", ledger=None)
    [shown] = [r for r in json.loads(w.value["out"]) if r["run_id"] == run_id]
    spent = sum((e.cost_usd or Decimal(0) for e in w.ledger().agent_journal.entries(run_id)), Decimal(0))
    assert (Decimal(shown["cost_usd"]), shown["max_cost_usd"]) == (spent, amount), (shown, spent)
    assert spent > 0, spent
    run_cli(w, f"lowtide agents show {run_id}", ledger=None)
    assert f"${spent} of ${amount}" in w.value["out"], w.value


@when(
    'the agent "patient" is started as the run "{run_id}" on the host "{host}", and the host "{other}" tries to take'
    " it over {seconds:d} seconds in"
)
def step_start_contended(context: Context, run_id: str, host: str, other: str, seconds: int) -> None:
    """The run's process on one host, and a process on another host that finds it (its step still running) after
    `seconds` and asks for its lease, as a `resume` there would: both in this process, on a clock of their own."""
    from lowtide.agents import rules
    from lowtide.core.clock import VirtualClock

    w = world(context)
    examples = _examples()
    set_env(w, "LOWTIDE_HOST_ID", host)
    # Waits that overlap (the step's, the lease's renewals, the other host's), as they do in real time.
    clock = VirtualClock(w.clock.now())
    examples.CLOCK[:] = [clock]
    w.cleanups.append(examples.CLOCK.clear)
    patient = examples.patient
    before, patient.clock = patient.clock, clock
    journal = w.ledger().agent_journal

    async def contender() -> tuple[AgentRun | None, AgentRun | None, float]:
        await clock.sleep(seconds)
        os.environ["LOWTIDE_HOST_ID"] = other
        try:
            seen = journal.agent_run(run_id)
            return seen, journal.change_run(run_id, rules.lease(f"{other}/1/contender", clock.now())), clock.now()
        finally:
            os.environ["LOWTIDE_HOST_ID"] = host

    async def both() -> tuple[Any, tuple[AgentRun | None, AgentRun | None, float]]:
        return await asyncio.gather(
            patient.start("flaky test", str(_log(w)), run_id=run_id, ledger=w.ledger()), contender()
        )

    try:
        _, found = w.run(both())
        w.witnessed["contender"] = list(found)
    finally:
        patient.clock = before


@then('the host "{other}" was refused the run "{run_id}", its lease renewed past then by the host "{host}"')
def step_contender_refused(context: Context, other: str, run_id: str, host: str) -> None:
    seen, took, at = world(context).witnessed["contender"]
    assert took is None, took
    assert seen is not None, run_id
    assert (seen.state, (seen.holder or "").split("/")[0], (seen.held_until or 0) > at) == (
        AgentState.RUNNING,
        host,
        True,
    ), seen


@when('the scenario\'s ledger is copied into the new SQLite file "{name}", and that file into a new in-memory ledger')
def step_copy_agents(context: Context, name: str) -> None:
    from lowtide.ledger.copy import copy_ledger
    from lowtide.ledger.memory import MemoryLedger
    from lowtide.ledger.store import open_ledger

    w = world(context)
    saved = open_ledger(w.path(name))
    counts = copy_ledger(w.ledger(), saved)
    back = MemoryLedger()
    copy_ledger(saved, back)
    w.witnessed["copies"] = [counts, saved, back]


@then('both copies hold the run "{run_id}" and its journal of {count:d} entries as the scenario\'s ledger does')
def step_copies_hold(context: Context, run_id: str, count: int) -> None:
    w = world(context)
    counts, *copies = w.witnessed["copies"]
    assert (counts["agent_runs"], counts["agent_journal"]) == (1, count), counts
    held = w.ledger().agent_journal
    entries = held.entries(run_id)
    assert len(entries) == count, entries
    for copy in copies:
        assert copy.agent_journal.agent_run(run_id) == held.agent_run(run_id), copy.location
        assert copy.agent_journal.entries(run_id) == entries, copy.location


def _resume(w: World) -> None:
    from lowtide.agents.fleet import resume_once

    [client] = w.witnessed["agent client"]
    done = w.run(resume_once(w.ledger(), client=client, clock=w.clock))
    assert not done.errors, done.errors


@when("the batches end and the agent runs are resumed once")
def step_end_and_resume(context: Context) -> None:
    w = world(context)
    w.clock.advance(61)
    _resume(w)


@when("a day passes and the agent runs are resumed once")
def step_day_passes(context: Context) -> None:
    w = world(context)
    w.clock.advance(86_400)
    _resume(w)


@when("the batches end and are collected")
def step_end_and_collect(context: Context) -> None:
    from lowtide.calls import parking

    w = world(context)
    w.clock.advance(61)
    [client] = w.witnessed["agent client"]
    w.run(parking.collect(w.ledger(), client=client, clock=w.clock))


@when("the agent runs are resumed once")
def step_resume_once(context: Context) -> None:
    _resume(world(context))


@when('the run "{run_id}" is approved with the result "{text}"')
def step_approve(context: Context, run_id: str, text: str) -> None:
    w = world(context)
    careful = _examples().careful
    clock, careful.clock = careful.clock, w.clock  # the decision's time on the scenario's clock
    try:
        careful.approve(run_id, result=text, ledger=w.ledger())
    finally:
        careful.clock = clock


@then('approving the run "{run_id}" from Python with a path as its result is refused with "{text}"')
def step_approve_unstorable(context: Context, run_id: str, text: str) -> None:
    w = world(context)
    refused: ActorError | None = None
    try:
        _examples().careful.approve(run_id, result=Path("notes.txt"), ledger=w.ledger())
    except ActorError as exc:
        refused = exc
    assert text in str(refused or "taken: nothing refused"), refused
    assert _run(w, run_id).state is AgentState.WAITING_ON_PERSON, _run(w, run_id)


@when('the run "{run_id}"\'s question is decided by an approval whose process died before it moved the run on')
def step_half_approved(context: Context, run_id: str) -> None:
    w = world(context)
    journal = w.ledger().agent_journal
    run = _run(w, run_id)
    [asked] = [e for e in journal.entries(run_id) if e.key == run.awaiting]
    decided = '{"approved":true,"result":null}'
    journal.change_entry(run_id, asked.position, lambda e: dataclasses.replace(e, result=decided))


@then('`lowtide agents {command}` is refused with "{text}"')
@when('`lowtide agents {command}` is refused with "{text}"')
def step_refused(context: Context, command: str, text: str) -> None:
    w = world(context)
    run_cli(w, f"lowtide agents {command}", ledger=None)
    assert (w.value["code"] != 0, text in w.value["err"]) == (True, True), w.value


@then('the run "{run_id}" waits on a person, asked "{question}"')
def step_waits_on_person(context: Context, run_id: str, question: str) -> None:
    run = _run(world(context), run_id)
    assert (run.state, run.holder) == (AgentState.WAITING_ON_PERSON, None), run
    [asked] = [e for e in world(context).ledger().agent_journal.entries(run_id) if e.key == run.awaiting]
    assert (asked.kind, asked.name.startswith(question), asked.result) == (EntryKind.PERSON, True, None), asked


@then('`lowtide agents list --state waiting-on-person --json` lists only the run "{run_id}", asking "{question}"')
def step_list_waiting(context: Context, run_id: str, question: str) -> None:
    w = world(context)
    run_cli(w, "lowtide agents list --state waiting-on-person --json", ledger=None)
    assert w.value["code"] == 0, w.value
    runs = [(r["run_id"], r["state"], r["question"].split(" {")[0]) for r in json.loads(w.value["out"])]
    assert runs == [(run_id, "waiting-on-person", question)], runs
    run_cli(w, f"lowtide agents show {run_id}", ledger=None)
    assert f"waiting on a person: {question}" in w.value["out"], w.value


@then("`lowtide agents show {run_id} --json` says its question was {decision} after {seconds:d} seconds")
def step_show_decision(context: Context, run_id: str, decision: str, seconds: int) -> None:
    w = world(context)
    run_cli(w, f"lowtide agents show {run_id} --json", ledger=None)
    [asked] = [e for e in json.loads(w.value["out"])["journal"] if e["kind"] == "person"]
    assert (asked["state"], asked["ended_at"] - asked["started_at"]) == (decision, seconds), asked


@when("the agent's code changes its second turn")
def step_code_changes(context: Context) -> None:
    set_env(world(context), "AGENT_EXAMPLES_VARIANT", "changed")


@when('a step is asked with an argument of type "Path"')
def step_unstorable_argument(context: Context) -> None:
    from lowtide.agents.context import AgentContext

    w = world(context)
    ran: list[object] = []
    ctx = AgentContext("t-path", w.ledger(), [], w.clock)
    w.error = None
    try:
        w.run(ctx.step(ran.append, Path("notes.txt")))
    except ActorError as exc:
        w.error = exc
    w.witnessed["ran"] = ran


@then('the start was refused with "{text}"')
def step_start_refused(context: Context, text: str) -> None:
    w = world(context)
    assert text in str(w.error or "no error"), w.error


@then('the step was refused with "{text}" before it ran')
def step_step_refused(context: Context, text: str) -> None:
    w = world(context)
    assert text in str(w.error or "no error"), w.error
    assert w.witnessed["ran"] == [], w.witnessed["ran"]
    assert w.ledger().agent_journal.entries("t-path") == [], "a refused step left an intent"


# -- what the ledger, the API and the side effects say ----------------------------------------------------------------


@then('the run "{run_id}" is parked, waiting on the key "{key}"')
def step_parked(context: Context, run_id: str, key: str) -> None:
    run = _run(world(context), run_id)
    assert (run.state, run.awaiting, run.holder) == (AgentState.PARKED, key, None), run


@then('the run "{run_id}" is finished, its result beginning "{text}"')
def step_finished(context: Context, run_id: str, text: str) -> None:
    run = _run(world(context), run_id)
    assert run.state is AgentState.FINISHED, run
    assert str(json.loads(run.result or "null")).startswith(text), run


@then('the run "{run_id}" {state} with an error containing "{text}"')
def step_run_error(context: Context, run_id: str, state: str, text: str) -> None:
    run = _run(world(context), run_id)
    assert (run.state.value, text in (run.error or "")) == (state, True), run


@then('the side effects are "{first}" and one "comment" line')
def step_side_effects(context: Context, first: str) -> None:
    lines = _log(world(context)).read_text().splitlines()
    assert [lines[0], lines[1].split(" ")[0], len(lines)] == [first, "comment", 2], lines


@then("the API created {count:d} batches, one request each, every custom id once")
def step_created(context: Context, count: int) -> None:
    emu = world(context).emu
    ids = emu.created_custom_ids
    assert (emu.created_batches, len(ids), set(ids.values())) == (count, count, {1}), (emu.created_batches, ids)


@then("the run's journal holds turn, step, turn, step, turn, each done, the turns' costs adding up to the run's cost")
def step_journal(context: Context) -> None:
    w = world(context)
    [run] = [r for r in w.ledger().agent_journal.agent_runs() if r.state is AgentState.FINISHED]
    entries = w.ledger().agent_journal.entries(run.run_id)
    kinds = [e.kind for e in entries]
    assert kinds == [EntryKind.TURN, EntryKind.STEP] * 2 + [EntryKind.TURN], kinds
    assert all(e.result is not None and e.attempts == 1 for e in entries), entries
    assert run.cost_usd == sum((e.cost_usd or Decimal(0) for e in entries), Decimal(0)) > 0, run


# -- `lowtide` processes --------------------------------------------------------------------------------------------


@given("the example agents reach the emulated API on its socket")
def step_examples_socket(context: Context) -> None:
    w = world(context)
    [url] = w.witnessed["server url"]
    set_env(w, "AGENT_EXAMPLES_URL", url)
    set_env(w, "AGENT_EXAMPLES_KEY", "emulator-key")
    set_env(w, "ANTHROPIC_API_KEY", "emulator-key")  # what `collect` reaches the API's batches with
    paths = [str(PLUGINS), os.environ.get("PYTHONPATH", "")]
    set_env(w, "PYTHONPATH", os.pathsep.join(p for p in paths if p))


def _process(w: World, argv: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=PROCESS_SECONDS, check=False
    )
    w.value = {"code": done.returncode, "out": done.stdout, "err": done.stderr}


def _variables(text: str) -> dict[str, str]:
    """`LOWTIDE_CRASHPOINT=after-create`, or several such separated by spaces; "" for none."""
    return dict(item.split("=", 1) for item in text.split())


@when('a program starts the run "{run_id}" of "triage" with {variables}')
def step_program_start(context: Context, run_id: str, variables: str) -> None:
    w = world(context)
    code = "import lowtide_agent_examples as m; m.main()"
    _process(w, [sys.executable, "-c", code, run_id, str(_log(w))], _variables(variables.strip("`")))


@when("`lowtide agents {command}` runs in a new process with {variables}")
@when("`lowtide agents {command}` runs in a new process")
def step_lowtide_process(context: Context, command: str, variables: str = "") -> None:
    w = world(context)
    argv = [sys.executable, "-m", "lowtide", "agents", *command.split(), "--ledger", os.environ["LOWTIDE_LEDGER"]]
    _process(w, argv, _variables(variables.strip("`")))


@when('the run "{run_id}" of "triage" is started in this program')
def step_start_here(context: Context, run_id: str) -> None:
    w = world(context)
    examples = _examples()
    w.run(examples.triage.start("flaky test", str(_log(w)), run_id=run_id, ledger=w.ledger()))
    actor = examples.ACTORS.pop("planner")  # built from the environment, as the program's would be
    w.cleanups.append(actor.aclose)


@when("the batches end")
def step_batches_end(context: Context) -> None:
    world(context).clock.advance(61)


@then("the process was killed")
def step_killed(context: Context) -> None:
    value = world(context).value
    assert value["code"] == -9, value


@then("the process exited {code:d}")
def step_exited(context: Context, code: int) -> None:
    value = world(context).value
    assert value["code"] == code, value


@then('the process said on stderr "{text}"')
def step_stderr(context: Context, text: str) -> None:
    value = world(context).value
    assert text in value["err"], value


@then('the run "{run_id}" stands {state}')
def step_run_state(context: Context, run_id: str, state: str) -> None:
    run = _run(world(context), run_id)
    assert run.state.value == state, run


@then("the side effects are exactly {lines}")
def step_side_effects_exactly(context: Context, lines: str) -> None:
    path = _log(world(context))
    found = path.read_text().splitlines() if path.exists() else []
    wanted = [] if lines == "none" else [line.strip().strip('"') for line in lines.split('",')]
    assert found == wanted, found


@then('`lowtide agents list --json` says the run "{run_id}" is {state}')
def step_list_json(context: Context, run_id: str, state: str) -> None:
    w = world(context)
    run_cli(w, "lowtide agents list --json", ledger=Path(os.environ["LOWTIDE_LEDGER"]))
    assert w.value["code"] == 0, w.value
    runs = {r["run_id"]: r for r in json.loads(w.value["out"])}
    assert runs[run_id]["state"] == state, runs


@then('`lowtide agents show {run_id}` lists {count:d} entries, the last "{last}"')
def step_show(context: Context, run_id: str, count: int, last: str) -> None:
    w = world(context)
    run_cli(w, f"lowtide agents show {run_id} --json", ledger=Path(os.environ["LOWTIDE_LEDGER"]))
    assert w.value["code"] == 0, w.value
    journal = json.loads(w.value["out"])["journal"]
    assert (len(journal), journal[-1]["state"]) == (count, last), journal


@when("`lowtide agents {command}` runs in this process")
def step_lowtide_in_process(context: Context, command: str) -> None:
    w = world(context)
    run_cli(w, f"lowtide agents {command}", ledger=Path(os.environ["LOWTIDE_LEDGER"]))
    assert w.value["code"] == 0, w.value


@when("`lowtide agents {command}` runs in this process, exiting {code:d}")
def step_lowtide_in_process_exiting(context: Context, command: str, code: int) -> None:
    """A command no kill interrupts, in this process: it knows only what the ledger holds, as a new process would; the
    example agents' actors it built from the environment are forgotten after it, as that process's would be. The
    example agents are importable, as PYTHONPATH (`the example agents reach ...`) makes them for a new process."""
    w = world(context)
    plugins_importable()
    run_cli(w, f"lowtide agents {command}", ledger=Path(os.environ["LOWTIDE_LEDGER"]))
    examples = sys.modules.get("lowtide_agent_examples")
    if examples is not None:
        for name in list(examples.ACTORS):
            w.cleanups.append(examples.ACTORS.pop(name).aclose)
    assert w.value["code"] == code, w.value


@then('the batch the run "{run_id}" waited on was canceled at the API')
def step_batch_canceled(context: Context, run_id: str) -> None:
    w = world(context)
    [entry] = w.ledger().agent_journal.entries(run_id)
    record = w.ledger().request(entry.key)
    assert record is not None, entry
    assert record.batch_id is not None, record
    batch = w.ledger().batch(record.batch_id)
    assert batch is not None, record
    assert batch.provider_batch_id is not None, batch
    snapshot = w.emu.batch(batch.provider_batch_id)
    assert snapshot.cancel_initiated_at is not None, snapshot


@given('a parked run "{run_id}" of the agent "{reference}"')
def step_parked_run(context: Context, run_id: str, reference: str) -> None:
    w = world(context)
    now = w.clock.now()
    run = AgentRun(
        run_id=run_id, reference=reference, input='{"args":[],"kwargs":{}}', state=AgentState.PARKED, result=None,
        error=None, cost_usd=Decimal(0), awaiting=None, holder=None, held_until=None, created_at=now, updated_at=now,
    )  # fmt: skip
    w.ledger().agent_journal.open_run(run)


@when("the next build log fetched takes {seconds:g} seconds")
def step_slow_read(context: Context, seconds: float) -> None:
    slow = _examples().SLOW_READS
    slow[:] = [seconds]
    world(context).cleanups.append(slow.clear)


@when("a pass waits at most {seconds:g} seconds for its runs still working")
def step_straggler_bound(context: Context, seconds: float) -> None:
    from lowtide.batching import gathering

    before, gathering.STRAGGLER_SECONDS = gathering.STRAGGLER_SECONDS, seconds
    world(context).cleanups.append(lambda: setattr(gathering, "STRAGGLER_SECONDS", before))


@when('the agent "{name}" is started as the runs "{first}", "{second}" and "{third}" at once')
def step_start_many(context: Context, name: str, first: str, second: str, third: str) -> None:
    w = world(context)
    found = getattr(_examples(), name)

    async def together() -> None:
        await asyncio.gather(
            *(found.start("flaky test", str(_log(w)), run_id=r, ledger=w.ledger()) for r in (first, second, third))
        )

    w.run(together())


@then("the API created {count:d} batches, of {size:d} requests")
@then("the API created {count:d} batches, of {size:d} requests each")
def step_created_together(context: Context, count: int, size: int) -> None:
    emu = world(context).emu
    ids = emu.created_custom_ids
    assert (emu.created_batches, len(ids), set(ids.values())) == (count, count * size, {1}), (emu.created_batches, ids)


@then("the API created {count:d} batches, of {first:d}, {second:d} and {third:d} requests")
def step_created_sizes(context: Context, count: int, first: int, second: int, third: int) -> None:
    emu = world(context).emu
    sizes = [len(batch.requests) for batch in emu.anthropic.batches.oldest_first()]
    assert sizes == [first, second, third][:count], sizes
    assert set(emu.created_custom_ids.values()) == {1}, emu.created_custom_ids


@then('the runs "{first}", "{second}" and "{third}" are parked, waiting on their keys at position {position:d}')
def step_many_parked(context: Context, first: str, second: str, third: str, position: int) -> None:
    for run_id in (first, second, third):
        step_parked(context, run_id, f"{run_id}/{position}")


# -- many runs, two resume processes at once, random kills ------------------------------------------------------------

KILL_POINTS = ("", "", "agent-after-step", "agent-replayed-step", "after-create")
"""What each `resume --once` process of a round is given (`LOWTIDE_CRASHPOINT`): none twice as often as each kill
point, so that some rounds kill one process, some both, some none. Kill points the next process mends without a
wait of real time: a create whose outcome is unknown is found in the API's list at once (`after-create`)."""


FLEET_PROCESS_SECONDS = 600.0
"""A `resume --once` advancing 100 runs on PostgreSQL: about a minute at load 25 (a round trip a journal write, each
run several); one still running after this has hung."""


@when('the agent "{name}" is started as {count:d} runs at once, each on an issue of its own')
def step_start_count(context: Context, name: str, count: int) -> None:
    w = world(context)
    found = getattr(_examples(), name)

    async def together() -> None:
        await asyncio.gather(
            *(found.start(f"issue {i}", str(_log(w)), run_id=f"m-{i}", ledger=w.ledger()) for i in range(count))
        )

    w.run(together())
    w.cleanups.append(_examples().ACTORS.pop("planner").aclose)  # built from the environment, as a program's is


@when(
    "rounds of the batches ending and two `lowtide agents resume --once` processes at once, killed at random points,"
    " run until every run has ended"
)
def step_rounds_two_processes(context: Context) -> None:
    """Each round: the batches end, then two `resume --once` processes start together, each given a kill point drawn
    from `KILL_POINTS` by a seeded random (the seed, the rounds and their kill points are in the failure's message).
    Ended when every run has ended; at most 16 rounds."""
    w = world(context)
    seed = int(os.environ.get("LOWTIDE_KILL_SEED", "58"))
    chosen = random.Random(seed)
    argv = [sys.executable, "-m", "lowtide", "agents", "resume", "--once", "--ledger", os.environ["LOWTIDE_LEDGER"]]
    journal = w.ledger().agent_journal
    ended = (AgentState.FINISHED, AgentState.FAILED, AgentState.STOPPED, AgentState.IN_DOUBT)
    rounds: list[tuple[str, ...]] = []
    while any(run.state not in ended for run in journal.agent_runs()):
        assert len(rounds) < 16, f"runs still going after 16 rounds (seed {seed}): {rounds}"
        w.clock.advance(61)
        points = (chosen.choice(KILL_POINTS), chosen.choice(KILL_POINTS))
        environments = [{**os.environ, "LOWTIDE_CRASHPOINT": point} for point in points]
        processes = [
            subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for env in environments
        ]
        codes = []
        for process, point in zip(processes, points, strict=True):
            _, err = process.communicate(timeout=FLEET_PROCESS_SECONDS)
            codes.append(process.returncode)
            assert process.returncode in ((0, -9) if point else (0,)), (seed, rounds, point, process.returncode, err)
        rounds.append(tuple(f"{point or 'none'}:{code}" for point, code in zip(points, codes, strict=True)))
    w.witnessed["rounds"] = [(seed, rounds)]


@then("every one of the {count:d} runs ended finished or in doubt, each tool having run once, or at most once in doubt")
def step_every_run_once(context: Context, count: int) -> None:
    """A kill in a process advancing many runs at once may catch some inside a step (its intent journaled, its result
    not): those runs are in doubt, as they must be, their step's side effect done at most once; every other step's
    exactly once."""
    w = world(context)
    [said] = w.witnessed["rounds"]
    journal = w.ledger().agent_journal
    runs = journal.agent_runs()
    assert len(runs) == count, said
    assert {run.state for run in runs} <= {AgentState.FINISHED, AgentState.IN_DOUBT}, (said, runs)
    # Each run reads its own issue's log; its comment quotes the review, the same text for every run: counted.
    lines = Counter("comment" if line.startswith("comment ") else line for line in _log(w).read_text().splitlines())
    done: Counter[str] = Counter()
    doubtful: Counter[str] = Counter()
    for run in runs:
        for entry in journal.entries(run.run_id):
            if entry.kind is EntryKind.STEP:
                tool = "read-log " + run.run_id.replace("m-", "issue ") if "read_build_log" in entry.name else "comment"
                (done if entry.done else doubtful)[tool] += 1
    for tool in set(done) | set(doubtful) | set(lines):
        found = lines[tool]
        assert done[tool] <= found <= done[tool] + doubtful[tool], (said, tool, found, done[tool], doubtful[tool])
    assert sum(1 for run in runs if run.state is AgentState.FINISHED) >= count // 2, (said, runs)


@then("the API created the request of each of the runs' turns once, the start's batch and one a process a round")
def step_created_once_shared(context: Context) -> None:
    w = world(context)
    [said] = w.witnessed["rounds"]
    _seed, rounds = said
    most = 1 + 2 * len(rounds)  # a process advances every run it leased in one pass: their turns in one batch
    journal = w.ledger().agent_journal
    turns = {
        w.custom_id(e.key) for r in journal.agent_runs() for e in journal.entries(r.run_id) if e.kind is EntryKind.TURN
    }
    ids = w.emu.created_custom_ids
    assert (set(ids), set(ids.values())) == (turns, {1}), (said, len(ids), len(turns), Counter(ids.values()))
    assert w.emu.created_batches <= most, (said, w.emu.created_batches)
