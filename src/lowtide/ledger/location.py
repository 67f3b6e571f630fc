"""Where a ledger lives, read in one place from every way one is given (`--ledger`, `$LOWTIDE_LEDGER`, an actor's
`ledger:` setting, `Actor(ledger=...)`, `open_ledger`): by its scheme, the kind of store that keeps it
(`kinds.LedgerRegistry`: a path or `sqlite:`, `postgresql:`, `memory:`, a plugin's), by default the file
`$LOWTIDE_LEDGER` names, else the user's state directory. A scheme no store has (`mysql://...`) is refused, naming
the ones there are.

`ledger_location` gives a `LedgerLocation`: its `kind` opens it (`store.open_ledger`), its `target` is what that
kind is given.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from lowtide.errors import ConfigurationError
from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation, ledger_registry, redacted

__all__ = [
    "LEDGER_ENV",
    "LedgerLocation",
    "default_ledger_path",
    "ledger_location",
    "ledger_problem",
    "redacted",
]

LEDGER_ENV = "LOWTIDE_LEDGER"

# Two letters or more before the colon: `C:\...` stays a path. No slash before it: `./a:b` stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(.*)$", re.DOTALL)


@dataclass(frozen=True)
class LedgerLocation:
    """A ledger's place: the `kind` of store that keeps it and its `target`, what that kind is given (a file's path
    as written, `~` expanded; a database's URL)."""

    kind: LedgerKind
    target: str

    @property
    def scheme(self) -> str:
        return self.kind.scheme

    def __str__(self) -> str:
        return self.kind.shown(self.target)


def ledger_location(
    given: str | Path | None, *, source: str = "ledger", registry: LedgerRegistry | None = None
) -> LedgerLocation:
    """The ledger `given` names (None: `$LOWTIDE_LEDGER`, else the file in the user's state directory). A scheme
    no store has, or a location its kind refuses (`sqlite:` naming no file), is a `ConfigurationError` naming
    `source` (the option, variable or setting it came from) and the kinds there are."""
    kinds = registry or ledger_registry()
    if given is None:
        explicit = os.environ.get(LEDGER_ENV)
        if explicit:
            return ledger_location(explicit, source=f"${LEDGER_ENV}", registry=kinds)
        return LedgerLocation(kinds.for_paths(), str(_state_file()))
    found = _read(str(given), kinds, path=isinstance(given, Path))
    if isinstance(found, LedgerLocation):
        return found
    shown = f" {redacted(str(given))!r}" if str(given).strip() else ""
    raise ConfigurationError(f"{source}{shown} {found}", field="ledger")


def ledger_problem(given: str) -> str | None:
    """What makes `given` no ledger location lowtide can open, in words that follow it; None when it is one."""
    found = _read(given, ledger_registry())
    return None if isinstance(found, LedgerLocation) else found


def default_ledger_path() -> Path:
    """The file a ledger is kept in when none is named: the one `$LOWTIDE_LEDGER` names (as a path or with the
    scheme of the kind that takes paths, `sqlite:`), else `$XDG_STATE_HOME/lowtide/ledger.sqlite3`
    (`~/.local/state/...` by default)."""
    location = ledger_location(None)
    return Path(location.target) if location.kind.takes_paths else _state_file()


def _state_file() -> Path:
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "lowtide" / "ledger.sqlite3"


def _read(text: str, kinds: LedgerRegistry, *, path: bool = False) -> LedgerLocation | str:
    """The location `text` names, or what is wrong with it. With `path` (it was given as a `Path`), a scheme no
    store has is part of a file's name."""
    if not text.strip():
        return f"is empty; {_listed(kinds)}."
    found = _SCHEME.match(text)
    kind, rest = (kinds.kind(found.group(1)), found.group(2)) if found else (None, None)
    if kind is None:
        if found is not None and not path:
            return (
                f"names no kind of ledger lowtide has ({found.group(1).lower()}:); {_listed(kinds)} (./name for a"
                " file whose name holds a colon)."
            )
        kind, rest = kinds.for_paths(), None
    try:
        return LedgerLocation(kind, kind.target(text, rest))
    except NotALocation as refused:
        return str(refused)


def _listed(kinds: LedgerRegistry) -> str:
    """`use A, B or C`: how each kind's locations are written."""
    examples = [kind.example for kind in kinds.kinds()]
    return f"use {', '.join(examples[:-1])} or {examples[-1]}" if len(examples) > 1 else f"use {examples[0]}"
