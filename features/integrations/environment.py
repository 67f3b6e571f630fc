"""Fixtures of the integrations' scenarios (run only by the `pydantic_ai` and `langchain` nox sessions, which
install those frameworks): one asyncio.Runner per scenario, and a ledger of its own in a temporary directory.

These scenarios run on the real clock, with the emulator answering batches in fractions of a second: the
frameworks await their own tasks and threads, which virtual time would race past."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from step_context import Context  # features/support: the typed context every step and hook takes
from stuck import Stuck  # features/support: a hang said, tasks and threads, before the process ends

_ISOLATED = ("LOWTIDE_LEDGER", "XDG_STATE_HOME")


STUCK = Stuck(600.0)
"""A scenario running this many real seconds is stuck: every thread's stack is printed and the process ends (as in
features/environment.py), so a hang fails the session at once, saying where, its tasks' stacks printed first."""


def before_scenario(context: Context, scenario: Any) -> None:
    STUCK.arm()
    context.runner = asyncio.Runner()
    context.cleanups = []
    state = Path(tempfile.mkdtemp(prefix="lowtide-integration-"))
    context.state_dir = state
    context.saved_environment = {name: os.environ.get(name) for name in _ISOLATED}
    os.environ["XDG_STATE_HOME"] = str(state / "xdg")
    os.environ["LOWTIDE_LEDGER"] = str(state / "ledger.sqlite3")


def after_scenario(context: Context, scenario: Any) -> None:
    from lowtide.cost.pricing import forget_unpriced
    from lowtide.ledger.store import close_ledgers
    from lowtide.providers.anthropic.checks import forget_models

    try:  # the cleanups too are watched: a hang closing a ledger or an engine is said as well
        for cleanup in reversed(context.cleanups):
            result = cleanup()
            if asyncio.iscoroutine(result):
                context.runner.run(result)
    finally:
        context.runner.close()
        close_ledgers()
        forget_models()
        forget_unpriced()
        for name, value in context.saved_environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(context.state_dir, ignore_errors=True)
        STUCK.disarm()
