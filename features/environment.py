"""Behave fixtures: one asyncio.Runner per scenario, so async code runs in one event loop from plain steps.

The loop reports to the scenario: an exception no one retrieved from a task, or any other error the event loop
would only log, fails the scenario that caused it (lowtide must hand every background error to a waiting call).
After each scenario the garbage collector runs (so that a dropped task's exception is reported in the scenario that
dropped it), and then what is still alive is frozen (`gc.freeze`), so that each collection looks only at what its
scenario made. A scenario about lowtide's own use of `gc.freeze` thaws it first (`collector_steps.py`).

Every scenario also gets a ledger of its own: `LOWTIDE_LEDGER` (and `XDG_STATE_HOME`, in case something falls back
to the default location) point into a temporary directory made for the scenario and removed after it, so that no
scenario attaches to an answer another one stored, and nothing is written to the real state directory.

A scenario tagged `@postgres` gets a PostgreSQL database of its own too (`context.postgres_url`: a schema of its own,
first on the URL's search path, in one database of a throwaway cluster started for the run on the first such scenario
and removed at its end: `features/support/postgres.py`).

The same scenarios run on either store: with `-D store=postgres` (`nox -s postgres`), every scenario tagged `@stores`
and not `@sqlite` (what only a SQLite file has: its WAL, its permissions, its migrations) gets a PostgreSQL database
of its own as its ledger, `LOWTIDE_LEDGER` naming its URL, instead of a file; with `-D store=folder`, a folder of its
own in the store of another package installed for the run (`features/support/folder_store.py`), `folder:PATH`.
With `-D commits=twice` as well, every transaction of the PostgreSQL ledger is made a second time once it has
committed, as after an outage at COMMIT.
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent / "support"))

from typing import Protocol

from clock import Clock  # features/support: each feature's wall and CPU seconds, when LOWTIDE_SUITE_TIMES is set
from folder_store import install_folder_store, uninstall_folder_store  # features/support: the fourth store
from postgres import PostgresCluster  # features/support, shared with the Robot suites
from step_context import Context as StepContext  # features/support: the typed context every step and hook takes
from step_index import install as index_steps  # features/support: behave's step lookup by first word
from stuck import Stuck  # features/support: a hang said, tasks and threads, before the process ends
from tls_once import install as share_tls_contexts  # features/support: one certificate bundle read a process

index_steps()  # before behave loads the step modules (it loads this file first)
share_tls_contexts()


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    run_wide: _Run


_ISOLATED = ("LOWTIDE_LEDGER", "XDG_STATE_HOME")


class _Run:
    """What the whole run shares: set on the context before every scenario, whose own attributes behave discards at
    its end, so it is changed in place, never replaced."""

    def __init__(self) -> None:
        self.postgres: PostgresCluster | None = None
        self.databases = 0
        self.folder_site: Path | None = None


def _session() -> str:
    """The nox session running this behave (its JUnit folder's name), for the clock's lines."""
    argv = sys.argv
    return Path(argv[argv.index("--junit-directory") + 1]).name if "--junit-directory" in argv else "behave"


CLOCK = Clock(_session())


def before_all(context: Context) -> None:
    context.run_wide = _Run()
    if store(context) == "folder":
        context.run_wide.folder_site = install_folder_store()
    if (context.config.userdata or {}).get("commits") == "twice":
        # Every transaction of a PostgreSQL ledger made a second time once it has committed, as its retry does when
        # the server goes away at COMMIT (`features/support/commits.py`): a store whose every operation is safe to
        # repeat passes the same scenarios.
        from commits import made_twice

        made_twice()


def after_all(context: Context) -> None:
    if context.run_wide.postgres is not None:
        context.run_wide.postgres.stop()
    if context.run_wide.folder_site is not None:
        uninstall_folder_store(context.run_wide.folder_site)
    CLOCK.stop("(whole process)", process=True)


def before_feature(context: Context, feature: Any) -> None:
    CLOCK.start()
    # On the feature's layer of the context, so that every scenario of the feature sees the same ones.
    context.feature_cleanups = ExitStack()
    context.shared_servers = {}


def after_feature(context: Context, feature: Any) -> None:
    try:
        context.feature_cleanups.close()
    finally:
        CLOCK.stop(Path(feature.filename).name)


def _postgres_database(context: Context, icu_locale: str | None = None) -> str:
    """A new database for the scenario, in the run's one cluster (started now if this is the first); dropped after.
    With `icu_locale`, in a database whose text is ordered by that language's rules (ICU's)."""
    run: _Run = context.run_wide
    if run.postgres is None:
        run.postgres = PostgresCluster.start()
    cluster = run.postgres
    run.databases += 1
    name = f"scenario_{run.databases}"
    database = "scenarios" if icu_locale is None else f"scenarios_icu_{icu_locale.replace('-', '_').lower()}"
    # A schema of its own: a database each is far slower.
    url = cluster.create_schema(database, name, icu_locale=icu_locale)

    def drop() -> None:
        _forget_ledgers_and_engines()  # their connections first: the schema goes with the scenario
        cluster.drop_schema(database, name)

    context.cleanups.append(drop)  # the first added, so the last to run
    return url


def store(context: Context) -> str:
    """The store the `@stores` scenarios run on: `sqlite` (default), `postgres` (`-D store=postgres`) or `folder`
    (`-D store=folder`, the store of another package)."""
    return str((context.config.userdata or {}).get("store", "sqlite"))


STUCK = Stuck(600.0)
"""A scenario still running after this many seconds of the machine's time (real seconds, each counted for less on a
machine with more work than cores: `features/support/stuck.py`) is stuck: every running event loop's tasks and every
thread's stack are printed and the process ends, so that a hang fails the run and says where, even one that blocks the
event loop (which no `asyncio.wait_for` can interrupt). `LOWTIDE_STUCK_SECONDS` sets the seconds (hunting a hang)."""


def before_scenario(context: Context, scenario: Any) -> None:
    STUCK.arm()
    context.runner = asyncio.Runner()
    loop_errors: list[str] = []
    context.loop_errors = loop_errors

    def report(loop: asyncio.AbstractEventLoop, details: dict[str, Any]) -> None:
        exc = details.get("exception")
        loop_errors.append(f"{details.get('message')}: {exc!r}" if exc is not None else str(details.get("message")))

    context.runner.get_loop().set_exception_handler(report)
    context.cleanups = []
    state = Path(tempfile.mkdtemp(prefix="lowtide-ledger-"))
    context.saved_environment = {name: os.environ.get(name) for name in _ISOLATED}
    context.state_dir = state
    os.environ["XDG_STATE_HOME"] = str(state / "xdg")
    os.environ["LOWTIDE_LEDGER"] = str(state / "ledger.sqlite3")
    tags = scenario.effective_tags
    # A second one, where a scenario needs it (in a database of a language's collation, where it says so).
    context.new_postgres_database = lambda icu_locale=None: _postgres_database(context, icu_locale)
    if "postgres" in tags:
        context.postgres_url = _postgres_database(context)
    elif store(context) == "postgres" and "stores" in tags and "sqlite" not in tags:
        os.environ["LOWTIDE_LEDGER"] = context.postgres_url = _postgres_database(context)
    elif store(context) == "folder" and "stores" in tags and "sqlite" not in tags:
        os.environ["LOWTIDE_LEDGER"] = f"folder:{state / 'ledger-folder'}"


def after_scenario(context: Context, scenario: Any) -> None:
    try:  # the cleanups too are watched: a hang closing a ledger or an engine is said as well
        for cleanup in reversed(context.cleanups):
            result = cleanup()
            if asyncio.iscoroutine(result):
                context.runner.run(result)
    finally:
        context.runner.close()
        # A task dropped with an exception nobody retrieved says so when it is collected. Then what outlived the
        # scenario is frozen (moved out of the collector's sight, at no cost), so that the next scenario's collection
        # looks at what that scenario made, not again at every module, model and pydantic validator imported: a full
        # collection with the SDKs loaded takes 0.1 to 0.2 s (pydantic-core walks each validator's whole tree), and
        # collecting everything after each of 1,800 scenarios took 80% of the run.
        gc.collect()
        gc.freeze()
        _forget_ledgers_and_engines()
        _forget_what_the_process_learned()
        for name, value in context.saved_environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(context.state_dir, ignore_errors=True)
        STUCK.disarm()
    if context.loop_errors:
        raise AssertionError("The event loop reported errors nobody handled:\n" + "\n".join(context.loop_errors))


def _forget_what_the_process_learned() -> None:
    """What a process keeps for its whole life (the models endpoints' answers, the deprecations and unpriced
    models already reported), forgotten as a new process would, so that no scenario depends on those before it."""
    from lowtide.cost.pricing import forget_unpriced
    from lowtide.providers.anthropic.checks import forget_models

    forget_models()
    forget_unpriced()
    # OpenAI's and Gemini's directories, when a scenario loaded them (importing one would load its SDK into every
    # scenario).
    openai_checks = sys.modules.get("lowtide.providers.openai.checks")
    if openai_checks is not None:
        openai_checks.forget_models()
    gemini_checks = sys.modules.get("lowtide.providers.gemini.checks")
    if gemini_checks is not None:
        gemini_checks.forget_models()
    mistral_checks = sys.modules.get("lowtide.providers.mistral.checks")
    if mistral_checks is not None:
        mistral_checks.forget_models()
    model_names = sys.modules.get("lowtide.providers.model_names")
    if model_names is not None:
        model_names.forget_model_names()


def _forget_ledgers_and_engines() -> None:
    """Close every ledger `open_ledger` cached: they belong to the scenario that just ended, whose files go next.

    Engines are kept per event loop, weakly, so they go with the scenario's closed loop.
    """
    from lowtide.ledger.store import close_ledgers

    close_ledgers()
