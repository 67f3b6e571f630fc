"""Items' result lines kept on disk by index while a run goes (`LineSpool`): what a run that does not hold its results
writes at its end, in input order, without making each answer's result again from the ledger."""

from __future__ import annotations

import os
import tempfile
from array import array
from typing import IO

__all__ = ["LineSpool"]

_PREAD = getattr(os, "pread", None)


class LineSpool:
    """The lines of `count` items, appended to a temporary file (removed when closed) as each item settles, and found
    again by index: 12 bytes an item in memory, whatever the lines hold. Read back by position (`pread`), not mapped:
    a mapping's pages would count in the process's resident memory, the whole spool at the end of a large run."""

    def __init__(self, count: int) -> None:
        self._file = _scratch()
        self._at = array("q", [-1]) * count
        """Where each item's line starts in the file; -1: none."""
        self._size = array("l", [0]) * count
        self._end = 0
        self._unflushed = False

    def put(self, index: int, line: str) -> None:
        data = line.encode()
        self._file.write(data)
        self._at[index], self._size[index] = self._end, len(data)
        self._end += len(data)
        self._unflushed = True

    def drop(self, index: int) -> None:
        self._at[index] = -1

    def holds(self, index: int) -> bool:
        return self._at[index] >= 0

    def get(self, index: int) -> str | None:
        at = self._at[index]
        if at < 0:
            return None
        if self._unflushed:
            self._file.flush()
            self._unflushed = False
        size = self._size[index]
        if _PREAD is not None:
            return _PREAD(self._file.fileno(), size, at).decode()
        self._file.seek(at)  # pragma: no cover - a system without pread (Windows)
        data = self._file.read(size)  # pragma: no cover
        self._file.seek(0, os.SEEK_END)  # pragma: no cover - the next line is appended at the end
        return data.decode()  # pragma: no cover

    def close(self) -> None:
        self._file.close()


def _scratch() -> IO[bytes]:
    """A file of no name, in the temporary folder, gone once closed (or the process ends): the spool lives as long as
    its run's go, not inside a `with` block."""
    return tempfile.TemporaryFile()
