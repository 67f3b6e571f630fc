"""Steps for a command's options refused before it starts (features/command_line_options_refused.feature): the
environment and the SQLite file a scenario gives the command."""

from __future__ import annotations

import sqlite3
from contextlib import closing

from _support import set_env, world
from step_context import Context, given, then


@given("the environment variable {name:w} is not set")
def step_unset(context: Context, name: str) -> None:
    set_env(world(context), name, None)


@given('the SQLite file "{name}" in the scenario\'s folder has the schema version {version:d}')
def step_sqlite_version(context: Context, name: str, version: int) -> None:
    with closing(sqlite3.connect(world(context).path(name))) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute(f"PRAGMA user_version = {version:d}")
        db.commit()


@then('the SQLite file "{name}" still has the schema version {version:d}')
def step_sqlite_still(context: Context, name: str, version: int) -> None:
    with closing(sqlite3.connect(world(context).path(name))) as db:
        (found,) = db.execute("PRAGMA user_version").fetchone()
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert (found, tables) == (version, ["notes"]), (found, tables)
