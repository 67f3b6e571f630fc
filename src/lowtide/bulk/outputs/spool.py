"""Items' result lines kept on disk by index while a run goes (`LineSpool`): what a run that does not hold its results
writes at its end, in input order, without making each answer's result again from the ledger.

A spool with a place of its own (`LineSpool.kept`: beside the run's results) outlives the go that wrote it: a run
stopped (even killed) and started again finds the lines of the items answered before, and copies them instead of
decoding their answers from the ledger a second time. Each line is a record that says which item it is, the item's
key, what it adds to the run's report (`Tallied`) and a checksum; a record torn by a kill mid-write (or damaged) ends
what is read, and the file is cut back to the last whole one. A record is only ever a copy of what the ledger holds
(an item's line is spooled once its answer is stored): whatever the spool lacks is made from the ledger.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: a spool of one go only
    fcntl = None

__all__ = ["LineSpool", "Tallied", "spool_path"]

_PREAD = getattr(os, "pread", None)
_HEAD = struct.Struct("<IqII")
"""A record's head: the checksum (CRC-32 of the rest of the head, the tally and the line), the item's index, then the
lengths of its tally and its line, which follow."""
_MAGIC = b"lowtide spool "
_VERSION = b"1"
_READ_AT_ONCE = 1 << 22
_WRITE_BUFFER = 1 << 20
_MOST_DISTINCT = 10_000
"""Distinct report parts counted while a spool is read back before they are given on: a bound on what is held."""


@dataclass(frozen=True, slots=True)
class Tallied:
    """What one item's success adds to its run's report: its cost (None: unpriced) and live equivalent, and its
    usage (input, cache read, cache creation, output tokens); `answered` False for a success with no answer."""

    answered: bool
    cost: Decimal | None
    live_cost: Decimal | None
    usage: tuple[int, int, int, int]

    def encode(self, key: str) -> bytes:
        cost = "" if self.cost is None else str(self.cost)
        live = "" if self.live_cost is None else str(self.live_cost)
        i, cr, cc, o = self.usage
        return f"{int(self.answered)}|{cost}|{live}|{i}|{cr}|{cc}|{o}|{key}".encode()

    @staticmethod
    def split(data: bytes) -> tuple[bytes, bytes]:
        """An encoded record as its tally's part (what `decode` reads a `Tallied` from, the key given as empty) and its
        key: records of the same tally share the first."""
        key = data.split(b"|", 7)[-1]
        return data[: len(data) - len(key)], key

    @staticmethod
    def decode(data: bytes) -> tuple[Tallied, str]:
        answered, cost, live, i, cr, cc, o, key = data.decode().split("|", 7)
        return (
            Tallied(
                answered == "1",
                Decimal(cost) if cost else None,
                Decimal(live) if live else None,
                (int(i), int(cr), int(cc), int(o)),
            ),
            key,
        )


def spool_path(folder: Path, name: str, run_id: str) -> Path:
    """Where the spool of run `run_id` is kept in `folder`: a hidden file named after `name` and the run."""
    digest = hashlib.sha256(run_id.encode()).hexdigest()[:16]
    return folder / f".{name}.lowtide-spool-{digest}"


class LineSpool:
    """The lines of `count` items, appended to a file as each item settles, and found again by index: 12 bytes an item
    in memory, whatever the lines hold. Read back by position (`pread`), not mapped: a mapping's pages would count in
    the process's resident memory, the whole spool at the end of a large run.

    `LineSpool(count)` is a nameless temporary file, gone once closed; `LineSpool.kept` one kept at a path across
    goes (see the module)."""

    def __init__(self, count: int, file: IO[bytes] | None = None, *, path: Path | None = None, end: int = 0) -> None:
        self._file = file if file is not None else _scratch()
        self.path = path
        """Where the spool is kept across goes; None: a temporary file."""
        self._at = array("q", [-1]) * count
        """Where each item's record starts in the file; -1: none."""
        self._size = array("l", [0]) * count
        self._end = end
        self._unflushed = False
        self.earlier = array("q")
        """The items whose lines an earlier go spooled (`kept`), until `forget_earlier`."""

    @classmethod
    def kept(
        cls,
        count: int,
        path: Path,
        run_id: str,
        *,
        key_of: Callable[[int], str],
        found: Callable[[Tallied, int], None],
    ) -> LineSpool:
        """The spool of run `run_id` kept at `path`: the records an earlier go left read (each one of item `i` under
        the key `key_of(i)`, what it adds to the report given to `found`, with how many items add it; -1 takes one
        back), a torn tail cut off, appended to from then
        on. A temporary spool instead when the file cannot be had: not one of lowtide's spools (nothing a user made
        is written over), another process of the run holding it, or the folder not writable."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return cls(count)
        file = os.fdopen(fd, "r+b", buffering=_WRITE_BUFFER)
        try:
            if fcntl is None:  # pragma: no cover - Windows
                raise BlockingIOError
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when the file is closed
            header = _MAGIC + _VERSION + b" " + run_id.encode() + b" " + str(count).encode() + b"\n"
            start = file.read(len(header))
            if start != header:
                if start and not start.startswith(_MAGIC):
                    raise BlockingIOError  # not a spool: left alone
                file.seek(0)  # an older form, or a header torn by a kill: begun again
                file.truncate()
                file.write(header)
                file.flush()
                return cls(count, file, path=path, end=len(header))
            spool = cls(count, file, path=path, end=len(header))
            spool._read_earlier(key_of, found)
            return spool
        except OSError:
            file.close()
            return cls(count)

    def _read_earlier(self, key_of: Callable[[int], str], found: Callable[[Tallied, int], None]) -> None:
        """Read the records after the header, a few MiB at a time; cut the file back to the last whole one. What the
        records add to the report is given to `found` once for each distinct `Tallied`, with how many: a resume finds
        150,000 lines of a few distinct costs and usages, not 150,000 to decode and add one by one. The records of each
        block read are taken in one loop of local names (a resume reads half a run's lines here: a call or a copy less
        a record is a tenth of a second at 150,000)."""
        file, at, size, count = self._file, self._at, self._size, len(self._at)
        unpack, head, crc32, split = _HEAD.unpack_from, _HEAD.size, zlib.crc32, Tallied.split
        tallies = _Tallies()
        counts = tallies.counts
        offset = self._end
        """The file's offset of the next record."""
        file.seek(offset)
        pending = b""
        """What was read from `offset` on and not yet taken: the start of a record cut by the end of a block."""
        needed = head
        whole_records = True
        while whole_records:
            more = file.read(max(_READ_AT_ONCE, needed - len(pending)))
            if not more:
                break
            data = pending + more if pending else more
            view = memoryview(data)
            end = len(data)
            place = 0
            while True:
                if end - place < head:
                    needed = head
                    break
                checksum, index, tally_size, line_size = unpack(data, place)
                whole = head + tally_size + line_size
                if end - place < whole:
                    needed = whole
                    break
                if crc32(view[place + 4 : place + whole]) != checksum or not 0 <= index < count:
                    whole_records = False
                    break
                tally, key = split(data[place + head : place + head + tally_size])
                if key.decode() == key_of(index):
                    if at[index] >= 0:  # spooled twice (never expected): the later record stands
                        before = self._tallied(index)
                        if before is not None:
                            found(before, -1)
                    else:
                        self.earlier.append(index)
                    at[index], size[index] = offset + place, whole
                    counts[tally] = counts.get(tally, 0) + 1
                    if len(counts) > _MOST_DISTINCT:
                        tallies.give(found)
                place += whole
            view.release()
            offset += place
            pending = data[place:]
        tallies.give(found)
        if offset < file.seek(0, os.SEEK_END):
            file.truncate(offset)  # a record torn by a kill (or damaged): it and what follows are made again
        file.seek(offset)
        self._end = offset

    def put(self, index: int, line: str, key: str, tally: Tallied) -> None:
        data = line.encode()
        meta = tally.encode(key)
        rest = _HEAD.pack(0, index, len(meta), len(data))[4:]
        checksum = zlib.crc32(data, zlib.crc32(meta, zlib.crc32(rest)))
        record = _HEAD.pack(checksum, index, len(meta), len(data)) + meta + data
        self._file.write(record)
        self._at[index], self._size[index] = self._end, len(record)
        self._end += len(record)
        self._unflushed = True

    def flush(self) -> None:
        """Hand the lines appended so far to the system (a process killed from then on keeps them)."""
        if self._unflushed:
            self._file.flush()
            self._unflushed = False

    def drop(self, index: int) -> Tallied | None:
        """Forget item `index`'s line; what it added to the report, if it was spooled."""
        tally = self._tallied(index) if self._at[index] >= 0 else None
        self._at[index] = -1
        return tally

    def holds(self, index: int) -> bool:
        return self._at[index] >= 0

    def forget_earlier(self) -> None:
        self.earlier = array("q")

    def get(self, index: int) -> str | None:
        record = self._record(index)
        if record is None:
            return None
        _, _, tally_size, _ = _HEAD.unpack_from(record)
        return record[_HEAD.size + tally_size :].decode()

    def lines(self, start: int, stop: int) -> list[str | None]:
        """The lines of items `start` to `stop`, in order (None: not spooled), read in one loop of local names: the end
        of a run reads every item's line, 300,000 one by one, and a call less a line is a fifth of their CPU."""
        if _PREAD is None:  # pragma: no cover - a system without pread (Windows)
            return [self.get(index) for index in range(start, stop)]
        self.flush()  # (as `_record`: a line appended and not yet handed to the system is read back from the file too)
        at, size, pread, fd = self._at, self._size, _PREAD, self._file.fileno()
        unpack, head = _HEAD.unpack_from, _HEAD.size
        lines: list[str | None] = []
        for index in range(start, stop):
            place = at[index]
            if place < 0:
                lines.append(None)
                continue
            record: bytes = pread(fd, size[index], place)
            lines.append(record[head + unpack(record)[2] :].decode())
        return lines

    def _tallied(self, index: int) -> Tallied | None:
        record = self._record(index)
        if record is None:
            return None
        _, _, tally_size, _ = _HEAD.unpack_from(record)
        return Tallied.decode(record[_HEAD.size : _HEAD.size + tally_size])[0]

    def _record(self, index: int) -> bytes | None:
        at = self._at[index]
        if at < 0:
            return None
        self.flush()  # (a line appended and not yet handed to the system is read back from the file too)
        size = self._size[index]
        if _PREAD is not None:
            return _PREAD(self._file.fileno(), size, at)
        self._file.seek(at)  # pragma: no cover - a system without pread (Windows)
        data = self._file.read(size)  # pragma: no cover
        self._file.seek(0, os.SEEK_END)  # pragma: no cover - the next line is appended at the end
        return data  # pragma: no cover

    def close(self, *, keep: bool = True) -> None:
        """Close the spool; a kept one is removed unless `keep` (the run has more to do)."""
        self._file.close()
        if self.path is not None and not keep:
            self.path.unlink(missing_ok=True)


class _Tallies:
    """What records read back add to the report, counted by their encoded form (their key cut off), each form decoded
    once; given on (`give`) when it has seen many distinct ones, and at the end."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[bytes, int] = {}
        """How many records of each encoded form were read (the reader adds to it in its own loop)."""

    def give(self, found: Callable[[Tallied, int], None]) -> None:
        for encoded, times in self.counts.items():
            found(Tallied.decode(encoded)[0], times)
        self.counts.clear()


def _scratch() -> IO[bytes]:
    """A file of no name, in the temporary folder, gone once closed (or the process ends): the spool lives as long as
    its run's go, not inside a `with` block."""
    return tempfile.TemporaryFile()
