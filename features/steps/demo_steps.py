"""Steps for `lowtide demo` and the `lowtide` command."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path

from _support import emulated_reply_to, set_env, world
from step_context import Context, then, when

from lowtide.cli import main
from lowtide.cli.demo import run_demo


def _output(context: Context) -> str:
    w = world(context)
    w.succeeded()
    return w.value["out"]


def _run_demo(context: Context, config: Path | None) -> None:
    w = world(context)
    out = io.StringIO()
    # The real clock, as `lowtide demo` runs: its coalescing window (2 s) is what gathers its actors' concurrent calls
    # into one batch while each checks its model on the in-process emulator; virtual time closed that window after a
    # turn of the event loop, leaving the batch count to how many turns each actor's checks took (two batches, once
    # in a full run). Polls are made short, as the README's examples make them, for the scenarios' own actor files.
    set_env(w, "LOWTIDE_POLL_INTERVAL", "0.05")
    failures = w.attempt_async(lambda: run_demo(out, config=config, processing_seconds=0))
    w.value = {"out": out.getvalue(), "failures": failures}
    w.witnessed.setdefault("demo outputs", []).append(out.getvalue())


@when("the demo runs with batches that take 0 seconds")
def step_demo(context: Context) -> None:
    _run_demo(context, None)


@when('the demo runs with the actors of "{name}"')
def step_demo_config(context: Context, name: str) -> None:
    _run_demo(context, world(context).path(name))


@then("the demo reports {failures:d} failed calls")
def step_demo_failures(context: Context, failures: int) -> None:
    _output(context)
    assert world(context).value["failures"] == failures, world(context).value


@then("the demo printed these calls with their answers:")
def step_demo_calls(context: Context) -> None:
    out = _output(context)
    for row in context.table:
        call = f"[{row['actor']}] {row['prompt']}\n  answer: {emulated_reply_to(row['prompt'])}"
        assert call in out, f"{call!r} not in:\n{out}"
    assert out.count("  answer: ") == len(context.table.rows), out


@then("the demo printed a batch id for each answer, in batch mode")
def step_demo_batch_ids(context: Context) -> None:
    out = _output(context)
    batch_lines = re.findall(
        r"^  batch (msgbatch_\w+)  custom_id ([\w-]+)  mode batch  tokens \d+ in / \d+ out$", out, re.M
    )
    assert len(batch_lines) == out.count("  answer: "), out
    # Every call has its own custom_id (its key, derived from the request), so no answer can be mistaken for another.
    custom_ids = [custom_id for _, custom_id in batch_lines]
    assert len(set(custom_ids)) == len(custom_ids), custom_ids


@then("the two runs of the demo printed different batch ids")
def step_demo_runs_differ(context: Context) -> None:
    first, second = (set(re.findall(r"batch (msgbatch_\w+)", out)) for out in world(context).witnessed["demo outputs"])
    assert first, first
    assert second, second
    assert not first & second, f"the second run printed the first run's batches again: {first & second}"


@then('the demo printed "{text}"')
def step_demo_printed(context: Context, text: str) -> None:
    out = _output(context)
    assert text in out, f"{text!r} not in:\n{out}"


@then("the demo's total batch cost is half its total live cost, and it says it saved 50%")
def step_demo_costs(context: Context) -> None:
    out = _output(context)
    found = re.search(
        r"Cost at batch prices: \$([\d.]+)\. The same calls live: \$([\d.]+)\. Saved \$([\d.]+) \(50%\)\.", out
    )
    assert found, out
    batch, live, saved = (Decimal(group) for group in found.groups())
    assert batch > 0, (batch, live, saved)
    assert live == batch * 2, (batch, live, saved)
    assert saved == live - batch, (batch, live, saved)
    lines = re.findall(r"^  cost \$([\d.]+) at batch prices \(live: \$([\d.]+)\)$", out, re.M)
    assert len(lines) == out.count("  answer: "), out


@then("the demo printed no cost for the pilot's call")
def step_demo_no_cost(context: Context) -> None:
    out = _output(context)
    pilot = out[out.index("[pilot]") :]
    pilot = pilot[: pilot.index("\n\n")]
    assert "  cost $" not in pilot, pilot
    assert "  answer: " in pilot, pilot
    assert "Cost at batch prices: $" in out, out


# -- the command -----------------------------------------------------------------------------------------------------


@when('the command "{command}" runs')
def step_command(context: Context, command: str) -> None:
    w = world(context)
    argv = shlex.split(command)
    assert argv[0] == "lowtide", argv
    args = [str(w.path(arg)) if arg.endswith(".yaml") else arg for arg in argv[1:]]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    w.value = {"code": code, "out": out.getvalue(), "err": err.getvalue()}


@then("the command exits with {code:d}")
def step_command_exit(context: Context, code: int) -> None:
    result = world(context).value
    assert result["code"] == code, result


@then('the command printed "{text}"')
def step_command_printed(context: Context, text: str) -> None:
    out = world(context).value["out"]
    assert text in out, f"{text!r} not in:\n{out}"


@then('the command printed on stderr "{text}"')
def step_command_stderr(context: Context, text: str) -> None:
    err = world(context).value["err"]
    assert text in err, f"{text!r} not in:\n{err}"


@then("the command printed the installed version of lowtide")
def step_command_version(context: Context) -> None:
    out = world(context).value["out"]
    assert out.strip() == f"lowtide {version('lowtide')}", out
