"""Steps for the first hour: calls with bad arguments from Python, and `python -m lowtide`."""

from __future__ import annotations

import ast
import contextlib
import io
import subprocess
import sys
from typing import Any

from _support import world
from step_context import Context, given, then, when

from lowtide import ActorError, ConfigurationError, __version__
from lowtide.cli import main
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import NewRequest

_NAMES = {"nan": float("nan"), "inf": float("inf")}


def _arguments(text: str) -> tuple[list[Any], dict[str, Any]]:
    """Python call arguments from their source (literals, and `nan` / `inf`)."""
    call = ast.parse(f"f({text})", mode="eval").body
    assert isinstance(call, ast.Call), text

    def value(node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return _NAMES[node.id]
        return ast.literal_eval(node)

    return [value(arg) for arg in call.args], {kw.arg: value(kw.value) for kw in call.keywords if kw.arg}


@when("the actor's {method:w} is called with {arguments}")
def step_call_with(context: Context, method: str, arguments: str) -> None:
    w = world(context)
    args, kwargs = _arguments(arguments)
    call = getattr(w.current_actor(), method)
    w.error = None
    try:
        w.run(call(*args, **kwargs))
    except ActorError as exc:
        w.error = exc


@then('a ConfigurationError naming "{field}" is raised, saying "{message}"')
def step_configuration_error(context: Context, field: str, message: str) -> None:
    error = world(context).error
    assert type(error) is ConfigurationError, repr(error)
    assert error.field == field, error.field
    assert message in str(error), str(error)


@then("the ledger holds no request")
def step_no_request(context: Context) -> None:
    w = world(context)
    if w.ledger_path.exists():
        assert w.ledger().requests() == [], w.ledger().requests()


@when('"python -m lowtide {arguments}" runs in a new process')
def step_python_m(context: Context, arguments: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lowtide", *arguments.split()], capture_output=True, text=True, timeout=60, check=False
    )
    world(context).value = done


@then("it printed the installed version of lowtide and exited with 0")
def step_python_m_version(context: Context) -> None:
    done = world(context).value
    assert done.returncode == 0, done
    assert done.stdout.strip() == f"lowtide {__version__}", done.stdout


@given("a ledger with requests in it whose pages were then damaged")
def step_damaged_ledger(context: Context) -> None:
    w = world(context)
    path = w.path("damaged.sqlite3")
    ledger = Ledger(path)
    now = w.clock.now()
    ledger.claim(
        [NewRequest(f"k-{i}", f"k-{i}", "a", "m", {"prompt": "x" * 400}) for i in range(400)],
        owner="someone",
        until=now,
        now=now,
    )
    ledger.close()
    size = path.stat().st_size
    with path.open("r+b") as damaged:  # the header stays, the pages after it are overwritten
        damaged.seek(size // 3)
        damaged.write(b"\xff" * (size // 3))
    w.witnessed["damaged"] = [path]


@when("lowtide status reads that ledger")
def step_status_damaged(context: Context) -> None:
    w = world(context)
    [path] = w.witnessed["damaged"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["status", "--ledger", str(path)])
    w.value = {"code": code, "out": out.getvalue(), "err": err.getvalue()}


@then("the command printed nothing on stderr that looks like a traceback")
def step_no_traceback(context: Context) -> None:
    err = world(context).value["err"]
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
