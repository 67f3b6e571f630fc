"""Steps of import_cycles.feature: the import graph of a package's source (`features/support/import_graph.py`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol

from _support import FEATURES, world
from import_graph import Edge, cycles, import_graph, problems, shown
from step_context import Context as StepContext
from step_context import given, then, when


class Context(StepContext, Protocol):
    package: Path
    """The package whose imports are drawn."""
    added: str
    """Where the import a scenario added is written (`module:line`)."""
    graph: dict[str, dict[str, Edge]]


@given('the source of the package "{path}"')
def step_package_source(context: Context, path: str) -> None:
    context.package = FEATURES.parent / path


@given('a copy of the package "{path}" in which "{module}" also runs "{statement}"')
def step_package_copy(context: Context, path: str, module: str, statement: str) -> None:
    source = FEATURES.parent / path
    copy = world(context).path("source") / source.name
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    changed = copy.parent / module
    assert changed.is_file(), f"{module} is not a module of {path}"
    lines = changed.read_text(encoding="utf-8").splitlines()
    changed.write_text("\n".join([*lines, statement]) + "\n", encoding="utf-8")
    context.package = copy
    context.added = f"{module}:{len(lines) + 1}"


@given('a package "{name}" whose modules are:')
def step_package_made(context: Context, name: str) -> None:
    package = world(context).path(name)
    for row in context.table:
        module = package / row["module"]
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(row["source"].replace("\\n", "\n") + "\n", encoding="utf-8")
    context.package = package


@when("its imports are drawn as a graph")
def step_graph_drawn(context: Context) -> None:
    context.graph = import_graph(context.package)


@then("the graph has more than {count:d} modules")
def step_graph_size(context: Context, count: int) -> None:
    assert len(context.graph) > count, sorted(context.graph)


@then("no module reaches itself through the graph")
def step_no_cycle(context: Context) -> None:
    found = problems(context.graph, context.package.parent)
    assert not found, "\n".join(found)


@then('the check for cycles fails, saying only that a cycle runs through "{name}", naming where the import added is')
def step_check_fails(context: Context, name: str) -> None:
    found = problems(context.graph, context.package.parent)
    assert len(found) == 1, "\n".join(found) or "the check passed"
    said = found[0]
    assert said.startswith(f"import cycle at run time: {name} -> "), said
    modules, _, where = said.removeprefix("import cycle at run time: ").partition(" (")
    assert modules.endswith(f" -> {name}"), said
    assert context.added in where.rstrip(")").split(", "), (context.added, said)


@then("the cycles found are:")
def step_cycles_found(context: Context) -> None:
    found = [shown(cycle, context.package.parent) for cycle in cycles(context.graph)]
    assert found == context.text.splitlines(), "\n".join(found)
