"""What neutral code says in its code (not its documentation): lowtide's modules outside a provider's folder
(`providers/<name>/`) and the emulator, read with `ast`.

Code is what runs: names (variables, attributes, functions, classes, arguments), imports, and the strings that are
not documentation. Documentation is a docstring (of a module, class or function, or the string after an assignment
that documents it) and the text of a CLI option or a setting (`help=`, `short_help=`, `description=`, `epilog=`):
it may name a provider as an example, as the README does.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Finding", "findings", "neutral_modules"]

_DOCUMENTATION_KEYWORDS = frozenset({"help", "short_help", "description", "epilog"})


@dataclass(frozen=True)
class Finding:
    """A word found in a module's code: where, and the name or string it is in."""

    module: str
    """The module's path under the package's folder (`config.py`, `cli/serve_command.py`)."""
    line: int
    text: str


def neutral_modules(package: Path) -> Iterator[Path]:
    """Every module of `package` outside a provider's folder and the emulator."""
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if parts[0] == "emulator" or (parts[0] == "providers" and len(parts) > 2):
            continue
        yield path


def findings(package: Path, modules: Iterable[Path], words: Iterable[str]) -> list[Finding]:
    """Where any of `words` (case apart) is in the code of `modules`, one finding per name or string."""
    pattern = re.compile("|".join(re.escape(word) for word in words), re.IGNORECASE)
    found: list[Finding] = []
    for path in modules:
        module = path.relative_to(package).as_posix()
        for line, text in _code_texts(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if pattern.search(text):
                found.append(Finding(module, line, text))
    return found


def _code_texts(tree: ast.Module) -> Iterator[tuple[int, str]]:
    documentation = _documentation(tree)
    for node in ast.walk(tree):
        match node:
            case ast.Constant(value=str(text)) if id(node) not in documentation:
                yield node.lineno, text
            case ast.Name(id=text) | ast.Attribute(attr=text) | ast.arg(arg=text):
                yield node.lineno, text
            case ast.FunctionDef(name=text) | ast.AsyncFunctionDef(name=text) | ast.ClassDef(name=text):
                yield node.lineno, text
            case ast.keyword(arg=str(text)):
                yield node.lineno, text
            case ast.Import(names=aliases) | ast.ImportFrom(names=aliases):
                if isinstance(node, ast.ImportFrom) and node.module:
                    yield node.lineno, node.module
                for alias in aliases:
                    yield node.lineno, alias.name
            case _:
                pass


def _documentation(tree: ast.Module) -> set[int]:
    """The ids of the string nodes that document: docstrings, attribute docstrings and the text of an option."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body: object = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                # A string standing alone as a statement documents what precedes it (or the module, class, function).
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    found.add(id(statement.value))
        if isinstance(node, ast.keyword) and node.arg in _DOCUMENTATION_KEYWORDS:
            found.update(id(inner) for inner in ast.walk(node.value))
    return found
