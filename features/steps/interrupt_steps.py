"""Steps for a Ctrl-C that lands while the `lowtide` command is still importing its modules."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from _support import world
from step_context import Context, given, then, when

_VERBOSE_PREFIXES = ("#", "import ", "Python ", "Type ", "[GCC", "wrote ", "code object")


@given('an input file "{items}" with {count:d} items and an Anthropic batch actor file "{actor}"')
def step_files(context: Context, items: str, count: int, actor: str) -> None:
    w = world(context)
    w.path(items).write_text("".join(json.dumps({"id": f"i{n}", "prompt": f"q {n}"}) + "\n" for n in range(count)))
    w.path(actor).write_text("name: reviewer\nmodel: claude-haiku-4-5\nmax_tokens: 50\nbatch_processing: batch\n")


@when('"{command}" is interrupted with Ctrl-C while it imports {module}')
def step_interrupted_while_importing(context: Context, command: str, module: str) -> None:
    """The console script, started with `PYTHONVERBOSE` so that it names each module as it loads it: SIGINT is sent
    the moment it starts on `module`, which is long before its command runs (the command's own modules follow)."""
    w = world(context)
    script = shutil.which("lowtide", path=str(Path(sys.executable).parent))
    assert script is not None, "the lowtide console script is not installed beside this Python"
    ledger = w.path("ledger.sqlite3")
    env = dict(os.environ, PYTHONVERBOSE="1", LOWTIDE_LEDGER=str(ledger), ANTHROPIC_API_KEY="unused")
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing is to be sent: a refused port says so loudly if it is
    argv = shlex.split(command)
    # SIGINT as a terminal gives it: a session run in the background (nox's parallel sessions) may ignore SIGINT, and
    # a child inherits that, which would make the command deaf to the Ctrl-C this sends.
    process = subprocess.Popen(
        [sys.executable, script, *argv[1:]],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        cwd=ledger.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    wanted = f"# code object from '{module.replace('.', '/')}"
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if wanted in line.replace(os.sep, "/") or (line.startswith("import '") and f"'{module}'" in line):
            process.send_signal(signal.SIGINT)
            break
    else:
        raise AssertionError(f"the command never imported {module}: {''.join(seen[-5:])}")
    out, err = process.communicate(timeout=60)
    said = [line for line in (out + err).splitlines() if line.strip() and not line.startswith(_VERBOSE_PREFIXES)]
    w.value = {"code": process.returncode, "said": said, "ledger": ledger}


@then("it exited with status {status:d}")
def step_exit_status(context: Context, status: int) -> None:
    value = world(context).value
    assert value["code"] == status, value


@then('its only line of output is "{line}"')
def step_only_line(context: Context, line: str) -> None:
    said = world(context).value["said"]
    assert said == [line], said


@then("no ledger was created")
def step_no_ledger(context: Context) -> None:
    ledger = world(context).value["ledger"]
    assert not ledger.exists(), f"{ledger} was created"
