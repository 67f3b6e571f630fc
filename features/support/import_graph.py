"""The import graph of a package's source, read with `ast` (nothing imported), and the cycles in it.

An import counts when it runs: at a module's top level (within an `if`, `try`, `with` or class body too) or in a
function's body when the function is called. An import under `if TYPE_CHECKING:` never runs and does not count, nor
does a module loaded by name (`importlib.import_module`, an entry point): that is a plugin's seam, resolved at run
time. A function-local import counts because it runs: a cycle that only a deferred import keeps from failing is a
cycle all the same.

Importing `a.b.c` runs the `__init__` of every package on the way (`a`, `a.b`) before `a.b.c`, except those that
hold the importing module, which are already under way; so an edge goes to each of those packages too, and a
package's own imports are its `__init__`'s. `from a.b import c` imports the module `a.b.c` if there is one, else
takes the name `c` from `a.b`.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Edge", "cycles", "groups", "import_graph", "problems", "shown"]


@dataclass(frozen=True)
class Edge:
    """One module's import of another: where it is written."""

    importer: str
    imported: str
    path: Path
    line: int


def import_graph(package: Path) -> dict[str, dict[str, Edge]]:
    """Every module under the package directory `package` -> the modules of the package its imports run (first
    import of each), by dotted name."""
    modules = _modules(package)
    graph: dict[str, dict[str, Edge]] = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        edges: dict[str, Edge] = {}
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)).body):
            for target in _targets(node, here, modules):
                for imported in _with_packages(target):
                    under_way = name == imported or name.startswith(imported + ".")
                    if imported in modules and not under_way and imported not in edges:
                        edges[imported] = Edge(name, imported, path, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, Edge]]) -> list[list[Edge]]:
    """One cycle for each group of modules that reach one another (a strongly connected component), as its edges,
    beginning at the group's first module by name; none when the graph has no cycle."""
    return [cycle for _, cycle in groups(graph)]


def groups(graph: dict[str, dict[str, Edge]]) -> list[tuple[frozenset[str], list[Edge]]]:
    """Each group of modules that reach one another (a strongly connected component), with one cycle through its
    first module by name (the shortest), by that module. A group may hold more modules than its cycle shows: a new
    import that draws a module into a group leaves the group's shortest cycle as it was, so a group is known by all
    of its modules."""
    found = [(frozenset(group), _path_back(graph, min(group), group)) for group in _components(graph)]
    return sorted(found, key=lambda item: item[1][0].importer)


def problems(graph: dict[str, dict[str, Edge]], root: Path, allowed: Collection[frozenset[str]] = ()) -> list[str]:
    """What is wrong with the cycles of `graph` when only the groups `allowed` may remain (each as all its modules):
    a group not allowed, as cycles that pass through every module of it not in an allowed group it grew from (so a
    module drawn into an allowed group is named, with where the import that draws it is written); a group allowed
    that is gone."""
    found = groups(graph)
    said: list[str] = []
    for group, _ in found:
        if group in allowed:
            continue
        grown = next((known for known in allowed if known < group), frozenset[str]())
        covered = set(grown)
        shown_cycles: list[list[Edge]] = []
        for module in sorted(group):
            if module not in covered:
                through = _path_back(graph, module, group)
                shown_cycles.append(through)
                covered.update(edge.importer for edge in through)
        said += [f"import cycle at run time: {shown(through, root)}" for through in shown_cycles]
    for group in sorted(allowed, key=sorted):
        if not any(group <= found_group for found_group, _ in found):
            said.append(f"no longer a cycle (remove it from the list): {', '.join(sorted(group))}")
    return said


def shown(cycle: list[Edge], root: Path) -> str:
    """`a -> b -> a (a.py:3, b.py:12)`: the modules of a cycle, and where each import is written."""
    names = " -> ".join([cycle[0].importer, *(edge.imported for edge in cycle)])
    where = ", ".join(f"{edge.path.relative_to(root)}:{edge.line}" for edge in cycle)
    return f"{names} ({where})"


def _modules(package: Path) -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of `body` that run: every one but those under `if TYPE_CHECKING:`."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _type_checking(node.test):
            yield from _imports(node.orelse)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, ()):
                    if isinstance(child, ast.stmt):
                        yield from _imports([child])
                    elif isinstance(child, ast.ExceptHandler | ast.match_case):
                        yield from _imports(child.body)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, here: str, modules: dict[str, tuple[Path, bool]]) -> Iterator[str]:
    """The modules `node` imports (`here`: the package a relative import starts from)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = here.split(".")
        base = ".".join([*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])])
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in modules else base


def _with_packages(name: str) -> Iterator[str]:
    """`a.b.c` and the packages it runs first: `a`, `a.b`."""
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        yield ".".join(parts[:end])


def _components(graph: dict[str, dict[str, Edge]]) -> list[set[str]]:
    """The groups of more than one module that reach one another (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def _path_back(graph: dict[str, dict[str, Edge]], start: str, group: Collection[str]) -> list[Edge]:
    """The shortest way from `start` back to itself within `group` (breadth first), as its edges."""
    came: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child, edge in sorted(graph[node].items()):
                if child == start:
                    path = [edge]
                    while path[0].importer != start:
                        path.insert(0, came[path[0].importer])
                    return path
                if child in group and child not in came:
                    came[child] = edge
                    following.append(child)
        frontier = following
    raise AssertionError(f"{start} is in a cycle but no way back to it was found")
