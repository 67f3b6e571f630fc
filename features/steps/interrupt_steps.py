"""Steps for a Ctrl-C that lands while the `lowtide` command is still importing its modules."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys

from _support import world
from step_context import Context, given, then, when


@given('an input file "{items}" with {count:d} items and an Anthropic batch actor file "{actor}"')
def step_files(context: Context, items: str, count: int, actor: str) -> None:
    w = world(context)
    w.path(items).write_text("".join(json.dumps({"id": f"i{n}", "prompt": f"q {n}"}) + "\n" for n in range(count)))
    w.path(actor).write_text("name: reviewer\nmodel: claude-haiku-4-5\nmax_tokens: 50\nbatch_processing: batch\n")


_HOLD = """
import importlib.abc, sys, time

held = sys.argv[1]
sys.argv = ["lowtide", *sys.argv[2:]]

class Hold(importlib.abc.MetaPathFinder):
    # Holds the import of one module until a signal ends the wait: a Ctrl-C lands inside that import, however long
    # a loaded machine takes to deliver it (sent the moment the module was named, it could land after the imports).
    def find_spec(self, name, path=None, target=None):
        if name == held:
            sys.meta_path.remove(self)
            print("importing " + name, file=sys.stderr, flush=True)
            time.sleep(60)
        return None

sys.meta_path.insert(0, Hold())
from lowtide.__main__ import run
sys.exit(run())
"""
"""The `lowtide` console script's program (`lowtide.__main__:run`), run with a finder that holds the import of the
module named first in its arguments."""


@when('"{command}" is interrupted with Ctrl-C while it imports {module}')
def step_interrupted_while_importing(context: Context, command: str, module: str) -> None:
    """The console script's entry (`lowtide.__main__:run`), held at the import of `module` (long before its command
    runs: the command's own modules follow) until SIGINT, sent once it says it is there."""
    w = world(context)
    ledger = w.path("ledger.sqlite3")
    env = dict(os.environ, LOWTIDE_LEDGER=str(ledger), ANTHROPIC_API_KEY="unused")
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing is to be sent: a refused port says so loudly if it is
    argv = shlex.split(command)
    # SIGINT as a terminal gives it: a session run in the background (nox's parallel sessions) may ignore SIGINT, and
    # a child inherits that, which would make the command deaf to the Ctrl-C this sends.
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, module, *argv[1:]],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        cwd=ledger.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if line.strip() == f"importing {module}":
            process.send_signal(signal.SIGINT)
            break
    else:
        raise AssertionError(f"the command never imported {module}: {''.join(seen[-5:])}")
    out, err = process.communicate(timeout=60)
    said = [line for line in (out + err).splitlines() if line.strip()]
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
