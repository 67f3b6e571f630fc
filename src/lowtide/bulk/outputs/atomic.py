"""A file written whole and moved into place (`AtomicFile`): a reader, or a crash, sees the old file or the new one,
never half of either. The run's `--out` file and its `results.jsonl` are written so, however many chunks they take."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from types import TracebackType

__all__ = ["AtomicFile"]


class AtomicFile:
    """A text file written beside `path` (a hidden partial file of its own name) and moved over it on `commit`, with
    the old file's permissions; removed if the writing fails (leaving the `with` block by an exception, or `discard`).
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            mode = 0o666  # less the umask, as for any new file
        descriptor = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            self._out = os.fdopen(descriptor, "w", encoding="utf-8")
        except BaseException:
            os.close(descriptor)
            self.partial.unlink(missing_ok=True)
            raise
        self._done = False

    def write(self, text: str) -> None:
        self._out.write(text)

    def commit(self) -> None:
        """Sync the file, move it over `path`, and sync the folder (so that the rename survives a crash)."""
        if self._done:
            return
        try:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()
            os.replace(self.partial, self.path)
        except BaseException:
            self.discard()
            raise
        self._done = True
        _sync_folder(self.path.parent)

    def discard(self) -> None:
        """Leave `path` as it was: the partial file is removed."""
        if self._done:
            return
        self._done = True
        self._out.close()
        self.partial.unlink(missing_ok=True)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (where the system lets a folder be synced)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - a folder that cannot be opened (Windows)
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover - file systems that refuse it
        pass
    finally:
        os.close(descriptor)
