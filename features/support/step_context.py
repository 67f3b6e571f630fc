"""The behave context as lowtide's steps see it: what behave sets on it, and what the environments set on it.

Behave's `Context` takes any attribute, so pyright could check nothing said about it; every step function and every
hook takes this Protocol instead (`context: Context`, written by `.ci/type_step_context.py`). A step module that
keeps attributes of its own on the context declares them in a Protocol of its own derived from this one
(`class Context(step_context.Context, Protocol): ...`), so that each attribute has one declared type and a misspelt
one is an error. Nothing here exists at run time beyond the Protocol itself: behave passes its own `Context`.

The step decorators come from here too: behave's (typeshed's stubs) accept only functions of behave's own `Context`,
which matches no Protocol that declares attributes. At run time they are behave's, unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from behave.configuration import Configuration
from behave.model import Scenario, Table

if TYPE_CHECKING:
    _Step = TypeVar("_Step", bound=Callable[..., None])

    def given(step_text: str, **kwargs: object) -> Callable[[_Step], _Step]: ...
    def when(step_text: str, **kwargs: object) -> Callable[[_Step], _Step]: ...
    def then(step_text: str, **kwargs: object) -> Callable[[_Step], _Step]: ...
    def step(step_text: str, **kwargs: object) -> Callable[[_Step], _Step]: ...

else:
    from behave import given, step, then, when

__all__ = ["Context", "given", "step", "then", "when"]


class Context(Protocol):
    """What every scenario's context has (features/environment.py, features/integrations/environment.py)."""

    # -- behave's own ----------------------------------------------------------------------------------------------

    table: Table
    """The step's table. Declared present: only a step whose text carries a table reads it (elsewhere it is None)."""
    text: str
    """The step's doc string. Declared present: only a step whose text carries one reads it (elsewhere it is None)."""
    config: Configuration
    scenario: Scenario
    """The scenario running (a step may `skip` it, as an opt-in test does when its variable is not set)."""

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
    feature_cleanups: ExitStack
    """Closed after the feature's last scenario: what its scenarios share (`shared_servers.py`) (features/ only)."""
    shared_servers: dict[str, object]
    """The feature's servers by name, made on first use: `shared_server` of features/support/shared_servers.py."""
    postgres_url: str
    """The scenario's PostgreSQL database (a schema of its own); set only for `@postgres` scenarios and, under
    `-D store=postgres`, `@stores` ones."""

    def new_postgres_database(self, icu_locale: str | None = None) -> str:
        """Another PostgreSQL database for the scenario, where it needs a second one (features/ only); with
        `icu_locale` ("en-US"), in a database whose text is ordered by that language's rules."""
        ...

    # -- the scenario states that helpers shared by several step modules make on first use ------------------------
    # Declared `object`: each is made and read by its one helper, which checks that it is its own kind (isinstance).

    world: object
    """The `World`: `world(context)` of features/steps/_support.py or features/integrations/steps/_world.py."""
    emulator_scenario: object
    """The emulator scenario (`Scenario`): `scenario(context)` of features/steps/emulator_steps.py."""
    openai_scenario: object
    """The OpenAI emulator scenario (`OpenAIScenario`): `scenario(context)` of features/steps/_openai_support.py."""
