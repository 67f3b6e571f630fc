"""`Snapshot`: a ledger file an older lowtide wrote, read without writing to it (`lowtide ledger copy`'s source): a
private copy of it is brought up to date and read instead, and removed when the ledger is closed."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from lowtide.ledger.sqlite.connection import snapshot
from lowtide.ledger.sqlite.ledger import Ledger

__all__ = ["Snapshot"]


class Snapshot(Ledger):
    """The ledger at `source`, read from a copy in a folder of this process's own (mode 700), migrated there: the
    file at `source` is left exactly as it was. Named by `source` in every message and comparison."""

    def __init__(self, source: Path, *, writable: bool) -> None:
        self.source = source
        self._folder = Path(tempfile.mkdtemp(prefix="lowtide-snapshot-"))
        try:
            copy = self._folder / source.name
            snapshot(source, copy, writable=writable)
            super().__init__(copy)
        except BaseException:
            shutil.rmtree(self._folder, ignore_errors=True)
            raise

    @property
    def location(self) -> str:
        return str(self.source)

    def close(self) -> None:
        """Close the copy, then remove it and its folder."""
        try:
            super().close()
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)
