"""The behave context as lowtide's steps see it: what behave sets on it, and what the environments set on it.

Behave's `Context` takes any attribute, so pyright could check nothing said about it; every step function and every
hook takes this Protocol instead (`context: Context`, written by `.ci/type_step_context.py`). A step module that
keeps attributes of its own on the context declares them in a Protocol of its own derived from this one
(`class Context(step_context.Context, Protocol): ...`), so that each attribute has one declared type and a misspelt
one is an error. Nothing here exists at run time beyond the Protocol itself: behave passes its own `Context`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from behave.configuration import Configuration
from behave.model import Table


class Context(Protocol):
    """What every scenario's context has (features/environment.py, features/integrations/environment.py)."""

    # -- behave's own ----------------------------------------------------------------------------------------------

    table: Table
    """The step's table. Declared present: only a step whose text carries a table reads it (elsewhere it is None)."""
    text: str
    """The step's doc string. Declared present: only a step whose text carries one reads it (elsewhere it is None)."""
    config: Configuration

    def execute_steps(self, steps_text: str) -> bool: ...

    def add_cleanup(self, cleanup_func: Callable[..., object], *args: object, **kwargs: object) -> None: ...

    # -- set by the environments before each scenario ---------------------------------------------------------------

    runner: asyncio.Runner
    """The scenario's event loop runner: async code runs on it from plain steps."""
    cleanups: list[Callable[[], object]]
    """Run in reverse order after the scenario; a coroutine one returns is run on `runner`."""
    state_dir: Path
    """A temporary directory of the scenario's own: `LOWTIDE_LEDGER` and `XDG_STATE_HOME` point into it."""
    saved_environment: dict[str, str | None]
    """The environment variables the scenario's isolation replaced, restored after it."""
    loop_errors: list[str]
    """What the event loop reported that nobody handled: fails the scenario (features/ only)."""
    postgres_url: str
    """The scenario's PostgreSQL database (a schema of its own); set only for `@postgres` scenarios and, under
    `-D store=postgres`, `@stores` ones."""
    new_postgres_database: Callable[[], str]
    """Another PostgreSQL database for the scenario, where it needs a second one (features/ only)."""
    world: object
    """The scenario's `World`, made on first use by `world(context)` (features/steps/_support.py, or
    features/integrations/steps/_world.py: each checks that it is its own kind)."""
