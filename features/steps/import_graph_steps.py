"""Steps of import_cycles.feature: the import graph of a package's source (`features/support/import_graph.py`)."""

from __future__ import annotations

from typing import Any

from _support import FEATURES, world
from behave import given, then, when
from import_graph import cycles, import_graph, shown


@given('the source of the package "{path}"')
def step_package_source(context: Any, path: str) -> None:
    context.package = FEATURES.parent / path


@given('a package "{name}" whose modules are:')
def step_package_made(context: Any, name: str) -> None:
    package = world(context).path(name)
    for row in context.table:
        module = package / row["module"]
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(row["source"].replace("\\n", "\n") + "\n", encoding="utf-8")
    context.package = package


@when("its imports are drawn as a graph")
def step_graph_drawn(context: Any) -> None:
    context.graph = import_graph(context.package)


@then("the graph has more than {count:d} modules")
def step_graph_size(context: Any, count: int) -> None:
    assert len(context.graph) > count, sorted(context.graph)


@then("no module reaches itself through the graph")
def step_no_cycle(context: Any) -> None:
    found = [shown(cycle, context.package.parent) for cycle in cycles(context.graph)]
    assert not found, "import cycles at run time:\n" + "\n".join(found)


@then("no module reaches itself through the graph, but for the cycles still being removed:")
def step_no_cycle_but(context: Any) -> None:
    listed = {row["cycle"] for row in context.table}
    found = {" -> ".join([c[0].importer, *(e.imported for e in c)]): c for c in cycles(context.graph)}
    unlisted = [shown(cycle, context.package.parent) for name, cycle in found.items() if name not in listed]
    assert not unlisted, "import cycles at run time:\n" + "\n".join(unlisted)
    gone = sorted(listed - set(found))
    assert not gone, "no longer a cycle (remove it from the scenario's list):\n" + "\n".join(gone)


@then("the cycles found are:")
def step_cycles_found(context: Any) -> None:
    found = [shown(cycle, context.package.parent) for cycle in cycles(context.graph)]
    assert found == context.text.splitlines(), "\n".join(found)
