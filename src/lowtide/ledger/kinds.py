"""The kinds of ledger store, by the scheme of the locations that name them: the one registry a location is read
through (`location.ledger_location`), a store opened through (`store.open_ledger`) and the CLI asks.

A store says what lowtide needs to know of its locations in a `LedgerKind`: its schemes, the target a location names,
how to open a store there, its live quota store alone (without opening the rest), how to show a location (its
password hidden), whether it can be opened read-only, where a ledger that must exist is not, and what an error of its
store's own means to a user. It registers the
kind through the `lowtide.ledgers` entry-point group (a callable `register(registry)`), exactly as the built-in
stores do: a path or `sqlite:` (`ledger/sqlite/kind.py`), `postgresql:` (`ledger/postgres/kind.py`), `memory:`
(`ledger/memory/kind.py`). Nothing outside a store's folder names its scheme.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from lowtide.errors import ConfigurationError

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore
    from lowtide.ledger.quota_records import QuotaStore

__all__ = [
    "ENTRY_POINT_GROUP",
    "LedgerKind",
    "LedgerRegistry",
    "NotALocation",
    "ledger_registry",
    "redacted",
]

ENTRY_POINT_GROUP = "lowtide.ledgers"

SCHEME = re.compile(r"^[a-z][a-z0-9+.-]+$")
"""A scheme a kind may register: two characters or more (`C:` stays a drive), lower case."""


class NotALocation(ValueError):
    """Raised by `LedgerKind.target`: what makes a location none of its kind's, in words that follow the location
    (`'sqlite:' names no file: write ...`)."""


class LedgerKind(ABC):
    """A kind of ledger store, as its locations name it. A subclass sets `scheme` and `example` and defines `open`;
    the rest have defaults that suit a store on a server, named by a URL."""

    scheme: str
    """The scheme its locations are written with, lower case (`postgresql`)."""
    aliases: tuple[str, ...] = ()
    """Other schemes that name it (`postgres`)."""
    example: str
    """How a location of this kind is written, as the error for a scheme no store has lists them."""
    takes_paths: bool = False
    """Whether a location with no scheme (a path) is this kind's: one kind only, the default store's."""
    in_process: bool = False
    """Whether its ledgers live in one process's memory, gone when it ends: there is never one to read later."""
    opens_read_only: bool = False
    """Whether `open` can open a ledger so that nothing is written to it (`read_only`); others ignore it."""

    def target(self, text: str, rest: str | None) -> str:
        """What `open` is given for the location `text`: `rest` is what follows its scheme's colon, None for a path
        with no scheme (a kind that `takes_paths`). Raises `NotALocation` saying what is wrong with it. By default,
        the location as written."""
        return text

    def place(self, target: str) -> str:
        """`target` written the one way every spelling of the same place is (a file's resolved path): a process
        opens one store per place."""
        return target

    @abstractmethod
    def open(self, target: str, *, read_only: bool) -> LedgerStore:
        """A new store for the ledger at `target`, made there if it holds none."""

    def open_unchanged(self, target: str) -> LedgerStore:
        """A new store reading the ledger at `target` that never writes to it, even to bring its schema up to date
        (`lowtide ledger copy`'s source), or an error saying why it cannot be read so. By default `open` read-only,
        for a kind whose opening writes nothing to a ledger already up to date."""
        return self.open(target, read_only=True)

    def quota_store(self, target: str) -> QuotaStore | None:
        """The live quota store of the ledger at `target` without opening the rest of it (live calls need only
        the quota); None: the opened ledger's own `quota_store`."""
        return None

    def shown(self, target: str) -> str:
        """`target` as people are told it: a URL's password hidden."""
        return redacted(target)

    def missing(self, target: str) -> str | None:
        """Where the ledger at `target` should be, shown, when there is none there (a command that reads a ledger
        never makes an empty one); None when there is one, or when only opening it can tell."""
        return None

    def writable(self, target: str) -> bool:
        """Whether this process can write the ledger at `target` (a command that only reads opens one it cannot
        read-only, where `opens_read_only`)."""
        return True

    def damaged(self, target: str, error: BaseException) -> bool:
        """Whether `error` (raised opening or reading the ledger at `target`) says it is damaged, so that it may be
        moved aside and a new one made in its place (`set_aside`, `lowtide ledger rebuild`). False by default: a
        database's operator decides what to do with it."""
        return False

    def set_aside(self, target: str) -> str:
        """Move the damaged ledger at `target` aside (`damaged`); where it went."""
        raise NotImplementedError(f"A ledger of the {self.scheme} kind cannot be moved aside.")

    def failure(self, error: BaseException) -> str | None:
        """What `error`, raised by this kind's store and not a `LedgerError`, means to a user, in one line that says
        what to do (a SQLite file whose pages are damaged, found while reading it); None for an error it does not
        know. The CLI asks every kind (`LedgerRegistry.failure`) before it shows an error as a crash."""
        return None


class LedgerRegistry:
    """The kinds of ledger by scheme: every store's, registered as its entry point says (`load_entry_points`)."""

    def __init__(self) -> None:
        self._kinds: list[LedgerKind] = []
        self._schemes: dict[str, LedgerKind] = {}
        self._paths: LedgerKind | None = None
        self._lock = threading.Lock()

    def register(self, kind: LedgerKind, *, replace: bool = False) -> None:
        """Register `kind` under its scheme and aliases (and for paths, if it `takes_paths`); a scheme already taken,
        or paths when a kind has them, needs `replace=True`, which gives them to `kind`."""
        names = (kind.scheme, *kind.aliases)
        bad = [name for name in names if not SCHEME.match(name)]
        if bad:
            raise ConfigurationError(
                f"A kind of ledger cannot be named {bad[0]!r}: a scheme is two characters or more, lower case, a"
                " letter first.",
                field="ledger",
            )
        with self._lock:
            taken = [name for name in names if name in self._schemes]
            if not replace and (taken or (kind.takes_paths and self._paths is not None)):
                what = f"the scheme {taken[0]!r}" if taken else "a location with no scheme (a path)"
                raise ConfigurationError(
                    f"A kind of ledger is already registered for {what}; pass replace=True to override it.",
                    field="ledger",
                )
            for name in names:
                self._schemes[name] = kind
            if kind.takes_paths:
                self._paths = kind
            held = {id(k) for k in (*self._schemes.values(), self._paths)}
            self._kinds = [k for k in self._kinds if id(k) in held and k is not kind] + [kind]

    def kind(self, scheme: str) -> LedgerKind | None:
        """The kind registered for `scheme` (either case), if any."""
        return self._schemes.get(scheme.lower())

    def for_paths(self) -> LedgerKind:
        """The kind of a location with no scheme, and of the default location."""
        if self._paths is None:
            raise ConfigurationError(
                f"No kind of ledger takes a path: is lowtide installed (its {ENTRY_POINT_GROUP!r} entry points)?",
                field="ledger",
            )
        return self._paths

    def kinds(self) -> list[LedgerKind]:
        """Every kind: the one that takes paths first, those of one process's memory last, the rest by scheme (entry
        points load in no set order)."""
        return sorted(self._kinds, key=lambda k: (k is not self._paths, k.in_process, k.scheme))

    def failure(self, error: BaseException) -> str | None:
        """What `error` means to a user, said by the first kind that knows it (`LedgerKind.failure`); None if none
        does."""
        for kind in self.kinds():
            said = kind.failure(error)
            if said is not None:
                return said
        return None

    def load_entry_points(self, eps: Iterable[EntryPoint] | None = None) -> list[str]:
        """Call the `register(registry)` of every store in the entry-point group; returns the names loaded. One
        that fails to import or register raises `ConfigurationError` naming it, rather than vanishing."""
        loaded: list[str] = []
        for ep in eps if eps is not None else entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()(self)
            except ConfigurationError:
                raise
            except Exception as exc:
                raise ConfigurationError(
                    f"Ledger plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}",
                    field="ledger",
                ) from exc
            loaded.append(ep.name)
        return loaded


_default: LedgerRegistry | None = None
_default_lock = threading.Lock()


def ledger_registry() -> LedgerRegistry:
    """The process-wide registry, with every installed store (the built-ins included) loaded once."""
    global _default
    with _default_lock:
        if _default is None:
            registry = LedgerRegistry()
            registry.load_entry_points()
            _default = registry
        return _default


def redacted(url: str) -> str:
    """`url` with its password (in the authority, or a `password=` parameter) shown as `***`."""
    text = re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", url)
    return re.sub(r"^([^:/]+:/+[^:@/]*:)[^@/]*@", r"\1***@", text)
