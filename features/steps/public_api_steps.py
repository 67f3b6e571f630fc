"""Steps for lowtide's public API."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import types
from importlib.metadata import version
from pathlib import Path
from typing import Any, Protocol

from step_context import Context as StepContext
from step_context import then, when

import lowtide


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    modules: set[str]


def _module(name: str) -> types.ModuleType:
    return importlib.import_module(name)


def _all_order(name: str) -> tuple[int, str]:
    """The order of an `__all__` as ruff keeps it: CONSTANTS, then Classes, then functions, each sorted."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@then("{name}'s __all__ is sorted")
def step_all_sorted(context: Context, name: str) -> None:
    listed: list[str] = list(_module(name).__all__)
    ordered = sorted(listed, key=_all_order)
    assert listed == ordered, [(a, b) for a, b in zip(listed, ordered, strict=True) if a != b]
    assert len(set(listed)) == len(listed)


@then("every name in {name}'s __all__ is exported")
def step_all_exported(context: Context, name: str) -> None:
    module = _module(name)
    missing = [listed for listed in module.__all__ if not hasattr(module, listed)]
    assert not missing, missing


@then("every public object {name} exports is in its __all__")
def step_exports_listed(context: Context, name: str) -> None:
    module = _module(name)
    public = {
        exported
        for exported, value in vars(module).items()
        if not exported.startswith("_") and not isinstance(value, types.ModuleType)
    }
    unlisted = public - set(module.__all__)
    assert not unlisted, sorted(unlisted)


@then('"from {name} import *" imports exactly the names in __all__')
def step_star_import(context: Context, name: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"from {name} import *", namespace)
    namespace.pop("__builtins__", None)
    listed = _module(name).__all__
    assert sorted(namespace) == sorted(listed), sorted(set(namespace) ^ set(listed))


@then("{name}'s __all__ is exactly, each of them importable from it in a new Python process:")
def step_all_exactly(context: Context, name: str) -> None:
    assert context.table is not None
    wanted = [row["name"] for row in context.table]
    assert sorted(_module(name).__all__) == sorted(wanted), sorted(set(_module(name).__all__) ^ set(wanted))
    # A new process: what this one imported before cannot stand in for a name the package no longer binds.
    code = f"from {name} import {', '.join(wanted)}; print('imported')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "imported", done.stderr[-2000:]


@then("{path} imports nothing of lowtide but {allowed}")
def step_imports_only(context: Context, path: str, allowed: str) -> None:
    """Every `lowtide` module the files of `path` (a file, or a folder's modules) import is one of `allowed`."""
    faces = {face.strip().strip('"') for face in allowed.replace(" and ", ", ").split(",")}
    root = Path(__file__).resolve().parents[2]
    files = sorted((root / path).rglob("*.py")) if (root / path).is_dir() else [root / path]
    assert files, path
    found: set[tuple[str, str]] = set()
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((file.name, node.module))
            elif isinstance(node, ast.Import):
                found.update((file.name, alias.name) for alias in node.names)
    internal = sorted((name, module) for name, module in found if module.startswith("lowtide") and module not in faces)
    assert not internal, internal


@then("lowtide.__version__ is the version of the installed distribution")
def step_version(context: Context) -> None:
    assert lowtide.__version__ == version("lowtide"), (lowtide.__version__, version("lowtide"))


def _modules_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{name.partition('.')[0] for name in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@when("a new Python process runs {code}")
def step_run_fresh(context: Context, code: str) -> None:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    context.modules = set(json.loads(done.stdout.strip().splitlines()[-1]))


@then("it imported none of {packages}")
def step_none_of(context: Context, packages: str) -> None:
    names = [name.strip() for name in packages.split(",")]
    loaded = [name for name in names if any(m == name or m.startswith(name + ".") for m in context.modules)]
    assert not loaded, f"imported: {', '.join(loaded)}"


@when("a new Python process imports lowtide and asks it for ClaudeBatchProvider")
def step_import_claude(context: Context) -> None:
    context.modules = _modules_after("import lowtide\nlowtide.ClaudeBatchProvider")


@then("the anthropic SDK was imported, and the openai SDK was not")
def step_anthropic_only(context: Context) -> None:
    assert "anthropic" in context.modules, "anthropic was not imported"
    assert "openai" not in context.modules, "openai was imported"


_BUILD = (
    "from lowtide import Actor\n"
    "actor = Actor({{'name': 'a', 'provider': '{provider}', 'model': '{model}', 'max_tokens': 64,"
    " 'batch_processing': 'batch'}}, api_key='not-a-key')\n"
    "actor.provider()\n"
    "actor.batch_codec()"
)


@when("a new Python process builds an Anthropic actor in batch mode and its provider")
def step_build_anthropic(context: Context) -> None:
    context.modules = _modules_after(_BUILD.format(provider="anthropic", model="claude-sonnet-5-5"))


@when("a new Python process builds an OpenAI actor in batch mode and its provider")
def step_build_openai(context: Context) -> None:
    context.modules = _modules_after(_BUILD.format(provider="openai", model="gpt-5.4-mini"))


@then("the openai SDK was imported, and the anthropic SDK was not")
def step_openai_only(context: Context) -> None:
    assert "openai" in context.modules, "openai was not imported"
    assert "anthropic" not in context.modules, "anthropic was imported"
