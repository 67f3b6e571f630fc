"""Steps of ledger_kinds.feature: the kinds of ledger by scheme (`lowtide.ledger.kinds`), the built-in ones and a
plugin's (features/plugins/lowtide_scratch_ledger.py, and lowtide_shelf_ledger.py installed for a new process)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Protocol

from _support import PLUGINS, plugins_importable, set_env, world, yaml_doc
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.errors import ConfigurationError
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.kinds import ENTRY_POINT_GROUP, LedgerKind, LedgerRegistry
from lowtide.ledger.location import ledger_location
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.records import NewRequest
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import open_ledger


class Context(StepContext, Protocol):
    ledger_registry: LedgerRegistry
    """A registry of the scenario's own, with the kinds it was given."""
    site_packages: Path
    """The folder a new process finds the scenario's installed store on."""
    shared_store: LedgerStore
    own_store: LedgerStore


def _entry_point(spec: str) -> EntryPoint:
    name, _, value = (part.strip() for part in spec.partition("="))
    return EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def _registry(context: Context) -> LedgerRegistry:
    registry = getattr(context, "ledger_registry", None)
    assert isinstance(registry, LedgerRegistry), "no ledger registry was set up"
    return registry


class _Other(LedgerKind):
    """A kind registered by a scenario under a scheme it names."""

    example = "other"

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme

    def open(self, target: str, *, read_only: bool) -> MemoryLedger:
        return MemoryLedger()


@given('the installed package declares the ledger entry point "{spec}"')
def step_installed_entry_point(context: Context, spec: str) -> None:
    expected = _entry_point(spec)
    installed = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert installed.get(expected.name) == expected.value, f"installed entry points: {installed}"


@given("an empty ledger registry")
def step_empty_registry(context: Context) -> None:
    context.ledger_registry = LedgerRegistry()


@given("a ledger registry with the installed kinds")
@when("the installed ledger kinds are loaded into an empty ledger registry")
def step_installed_kinds(context: Context) -> None:
    context.ledger_registry = LedgerRegistry()
    context.ledger_registry.load_entry_points()


@when('the ledger entry point "{spec}" is loaded into it')
def step_load_entry_point(context: Context, spec: str) -> None:
    plugins_importable()
    w = world(context)
    w.plugins_loaded = w.attempt(lambda: _registry(context).load_entry_points([_entry_point(spec)])) or []


@when('a kind of ledger is registered for the scheme "{scheme}"')
@when('a kind of ledger is registered for the scheme "{scheme}" with replace={replace:w}')
def step_register_kind(context: Context, scheme: str, replace: str = "False") -> None:
    world(context).attempt(lambda: _registry(context).register(_Other(scheme), replace=replace == "True"))


@then('the ledger kinds are "{expected}"')
def step_kinds(context: Context, expected: str) -> None:
    found = [kind.scheme for kind in _registry(context).kinds()]
    assert found == [name.strip() for name in expected.split(",")], found


@then("these locations are read as:")
def step_locations_read(context: Context) -> None:
    for row in context.table:
        location = ledger_location(row["location"], registry=_registry(context))
        assert (location.kind.scheme, str(location)) == (row["kind"], row["shown"]), (row["location"], location)


@then('the location "{given}" is refused: "{message}"')
def step_location_refused(context: Context, given: str, message: str) -> None:
    w = world(context)
    found = w.attempt(lambda: ledger_location(given, registry=_registry(context)))
    assert found is None, f"{given!r} was read as a location: {found}"
    assert isinstance(w.error, ConfigurationError), w.error
    assert str(w.error) == message, str(w.error)


@when('an actor "{name}" keeps its ledger at "{location}", with:')
def step_actor_at(context: Context, name: str, location: str) -> None:
    w = world(context)
    w.store = open_ledger(ledger_location(location, registry=_registry(context)))
    w.add_actor({"name": name, "model": "claude-sonnet-5-5", **yaml_doc(context.text)}, ledger=w.store)


@then('the ledger at "{location}" is the actor\'s, opened once in this process')
def step_opened_once(context: Context, location: str) -> None:
    w = world(context)
    again = open_ledger(ledger_location(location, registry=_registry(context)))
    assert again is w.store is w.current_actor().ledger, (again, w.store)


@given('the package "{name}" is installed for a new process, declaring the ledger entry point "{spec}"')
def step_package_installed(context: Context, name: str, spec: str) -> None:
    """A distribution's metadata (`entry_points.txt`) in a folder of its own, which a new process has on its path
    (`"..." runs in a new process`); this process is left as it was (its registry caches the installed kinds)."""
    site = world(context).path("site-packages")
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{spec}\n", encoding="utf-8")
    context.site_packages = site


@given('the ledger shelf is the scenario\'s folder "{name}"')
def step_shelf(context: Context, name: str) -> None:
    w = world(context)
    shelf = w.path(name)
    shelf.mkdir()
    set_env(w, "LOWTIDE_SHELF", str(shelf))


@when('"{command}" runs in a new process with that package installed')
def step_cli_installed(context: Context, command: str) -> None:
    _cli_process(context, command, installed=True)


@when('"{command}" runs in a new process without that package')
def step_cli_not_installed(context: Context, command: str) -> None:
    _cli_process(context, command, installed=False)


def _cli_process(context: Context, command: str, *, installed: bool) -> None:
    """`lowtide ...` as a process of its own, the scenario plugins importable but only the package installed by
    `step_package_installed` declaring an entry point (`installed`); its exit code and outputs kept as `run_cli` keeps
    them."""
    w = world(context)
    argv = shlex.split(command)
    assert argv[0] == "lowtide", argv
    paths = [str(context.site_packages)] if installed else []
    paths += [str(PLUGINS), *filter(None, [os.environ.get("PYTHONPATH")])]
    done = subprocess.run(
        [sys.executable, "-m", "lowtide", *argv[1:]],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    w.value = {"code": done.returncode, "out": done.stdout, "err": done.stderr}


@given('a SQLite ledger file "{name}" holding a request')
def step_file_with_request(context: Context, name: str) -> None:
    path = world(context).path(name)
    store = open_ledger(path)
    store.claim(
        [NewRequest(key="k-1", custom_id="c-1", actor="a", model="m", params={"model": "m"}, max_attempts=1)],
        owner="scenario",
        until=time.time() + 60,
        now=time.time(),
    )


@given('the shelf\'s ledger "{name}" was taken off it by "{who}"')
def step_shelf_taken(context: Context, name: str, who: str) -> None:
    """The mark the shelf's store refuses to open a ledger under (features/plugins/lowtide_shelf_ledger.py)."""
    (Path(os.environ["LOWTIDE_SHELF"]) / f"{name}.taken").write_text(who + "\n", encoding="utf-8")


@when('the process\'s store and a store of its own are opened for "{name}"')
def step_open_both(context: Context, name: str) -> None:
    path = world(context).path(name)
    context.shared_store = open_ledger(path)
    context.own_store = open_ledger(path, own=True)
    world(context).cleanups.append(context.own_store.close)


@then("they are two stores over one ledger, each reading the request")
def step_two_stores(context: Context) -> None:
    assert context.own_store is not context.shared_store
    assert context.own_store.identity() == context.shared_store.identity()
    for store in (context.shared_store, context.own_store):
        record = store.request("k-1")
        assert record is not None, store
        assert record.custom_id == "c-1", record


@then('the process\'s store is the one opened again for "{name}"')
def step_shared_again(context: Context, name: str) -> None:
    assert open_ledger(world(context).path(name)) is context.shared_store


@then("the store of its own reads while the process's store holds a transaction open")
def step_reads_meanwhile(context: Context) -> None:
    shared = context.shared_store
    assert isinstance(shared, Ledger)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with shared.transaction():
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(30), "the transaction never began"
        read: list[object] = []
        reader = threading.Thread(target=lambda: read.append(context.own_store.request("k-1")))
        reader.start()
        reader.join(30)  # a store sharing the held connection would wait here until released
        assert not reader.is_alive(), "the store of its own waited for the process's transaction"
        assert read, "the store of its own read nothing"
        assert read[0] is not None, read
    finally:
        release.set()
        holder.join(30)


@then("closing the store of its own leaves the process's store reading")
def step_close_own(context: Context) -> None:
    context.own_store.close()
    assert context.shared_store.request("k-1") is not None
