"""Steps for the emulator's seam: the imports of lowtide's modules read from their source (ast), the emulations
composed from the entry-point group, and a plugin emulation (features/plugins/lowtide_tidepool_emulation.py) served
beside the built-in ones."""

from __future__ import annotations

import ast
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, Protocol

import httpx2
from _support import PLUGINS, plugins_importable
from step_context import Context as StepContext
from step_context import given, then, when

import lowtide
import lowtide.emulator
from lowtide.emulator import ROUTES, Emulation, EmulationError, Emulator
from lowtide.emulator.anthropic.emulation import AnthropicEmulation
from lowtide.emulator.core.emulation import ENTRY_POINT_GROUP, installed_emulations, load_emulations


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    emulator_seam: Seam


PACKAGE = Path(lowtide.__file__).parent
EMULATOR = "lowtide.emulator"
TIDEPOOL_KEY = {"x-tidepool-key": "tide-key"}


@dataclass
class Seam:
    """What one seam scenario read, built and saw."""

    imports: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    emulator: Emulator | None = None
    emulations: tuple[type[Emulation], ...] = ()
    state_file: Path | None = None
    answer: httpx2.Response | None = None

    @property
    def emu(self) -> Emulator:
        assert self.emulator is not None, "make the emulator first"
        return self.emulator

    @property
    def reply(self) -> httpx2.Response:
        assert self.answer is not None, "call the emulator first"
        return self.answer


def seam(context: Context) -> Seam:
    if not hasattr(context, "emulator_seam"):
        context.emulator_seam = Seam()
    return context.emulator_seam


# -- the imports, from the source ------------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str) -> set[str]:
    """Every module `path` imports, anywhere in it (functions and `TYPE_CHECKING` blocks too), as absolute names;
    `from a import b` counts as importing `a` and `a.b`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


@when("the imports of every module of lowtide are read from its source, in functions too")
def step_read_imports(context: Context) -> None:
    s = seam(context)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        s.imports[module] = _imports(path, module)
    assert EMULATOR in s.imports, sorted(s.imports)[:10]


@then("no module outside lowtide.emulator imports it, but these:")
def step_no_outside_imports(context: Context) -> None:
    s = seam(context)
    allowed = {row["module"] for row in context.table}
    importers = {
        module
        for module, names in s.imports.items()
        if not _inside(module, EMULATOR) and any(_inside(name, EMULATOR) for name in names)
    }
    assert importers == allowed, f"modules outside the emulator that import it: {sorted(importers - allowed)}"


def _emulation_folders() -> set[str]:
    """The emulator's folders but its core: one per API."""
    return {
        f"{EMULATOR}.{folder.name}"
        for folder in (PACKAGE / "emulator").iterdir()
        if (folder / "__init__.py").is_file() and folder.name != "core"
    }


@then("no module of lowtide.emulator.core imports an emulation of lowtide.emulator")
def step_core_names_no_emulation(context: Context) -> None:
    s = seam(context)
    core = f"{EMULATOR}.core"
    wrong = {
        module: sorted(name for name in names if _inside(name, EMULATOR) and not _inside(name, core))
        for module, names in s.imports.items()
        if _inside(module, core)
    }
    wrong = {module: names for module, names in wrong.items() if names}
    assert not wrong, f"the core imports these outside itself: {wrong}"
    assert {f"{EMULATOR}.anthropic", f"{EMULATOR}.openai"} <= _emulation_folders(), _emulation_folders()


@then("no emulation of lowtide.emulator imports another emulation, but these built on another API's:")
def step_emulations_apart(context: Context) -> None:
    """An API of another's shapes (Azure OpenAI's are OpenAI's) may reuse that emulation's machinery, as the table
    says; no other emulation imports another."""
    s = seam(context)
    folders = _emulation_folders()
    allowed = {(f"{EMULATOR}.{row['emulation']}", f"{EMULATOR}.{row['built on']}") for row in context.table}
    wrong = {
        module: sorted(
            name
            for name in names
            for other in folders - {folder}
            if _inside(name, other) and (folder, other) not in allowed
        )
        for folder in folders
        for module, names in s.imports.items()
        if _inside(module, folder)
    }
    wrong = {module: names for module, names in wrong.items() if names}
    assert not wrong, f"emulations importing each other: {wrong}"


@then('the plugin emulation "{module}" imports of the emulator what lowtide.emulator exports alone')
def step_plugin_public(context: Context, module: str) -> None:
    path = PLUGINS / f"{module}.py"
    names = {name for name in _imports(path, module) if _inside(name, EMULATOR)}
    public = {EMULATOR, *(f"{EMULATOR}.{name}" for name in lowtide.emulator.__all__)}
    assert names, f"{path} imports nothing of the emulator"
    assert names <= public, f"{path} reaches past lowtide.emulator's exports: {sorted(names - public)}"


# -- the emulations of the entry-point group --------------------------------------------------------------------------


@then('the installed emulations are "{names}", each a folder of lowtide.emulator')
def step_installed(context: Context, names: str) -> None:
    installed = installed_emulations()
    assert [kind.name for kind in installed] == [name.strip() for name in names.split(",")], installed
    for kind in installed:
        assert kind.__module__.startswith(f"{EMULATOR}.{kind.name}."), (kind, kind.__module__)


@then("the emulator's route names are those of its emulations, each armable as a fault")
def step_route_names(context: Context) -> None:
    emulator = Emulator()
    named = tuple(name for emulation in emulator.emulations for name in emulation.route_names)
    assert emulator.faults.routes == named == ROUTES, (emulator.faults.routes, ROUTES)
    assert len(set(named)) == len(named), named
    served = {
        name
        for emulation in emulator.emulations
        for _, _, name, _ in (*emulation.routes(), *emulation.fallback_routes())
    }
    assert served == set(named), set(named) ^ served
    for route in named:
        emulator.faults.fail_next(route, 500)
        assert emulator.faults.pending(route) == 1, route


# -- a plugin emulation ------------------------------------------------------------------------------------------------


def _entry_points(spec: str) -> list[EntryPoint]:
    plugins_importable()
    points: list[EntryPoint] = []
    for one in spec.split(","):
        name, _, value = (part.strip() for part in one.partition("="))
        points.append(EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP))
    return points


def _make(context: Context, spec: str, *, state: bool) -> None:
    s = seam(context)
    s.emulations = (*installed_emulations(), *load_emulations(_entry_points(spec)))
    if state:
        folder = Path(tempfile.mkdtemp(prefix="lowtide-seam-"))
        context.cleanups.append(lambda: shutil.rmtree(folder, ignore_errors=True))
        s.state_file = folder / "state.json"
    s.emulator = Emulator(emulations=s.emulations, state_file=s.state_file)


@given('an emulator of the installed emulations and the plugin emulation "{spec}"')
def step_plugged(context: Context, spec: str) -> None:
    _make(context, spec, state=False)


@given('an emulator on a state file of the installed emulations and the plugin emulation "{spec}"')
def step_plugged_state(context: Context, spec: str) -> None:
    _make(context, spec, state=True)


@given('an emulator of the Anthropic emulation and the plugin emulation "{spec}" alone')
def step_some(context: Context, spec: str) -> None:
    s = seam(context)
    s.emulations = (AnthropicEmulation, *load_emulations(_entry_points(spec)))
    s.emulator = Emulator(emulations=s.emulations)


@when("a caller with no key of either lists the models")
def step_nobody_lists(context: Context) -> None:
    _call(context, "GET", "/v1/models", {})


@then("the answer is the emulator's own 404 for an unknown route")
def step_own_404(context: Context) -> None:
    reply = seam(context).reply
    assert reply.status_code == 404, (reply.status_code, reply.text)
    body = reply.json()
    assert body["error"] == {"type": "not_found_error", "message": "Not found."}, body
    assert body["request_id"] == reply.headers["request-id"], (body, reply.headers)


@then('asking the emulator for its OpenAI emulation raises EmulationError mentioning "{mention}"')
def step_lacks_openai(context: Context, mention: str) -> None:
    refusal: EmulationError | None = None
    try:
        seam(context).emu.openai  # noqa: B018 - the handle is what is asked for
    except EmulationError as error:
        refusal = error
    assert refusal is not None, "the emulator gave an OpenAI emulation it was not composed with"
    assert mention in str(refusal), str(refusal)


@when("the plugged emulator is made again on its state file")
def step_plugged_again(context: Context) -> None:
    s = seam(context)
    assert s.state_file is not None
    s.emulator = Emulator(emulations=s.emulations, state_file=s.state_file)


@when("the plugged emulator is reset")
def step_plugged_reset(context: Context) -> None:
    seam(context).emu.reset()


def _call(context: Context, method: str, path: str, headers: dict[str, str], body: Any = None) -> None:
    s = seam(context)

    async def call() -> httpx2.Response:
        async with s.emu.http_client() as client:
            return await client.request(method, path, headers=headers, json=body)

    s.answer = context.runner.run(call())


@when('a tidepool caller creates the tide "{name}"')
def step_create_tide(context: Context, name: str) -> None:
    _call(context, "POST", "/v1/tides", TIDEPOOL_KEY, {"name": name})


@when("a tidepool caller creates a tide with no name")
def step_create_nameless(context: Context) -> None:
    _call(context, "POST", "/v1/tides", TIDEPOOL_KEY, {})


@when('a caller with no tidepool key creates the tide "{name}"')
def step_create_keyless(context: Context, name: str) -> None:
    _call(context, "POST", "/v1/tides", {}, {"name": name})


@when("a tidepool caller lists the models")
def step_tidepool_models(context: Context) -> None:
    _call(context, "GET", "/v1/models", TIDEPOOL_KEY)


@when('a tidepool caller asks for the path "{path}"')
def step_tidepool_path(context: Context, path: str) -> None:
    _call(context, "GET", path, TIDEPOOL_KEY)


@given('a fault fails the plugged emulator\'s next "{route}" call with status {status:d}')
def step_plugged_fault(context: Context, route: str, status: int) -> None:
    seam(context).emu.faults.fail_next(route, status)


@then('the tidepool caller is answered {status:d} with the tide "{name}", {count:d} so far')
def step_answered_tide(context: Context, status: int, name: str, count: int) -> None:
    reply = seam(context).reply
    assert reply.status_code == status, (reply.status_code, reply.text)
    assert reply.json() == {"tide": name, "count": count}, reply.json()
    assert reply.headers.get("request-id"), reply.headers


@then('the tidepool caller is answered {status:d} with the tidepool models "{models}"')
def step_answered_models(context: Context, status: int, models: str) -> None:
    reply = seam(context).reply
    assert reply.status_code == status, (reply.status_code, reply.text)
    assert reply.json() == {"tidepool_models": [name.strip() for name in models.split(",")]}, reply.json()


@then('the tidepool caller is answered {status:d} with the tidepool error "{reason}"')
def step_answered_error(context: Context, status: int, reason: str) -> None:
    reply = seam(context).reply
    assert reply.status_code == status, (reply.status_code, reply.text)
    assert reply.json() == {"tidepool_error": {"status": status, "reason": reason}}, reply.json()


@then('the plugged emulator\'s calls counted "{route}" {count:d} time')
def step_plugged_calls(context: Context, route: str, count: int) -> None:
    calls = seam(context).emu.calls
    assert calls[route] == count, calls


@then("the plugged emulator's stats count {count:d} tidepool tide")
def step_plugged_stats(context: Context, count: int) -> None:
    _call(context, "GET", "/_emulator/stats", {})
    stats = seam(context).reply.json()
    assert stats["tidepool_tides"] == count, stats
    assert {"calls", "rate_limited", "created_custom_ids", "openai_created_custom_ids"} <= set(stats), stats


def _tidepool(s: Seam) -> Any:
    plugins_importable()
    import lowtide_tidepool_emulation

    return s.emu.emulation(lowtide_tidepool_emulation.TidepoolEmulation)


@then('the tidepool emulation is the emulator\'s handle of its class, holding the tide "{name}"')
def step_handle(context: Context, name: str) -> None:
    s = seam(context)
    tidepool = _tidepool(s)
    assert tidepool.name == "tidepool"
    assert tidepool in s.emu.emulations
    assert tidepool.tides == [name], tidepool.tides


@then('the tidepool emulation holds the tide "{name}"')
def step_holds(context: Context, name: str) -> None:
    assert _tidepool(seam(context)).tides == [name]


@then("the tidepool emulation holds no tide")
def step_holds_none(context: Context) -> None:
    s = seam(context)
    assert _tidepool(s).tides == []
    assert s.emu.calls == {}, s.emu.calls


@then("the Anthropic SDK still lists the Anthropic models on the same emulator")
def step_anthropic_models(context: Context) -> None:
    client = seam(context).emu.client()

    async def listed() -> list[str]:
        try:
            return [model.id async for model in client.models.list()]
        finally:
            await client.close()

    ids = context.runner.run(listed())
    assert ids, ids
    assert all(model.startswith("claude-") for model in ids), ids


@then("the OpenAI SDK still lists the OpenAI models on the same emulator")
def step_openai_models(context: Context) -> None:
    client = seam(context).emu.openai_client()

    async def listed() -> list[str]:
        try:
            return [model.id async for model in client.models.list()]
        finally:
            await client.close()

    ids = context.runner.run(listed())
    assert any(model.startswith("gpt-") for model in ids), ids
    assert not any(model.startswith("tide-") for model in ids), ids


@then('composing the emulator with the entry point "{spec}" raises EmulationError mentioning "{mention}"')
def step_refused(context: Context, spec: str, mention: str) -> None:
    refusal: EmulationError | None = None
    try:
        Emulator(emulations=load_emulations(_entry_points(spec)))
    except EmulationError as error:
        refusal = error
    assert refusal is not None, f"composing {spec} was not refused"
    assert mention in str(refusal), str(refusal)
