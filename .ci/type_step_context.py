"""Give behave step functions and hooks the typed context: `context: Any` becomes `context: Context`.

    python .ci/type_step_context.py [PATH ...]     (default: features)

In every Python file under the paths, each `context: Any` (a parameter annotation: `(?<![\\w.])context: Any\\b`)
becomes `context: Context`, and a file that then names `Context` without importing or defining it gets
`from step_context import Context` (features/support/step_context.py) below `from __future__ import annotations`
(or above its first import). The step decorators are imported from step_context instead of behave (`from behave import
given, then, when` becomes `from step_context import given, then, when`: behave's typed decorators accept only
functions of behave's own `Context`; step_context's are behave's at run time).
Then `ruff check --fix --select I,F401` sorts that import in and drops a `typing.Any` no longer used, and
`ruff format` formats the files it changed (ruff from PATH, or this Python's `-m ruff`). Running it twice changes
nothing the second time. A module with attributes of its own on the context defines its own `Context` Protocol
(derived from step_context's), which this script then leaves alone.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ANNOTATION = re.compile(r"(?<![\w.])context: Any\b")
HAS_CONTEXT = re.compile(r"^(?:from \S+ import [^\n]*\bContext\b|class Context\b)", re.MULTILINE)
FUTURE = "from __future__ import annotations\n"
IMPORT = "from step_context import Context\n"
BEHAVE_IMPORT = re.compile(r"^from behave import ([^\n#(]+?)(?:  # pyright: ignore\[[A-Za-z]+\])?$", re.MULTILINE)
DECORATORS = {"given", "when", "then", "step"}
FIRST_IMPORT = re.compile(r"^(?:import|from) ", re.MULTILINE)


def _decorators(match: re.Match[str]) -> str:
    names = [name.strip() for name in match.group(1).split(",")]
    if not all(name.split(" as ")[0].strip() in DECORATORS for name in names):
        return match.group(0)
    return f"from step_context import {', '.join(names)}"


def rewrite(text: str) -> str:
    text = ANNOTATION.sub("context: Context", text)
    text = BEHAVE_IMPORT.sub(_decorators, text)
    if "context: Context" in text and not HAS_CONTEXT.search(text):
        if FUTURE in text:
            text = text.replace(FUTURE, FUTURE + "\n" + IMPORT, 1)
        else:
            first = FIRST_IMPORT.search(text)
            at = first.start() if first else 0
            text = text[:at] + IMPORT + text[at:]
    return text


def ruff() -> list[str]:
    found = shutil.which("ruff")
    return [found] if found else [sys.executable, "-m", "ruff"]


def main(paths: list[str]) -> int:
    changed: list[str] = []
    for root in paths or ["features"]:
        files = [Path(root)] if Path(root).is_file() else sorted(Path(root).rglob("*.py"))
        for path in files:
            text = path.read_text()
            new = rewrite(text)
            if new != text:
                path.write_text(new)
                changed.append(str(path))
    if changed:
        subprocess.run([*ruff(), "check", "--quiet", "--fix", "--select", "I,F401", *changed], check=False)
        subprocess.run([*ruff(), "format", "--quiet", *changed], check=True)
    print(f"{len(changed)} files rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
