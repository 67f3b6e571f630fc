"""Steps for the first hour: calls with bad arguments from Python, and `python -m lowtide`."""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

from _support import world
from behave import then, when

from lowtide import ActorError, ConfigurationError, __version__

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
def step_call_with(context: Any, method: str, arguments: str) -> None:
    w = world(context)
    args, kwargs = _arguments(arguments)
    call = getattr(w.current_actor(), method)
    w.error = None
    try:
        w.run(call(*args, **kwargs))
    except ActorError as exc:
        w.error = exc


@then('a ConfigurationError naming "{field}" is raised, saying "{message}"')
def step_configuration_error(context: Any, field: str, message: str) -> None:
    error = world(context).error
    assert type(error) is ConfigurationError, repr(error)
    assert error.field == field, error.field
    assert message in str(error), str(error)


@then("the ledger holds no request")
def step_no_request(context: Any) -> None:
    w = world(context)
    if w.ledger_path.exists():
        assert w.ledger().requests() == [], w.ledger().requests()


@when('"python -m lowtide {arguments}" runs in a new process')
def step_python_m(context: Any, arguments: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lowtide", *arguments.split()], capture_output=True, text=True, timeout=60, check=False
    )
    world(context).value = done


@then("it printed the installed version of lowtide and exited with 0")
def step_python_m_version(context: Any) -> None:
    done = world(context).value
    assert done.returncode == 0, done
    assert done.stdout.strip() == f"lowtide {__version__}", done.stdout
