"""The SQLite store as a kind of ledger: a path (the default: `$LOWTIDE_LEDGER`, else the user's state directory),
`sqlite:///absolute/path` or `sqlite:relative/path`; registered through the `lowtide.ledgers` entry points."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from lowtide.ledger.kinds import LedgerKind, LedgerRegistry, NotALocation
from lowtide.ledger.sqlite.connection import damaged_message, is_damage, schema_version
from lowtide.ledger.sqlite.ledger import Ledger
from lowtide.ledger.sqlite.schema import SCHEMA_VERSION

__all__ = ["SqliteKind", "register"]


class SqliteKind(LedgerKind):
    """A ledger in a file on this machine, opened read-only where a command only reads one it cannot write."""

    scheme = "sqlite"
    example = "a SQLite file (a path, sqlite:///absolute/path or sqlite:relative/path)"
    takes_paths = True
    opens_read_only = True

    def target(self, text: str, rest: str | None) -> str:
        """The file's path, `~` expanded: `text` itself (a path), or what follows `sqlite:`, a URL with no host
        (`sqlite:///abs/path`) or a relative path (`sqlite:relative/path`)."""
        if rest is None:
            return str(Path(text).expanduser())
        if rest.startswith("//"):
            host, slash, path = rest[2:].partition("/")
            if host not in ("", "localhost"):
                raise NotALocation(
                    f"names a file on {host!r}, but a SQLite ledger is a file on this machine: write"
                    " sqlite:///absolute/path or sqlite:relative/path."
                )
            rest = slash + path
        if not rest.strip():
            raise NotALocation("names no file: write sqlite:///absolute/path or sqlite:relative/path.")
        return str(Path(rest).expanduser())

    def place(self, target: str) -> str:
        return str(Path(target).resolve())

    def open(self, target: str, *, read_only: bool) -> Ledger:
        return Ledger(Path(target).absolute(), read_only=read_only)

    def open_unchanged(self, target: str) -> Ledger:
        """A ledger an older lowtide wrote, which reading needs brought up to date, is read from a private copy
        migrated in its stead (`Snapshot`), so that what the file holds never changes; one up to date is opened as
        usual where it can be written (closing it leaves no `-wal` or `-shm` file behind), else read-only."""
        path = Path(target).absolute()
        writable = self.writable(target)
        if 0 < schema_version(path) < SCHEMA_VERSION:
            from lowtide.ledger.sqlite.snapshot import Snapshot

            return Snapshot(path, writable=writable)
        return Ledger(path, read_only=not writable)

    def shown(self, target: str) -> str:
        return target

    def missing(self, target: str) -> str | None:
        path = Path(target).absolute()
        return None if path.is_file() else str(path)

    def writable(self, target: str) -> bool:
        """Whether SQLite can write the file and make its `-wal` and `-shm` files beside it."""
        path = Path(target)
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)

    def damaged(self, target: str, error: BaseException) -> bool:
        """A SQLite file whose pages are damaged, its header still SQLite's (a file that never was a ledger is left
        where it is)."""
        if not is_damage(error.__cause__ or error):
            return False
        try:
            with Path(target).open("rb") as file:
                return file.read(16) == b"SQLite format 3\x00"
        except OSError:
            return False

    def set_aside(self, target: str) -> str:
        """The file renamed `<name>.damaged-<UTC time>`, its `-wal` and `-shm` with it, so that SQLite still pairs
        them."""
        path = Path(target).absolute()
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
        for suffix in ("", "-wal", "-shm"):
            there = path.with_name(path.name + suffix)
            if there.exists():
                there.rename(aside.with_name(aside.name + suffix))
        return str(aside)

    def failure(self, error: BaseException) -> str | None:
        """Damage found while reading (a ledger whose pages are corrupt opens, then fails on the rows it reads)."""
        if not isinstance(error, sqlite3.DatabaseError):
            return None
        return damaged_message("FILE", error)


def register(registry: LedgerRegistry) -> None:
    registry.register(SqliteKind())
