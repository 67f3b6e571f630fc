"""Input files read as bytes (`input_lines`, `read_input`; a file that cannot be read is the `InputError` that says
why), and a JSONL input file read so, its lines kept unparsed (`JsonlLines`): parsed whole by `parser.InputParser`
for a run the ledger does not know; or, for a run it knows by the digest of these very bytes (every line parsed and
checked when it was recorded), as `LineJobs`, whose lines are each parsed when its job is first asked for. A resume
then parses the lines of the jobs it still has to send, not the million its ledger has answers for.
"""

from __future__ import annotations

from array import array
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

from lowtide.bulk.inputs.digest import InputDigest
from lowtide.bulk.inputs.files import UncheckedFiles
from lowtide.bulk.inputs.jobs import Job, Jobs, file_name, job_of, named_from
from lowtide.bulk.inputs.parser import InputParser, jsonl_line, refuse_binary
from lowtide.bulk.inputs.problems import InputError, InputProblem

__all__ = ["JsonlLines", "LineJobs", "input_lines", "jsonl_reading", "read_input", "unreadable_as_input_error"]

# A line whose bytes hold none of these cannot name a file or an id (a JSON key is its letters, or escapes them).
_FILE_OR_ID = (b"file", b"id", b"\\")
_ID = (b"id", b"\\")
_FILE = (b"file", b"path", b"\\")


def input_lines(source: Path, digest: InputDigest | None = None) -> Iterator[bytes]:
    """The lines of an input file, read a line at a time, as `bytes.splitlines` splits the whole (at LF, CRLF or CR),
    without their ends (`digest` fed each as read, with its end); a file that cannot be opened is an `InputError`,
    as `read_input` says it."""
    with unreadable_as_input_error(source):
        handle = source.open("rb")
    with handle:
        for chunk in handle:  # (a chunk ends at LF: a CR inside it splits it as the whole file's splitlines would)
            if digest is not None:
                digest.update(chunk)
            yield from chunk.splitlines()


def read_input(source: Path) -> bytes:
    with unreadable_as_input_error(source):
        return source.read_bytes()


@contextmanager
def unreadable_as_input_error(source: Path) -> Generator[None]:
    """An input file that is missing, a folder or unreadable, as the `InputError` that says so."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(source, [InputProblem(None, "does not exist")]) from None
    except IsADirectoryError:
        raise InputError(source, [InputProblem(None, "is a folder; name the input file itself")]) from None
    except OSError as exc:
        raise InputError(source, [InputProblem(None, f"cannot be read: {exc.strerror or exc}")]) from None


def jsonl_reading(digest: InputDigest, base: Path, provider: str) -> None:
    """Tell `digest` how the JSONL bytes that follow are read: what a job made of them depends on besides."""
    digest.reading(format="jsonl", folder=str(base), provider=provider)


class JsonlLines:
    """The lines of a JSONL input file, read (its digest fed) and not parsed: `read` them, then take the run's jobs
    from them, parsed whole (`parsed`) or line by line (`jobs`)."""

    __slots__ = ("_base", "_lines", "_provider", "_read", "digest", "source")

    def __init__(self, path: str | Path, *, provider: str, digest: InputDigest) -> None:
        self.source = Path(path)
        self._base = self.source.absolute().parent
        self._provider = provider
        self.digest = digest
        self._lines: list[bytes] = []
        self._read = False

    def read(self) -> int:
        """Read the file whole, a line at a time, its bytes fed to the digest (as `jsonl_inputs` feeds it); an input
        that cannot be read, or whose first bytes say it is not text, is refused as `jsonl_inputs` refuses it. Gives
        how many lines may be jobs (those with more than ASCII blanks: a line of other blanks is counted here and
        skipped by the parse, so the count differs from the run's and the run is not known by it)."""
        if not self._read:
            jsonl_reading(self.digest, self._base, self._provider)
            for line in input_lines(self.source, self.digest):
                if not self._lines:
                    refuse_binary(line, self.source, "JSONL")
                self._lines.append(line)
            self._read = True
        return sum(1 for line in self._lines if line.strip())

    def parsed(self) -> Iterator[Job | str]:
        """The jobs of every line, parsed and checked as `jsonl_inputs` does (the same problems, the same error)."""
        self.read()
        return InputParser(self.source, self._base, provider=self._provider).jsonl(self._lines)

    def jobs(self) -> LineJobs:
        """The jobs of a run known by these bytes, each line parsed when its job is asked for."""
        self.read()
        numbers = array("q", (number for number, line in enumerate(self._lines, 1) if line.strip()))
        lines = [self._lines[number - 1] for number in numbers]
        self._lines = []  # (the jobs hold them now)
        return LineJobs(lines, numbers, self.source, self._base, self._provider)


class LineJobs(Jobs):
    """The jobs of an input known by its bytes (`JsonlLines.jobs`): each kept as its line's bytes until it is asked
    for, then parsed (`jsonl_line`) and kept as the job it is. A line that cannot hold an id is not parsed for one
    (`id_of`), nor one that can hold neither a file nor an id for `check_jobs` (`given`). `parsed` counts the lines
    parsed. Their files are not checked as a line is parsed: the run checks them once it has read its ledger, and
    refuses a file's problem only for a job it has still to send (`parser.refuse_held`, naming the line: `place`)."""

    __slots__ = ("_base", "_files", "_lines", "_numbers", "_provider", "_source", "parsed")

    def __init__(self, lines: list[bytes], numbers: array[int], source: Path, base: Path, provider: str) -> None:
        super().__init__()
        self._lines: list[bytes | Job | str] = list(lines)
        self._numbers = numbers
        self._source, self._base, self._provider = source, base, provider
        self._files = UncheckedFiles()
        self.parsed = 0

    def _item(self, index: int) -> Job | str:
        item = self._lines[index]
        if isinstance(item, bytes):
            item = jsonl_line(item, self._numbers[index], self._source, self._base, self._provider, self._files)
            self._lines[index] = item
            self.parsed += 1
        return item

    def _may_hold(self, index: int, marks: tuple[bytes, ...]) -> bool:
        item = self._lines[index]
        return not isinstance(item, bytes) or any(mark in item for mark in marks)

    def append(self, job: Job | str) -> None:
        raise TypeError("the jobs of an input known by its bytes take no more; add them to `Jobs(these)`")

    def given(self) -> Iterator[tuple[int, Job]]:
        """The jobs given as `Job`s that may name a file or hold an id: what `check_jobs` checks."""
        for index in range(len(self._lines)):
            if self._may_hold(index, _FILE_OR_ID) and isinstance(item := self._item(index), Job):
                yield index, item

    def id_of(self, index: int) -> str | None:
        if not self._may_hold(index, _ID):
            return None
        item = self._item(index)
        return None if isinstance(item, str) else item.id

    def file_of(self, index: int) -> str | None:
        if not self._may_hold(index, _FILE):
            return None
        return file_name(self._item(index))

    def place(self, index: int) -> tuple[str | Path, int] | None:
        return self._source, self._numbers[index]

    def named(self, path: Path, given: str) -> str:
        return named_from(self._base, path, given)

    def __len__(self) -> int:
        return len(self._lines)

    def __iter__(self) -> Iterator[Job]:
        return (job_of(self._item(index)) for index in range(len(self._lines)))
