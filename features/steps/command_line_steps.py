"""Steps for the conventions of the `lowtide` command: help, lists, pipes, JSON, log levels and completion."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from typing import Any

from _support import run_cli, world
from step_context import Context, given, then, when

from lowtide.providers.anthropic.checks import forget_models


@when('"{command}" runs without a ledger')
def step_cli_plain(context: Context, command: str) -> None:
    w = world(context)
    run_cli(w, command, ledger=None, cwd=w.path("actor.yaml").parent)


@when('"{command}" runs in the scenario\'s folder with "{name}" piped in')
def step_cli_piped(context: Context, command: str, name: str) -> None:
    w = world(context)
    run_cli(w, command, ledger=w.ledger_path, cwd=w.path(name).parent, stdin=w.path(name).read_bytes())


@when('"{command}" runs in the scenario\'s folder with a terminal as its input')
def step_cli_terminal(context: Context, command: str) -> None:
    w = world(context)
    run_cli(w, command, ledger=w.ledger_path, cwd=w.path("actor.yaml").parent, terminal=True)


@when('the shell asks lowtide to complete "{line}"')
def step_complete(context: Context, line: str) -> None:
    """What bash's completion function does, in a process of its own: the words so far and the index of the one
    being completed, in the environment of `lowtide` itself."""
    w = world(context)
    words = shlex.split(line)
    variables = {"_LOWTIDE_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    done = subprocess.run(
        [sys.executable, "-m", "lowtide"],
        env={**os.environ, **variables},
        cwd=w.path("actor.yaml").parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    w.value = {"code": done.returncode, "out": done.stdout, "err": done.stderr}


@given("lowtide has forgotten which models it warned about")
def step_forget_warnings(context: Context) -> None:
    forget_models()


@then('the completions offered are "{expected}"')
def step_completions(context: Context, expected: str) -> None:
    result = world(context).value
    assert result["code"] == 0, result
    offered = [line.split(",", 1)[1] for line in result["out"].splitlines() if "," in line]
    assert offered == [expected], result


@then("the command printed a line for each of the commands {names}")
def step_help_lists(context: Context, names: str) -> None:
    out = world(context).value["out"]
    listed = {line.split()[0] for line in out.split("Commands:", 1)[1].splitlines() if line.startswith("  ")}
    wanted = {name.strip() for name in names.split(",")}
    assert wanted <= listed, f"{sorted(wanted - listed)} not listed in:\n{out}"


@then('the command printed an example that starts with "{start}"')
def step_example(context: Context, start: str) -> None:
    out = world(context).value["out"]
    examples = out.split("Examples:", 1)[1].splitlines()
    assert any(line.strip().startswith(start) for line in examples), out


@then("stdout holds exactly {count:d} JSON lines, in input order, all succeeded")
def step_stdout_lines(context: Context, count: int) -> None:
    lines = [json.loads(line) for line in world(context).value["out"].splitlines()]
    assert [line["index"] for line in lines] == list(range(count)), lines
    assert all(line["status"] == "succeeded" for line in lines), lines


@then("the results on stdout have the ids {ids}")
def step_stdout_ids(context: Context, ids: str) -> None:
    lines = [json.loads(line) for line in world(context).value["out"].splitlines()]
    assert [line["id"] for line in lines] == re.findall(r'"([^"]*)"', ids), lines


@then("the command printed the scenario's ledger on its first line")
def step_ledger_named(context: Context) -> None:
    w = world(context)
    first = w.value["out"].splitlines()[0]
    assert first.startswith(f"ledger {w.ledger_path.absolute()}"), first


@then("the runs listed are {ids}, in that order")
def step_runs_listed(context: Context, ids: str) -> None:
    lines = world(context).value["out"].splitlines()[1:]
    assert [line.split()[0] for line in lines] == re.findall(r'"([^"]*)"', ids), lines


@then("the command listed {count:d} requests")
def step_requests_listed(context: Context, count: int) -> None:
    result = world(context).value
    listed = [line for line in result["out"].splitlines() if re.search(r"  attempts \d+$", line)]
    assert len(listed) == count, result["out"]


def _printed_json(context: Context) -> Any:
    return json.loads(world(context).value["out"])


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@then('the command printed JSON in which "{path}" is {literal}')
def step_json_is(context: Context, path: str, literal: str) -> None:
    actual = _at(_printed_json(context), path)
    assert actual == json.loads(literal), f"{path} is {actual!r}, not {literal}"


@then('the command printed JSON in which "{path}" has {count:d} entries')
def step_json_has(context: Context, path: str, count: int) -> None:
    actual = _at(_printed_json(context), path)
    assert len(actual) == count, f"{path} has {len(actual)} entries: {actual!r}"


@then("there is still no ledger file")
def step_no_ledger(context: Context) -> None:
    assert not world(context).ledger_path.exists()


@then('on stderr, the last line is "{text}"')
def step_last_stderr(context: Context, text: str) -> None:
    lines = world(context).value["err"].splitlines()
    assert lines, "nothing on stderr"
    assert lines[-1] == text, "\n".join(lines)


@then("the command printed nothing on stderr")
def step_stderr_empty(context: Context) -> None:
    err = world(context).value["err"]
    assert err == "", err


@then('the command printed on stderr what "{command}" prints, and nothing else')
def step_stderr_is_help(context: Context, command: str) -> None:
    """Its whole stderr is what `command` prints on stdout (the help as it is: no "lowtide:" before it, no pointer to
    `--help` after it)."""
    w = world(context)
    said = w.value
    run_cli(w, command, ledger=None, cwd=w.path("actor.yaml").parent)
    help_text, w.value = w.value, said
    assert help_text["code"] == 0, help_text
    assert help_text["out"].startswith("Usage: lowtide "), help_text
    assert said["err"] == help_text["out"], f"{said['err']!r}\nis not\n{help_text['out']!r}"


@then("the command printed nothing on stdout")
def step_stdout_empty(context: Context) -> None:
    out = world(context).value["out"]
    assert out == "", out


@then("the command printed that warning on stderr once")
def step_warning_once(context: Context) -> None:
    err = world(context).value["err"]
    assert err.count("is deprecated") == 1, err
