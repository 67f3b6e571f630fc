"""Where a ledger lives, read in one place from every way one is given (`--ledger`, `$LOWTIDE_LEDGER`, an actor's
`ledger:` setting, `Actor(ledger=...)`, `open_ledger`): a SQLite file (a path, `sqlite:///abs/path` or
`sqlite:relative/path`), a PostgreSQL database (`postgresql://...`) or `memory:` (this process only); by default the
file `$LOWTIDE_LEDGER` names, else the user's state directory. Anything else with a scheme (`mysql://...`) is refused,
naming the ones there are.

`ledger_location` gives a `LedgerLocation`: its `scheme` says which store opens it (`store.open_ledger`), its
`target` what that store is given. A new kind of store is a new entry in `SCHEMES` and in the store's opener.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lowtide.errors import ConfigurationError

__all__ = [
    "LEDGER_ENV",
    "SCHEMES",
    "LedgerLocation",
    "default_ledger_path",
    "ledger_location",
    "ledger_problem",
    "redacted",
]

LEDGER_ENV = "LOWTIDE_LEDGER"

Scheme = Literal["sqlite", "postgresql", "memory"]

SCHEMES: dict[str, str] = {
    "sqlite": "a SQLite file (a path, sqlite:///absolute/path or sqlite:relative/path)",
    "postgresql": "postgresql://user@host/database",
    "memory": "memory: (this process only)",
}
"""The kinds of ledger a location may name, by scheme, as the error for an unknown one lists them."""

_ALIASES: dict[str, Scheme] = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "memory": "memory",
}
# Two letters or more before the colon: `C:\...` stays a path. No slash before it: `./a:b` stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(.*)$", re.DOTALL)


@dataclass(frozen=True)
class LedgerLocation:
    """A ledger's place: `scheme` (sqlite, postgresql, memory) and `target`, the file's path as given (`~` expanded)
    or the database's URL."""

    scheme: Scheme
    target: str

    @property
    def path(self) -> Path:
        """The SQLite file's path, made absolute."""
        assert self.scheme == "sqlite", self
        return Path(self.target).absolute()

    def __str__(self) -> str:
        if self.scheme == "postgresql":
            return redacted(self.target)
        return "memory:" if self.scheme == "memory" else self.target


def ledger_location(given: str | Path | None, *, source: str = "ledger") -> LedgerLocation:
    """The ledger `given` names (None: `$LOWTIDE_LEDGER`, else the file in the user's state directory). A scheme
    lowtide has no store for, or a `sqlite:` location naming no file here, is a `ConfigurationError` naming `source`
    (the option, variable or setting it came from) and the kinds there are."""
    if given is None:
        explicit = os.environ.get(LEDGER_ENV)
        if explicit:
            return ledger_location(explicit, source=f"${LEDGER_ENV}")
        return LedgerLocation("sqlite", str(_state_file()))
    found = _read(str(given), path=isinstance(given, Path))
    if isinstance(found, LedgerLocation):
        return found
    shown = f" {redacted(str(given))!r}" if str(given).strip() else ""
    raise ConfigurationError(f"{source}{shown} {found}", field="ledger")


def ledger_problem(given: str) -> str | None:
    """What makes `given` no ledger location lowtide can open, in words that follow it; None when it is one."""
    found = _read(given)
    return None if isinstance(found, LedgerLocation) else found


def default_ledger_path() -> Path:
    """The SQLite file a ledger is kept in when none is named: the one `$LOWTIDE_LEDGER` names (as a path or
    `sqlite:`), else `$XDG_STATE_HOME/lowtide/ledger.sqlite3` (`~/.local/state/...` by default)."""
    location = ledger_location(None)
    return Path(location.target) if location.scheme == "sqlite" else _state_file()


def _state_file() -> Path:
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "lowtide" / "ledger.sqlite3"


def _read(text: str, *, path: bool = False) -> LedgerLocation | str:
    """The location `text` names, or what is wrong with it. With `path` (it was given as a `Path`), a scheme lowtide
    has no store for is part of a file's name."""
    if not text.strip():
        return f"is empty; {_KINDS}."
    found = _SCHEME.match(text)
    if found is None:
        return LedgerLocation("sqlite", str(Path(text).expanduser()))
    named, rest = found.group(1).lower(), found.group(2)
    match _ALIASES.get(named):
        case "postgresql":
            return LedgerLocation("postgresql", re.sub(r"^([^:/]+:)/(?!/)", r"\1//", text))  # `Path` folds // to /
        case "memory":
            return "takes no name: write memory:" if rest.strip("/") else LedgerLocation("memory", "")
        case "sqlite":
            return _sqlite(rest)
        case None if path:
            return LedgerLocation("sqlite", str(Path(text).expanduser()))
        case None:
            return (
                f"names no kind of ledger lowtide has ({named}:); {_KINDS} (./name for a file whose name holds a"
                " colon)."
            )


def _sqlite(rest: str) -> LedgerLocation | str:
    """The file a `sqlite:` location names: `sqlite:///abs/path` (a URL with no host) or `sqlite:relative/path`."""
    if rest.startswith("//"):
        host, slash, path = rest[2:].partition("/")
        if host not in ("", "localhost"):
            return (
                f"names a file on {host!r}, but a SQLite ledger is a file on this machine: write"
                " sqlite:///absolute/path or sqlite:relative/path."
            )
        rest = slash + path
    if not rest.strip():
        return "names no file: write sqlite:///absolute/path or sqlite:relative/path."
    return LedgerLocation("sqlite", str(Path(rest).expanduser()))


def redacted(url: str) -> str:
    """`url` with its password (in the authority, or a `password=` parameter) shown as `***`."""
    text = re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", url)
    return re.sub(r"^([^:/]+:/+[^:@/]*:)[^@/]*@", r"\1***@", text)


_KINDS = f"use {', '.join(list(SCHEMES.values())[:-1])} or {list(SCHEMES.values())[-1]}"
