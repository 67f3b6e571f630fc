"""Jobs from CSV inputs, a file or a stream (standard input): one job a row, its prompt a `{column}` template filled in
with the row's values; the header checked here, every row read, parsed and checked by `parser` before any job is
returned (see `jsonl` for JSONL)."""

from __future__ import annotations

import csv
import difflib
import io
import re
import string
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import cast

from lowtide.bulk.inputs.digest import InputDigest
from lowtide.bulk.inputs.files import REQUEST_MAX_BYTES, FileChecks, UncheckedFiles
from lowtide.bulk.inputs.jobs import Job, Jobs, named_from
from lowtide.bulk.inputs.parser import CsvTable, InputParser, Problems, csv_text, refuse_binary, undecodable
from lowtide.bulk.inputs.problems import InputError, InputProblem
from lowtide.bulk.inputs.reading import read_input

__all__ = ["CsvInput", "load_csv", "load_csv_stream"]


def load_csv(
    path: str | Path,
    template: str,
    *,
    file_column: str | None = None,
    id_column: str | None = None,
    digest: InputDigest | None = None,
) -> list[Job]:
    """Load one job per row of a CSV file, its prompt being `template` filled in with the row's `{column}` values.

    `file_column` names a column of file paths (relative to the CSV's folder; an empty cell means no file),
    `id_column` a column of ids. The header is line 1; every row is checked before any job is returned. Raises
    `InputError` naming the file, the lines and what is wrong (an unknown column lists the columns there are).
    `digest`: fed the file's bytes (and how they are read), for `BulkRun.add_jobs`.
    """
    source = Path(path)
    base = source.absolute().parent
    raw = read_input(source)
    if digest is not None:
        digest.reading(format="csv", folder=str(base), template=template, file_column=file_column, id_column=id_column)
        digest.update(raw)
    return _csv_jobs(csv_text(raw, source), source, base, template, file_column, id_column)


class CsvInput:
    """A CSV input file read as bytes (its digest fed) and its rows parsed, their files not yet checked: `read` it, then
    take the run's jobs from it, every file checked as `load_csv` checks them (`parsed`), or left to the run (`jobs`):
    a run the ledger knows by these bytes reads back the text of the office files it sent before converting the rest,
    and needs no file of a job it sent (`BulkRun.add_input`)."""

    __slots__ = ("_base", "_columns", "_numbers", "_raw", "_rows", "_template", "digest", "source")

    def __init__(
        self,
        path: str | Path,
        template: str,
        *,
        digest: InputDigest,
        file_column: str | None = None,
        id_column: str | None = None,
    ) -> None:
        self.source = Path(path)
        self._base = self.source.absolute().parent
        self._template, self._columns = template, (file_column, id_column)
        self.digest = digest
        self._raw: bytes | None = None
        self._rows: list[Job] | None = None
        self._numbers: list[int] = []

    def read(self) -> int:
        """Read the file whole, its bytes fed to the digest (as `load_csv` feeds it), and parse its rows, their files
        not checked; every other problem is refused as `load_csv` refuses it. Gives how many jobs it holds."""
        if self._raw is None:
            self._raw = read_input(self.source)
            file_column, id_column = self._columns
            self.digest.reading(
                format="csv", folder=str(self._base), template=self._template, file_column=file_column,
                id_column=id_column,
            )  # fmt: skip
            self.digest.update(self._raw)
        if self._rows is None:
            self._rows = self._parse(UncheckedFiles(), self._numbers)
        return len(self._rows)

    def parsed(self) -> list[Job]:
        """Every row's job, every file checked, as `load_csv` loads them (the same problems, the same error)."""
        self.read()
        return self._parse(FileChecks())

    def jobs(self) -> Jobs:
        """Every row's job, their files left to the run's check (which names a row by its line in the CSV)."""
        self.read()
        assert self._rows is not None
        return CsvJobs(self._rows, self._numbers, self.source, self._base)

    def _parse(self, files: FileChecks, numbers: list[int] | None = None) -> list[Job]:
        assert self._raw is not None
        file_column, id_column = self._columns
        text = csv_text(self._raw, self.source)
        return _csv_jobs(text, self.source, self._base, self._template, file_column, id_column, files, numbers)


class CsvJobs(Jobs):
    """A CSV input's jobs, each knowing its row's line in the file: a file problem found when the run checks its
    files (a resumed run's rows still to send, `parser.refuse_held`) is named by that line and the cell's path, as the
    first run's check names it."""

    __slots__ = ("_base", "_numbers", "_source")

    def __init__(self, jobs: Iterable[Job], numbers: list[int], source: Path, base: Path) -> None:
        super().__init__(jobs)
        self._numbers, self._source, self._base = numbers, source, base

    def place(self, index: int) -> tuple[str | Path, int] | None:
        return self._source, self._numbers[index]

    def named(self, path: Path, given: str) -> str:
        return named_from(self._base, path, given)


def load_csv_stream(
    lines: Iterable[str] | Iterable[bytes],
    template: str,
    *,
    name: str = "<stdin>",
    base: str | Path | None = None,
    file_column: str | None = None,
    id_column: str | None = None,
) -> list[Job]:
    """Load one job per row of CSV read from a stream (standard input, say), as `load_csv` loads a file.

    `lines` is an open text or binary stream, or any iterable of lines (with their line ends). `name` stands for
    the input in error messages; relative file paths are relative to `base` (default: the working directory).
    """
    folder = Path(base if base is not None else Path.cwd()).absolute()
    chunks = iter(lines)
    try:
        first = next(chunks, "")
        if isinstance(first, bytes):
            text = csv_text(first + b"".join(cast(Iterator[bytes], chunks)), name)
        else:
            refuse_binary(first.encode(errors="replace"), name, "CSV")
            text = (first + "".join(cast(Iterator[str], chunks))).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(name, [InputProblem(None, undecodable(exc, after=0))]) from None
    return _csv_jobs(text, name, folder, template, file_column, id_column)


def _csv_jobs(
    text: str,
    source: str | Path,
    base: Path,
    template: str,
    file_column: str | None,
    id_column: str | None,
    files: FileChecks | None = None,
    numbers: list[int] | None = None,
) -> list[Job]:
    """The jobs of a CSV's text, every row checked; `numbers` (when given) is filled with each job's line."""
    problems = Problems(source)
    # A cell may hold a whole document; the csv module's default limit (128 KB a cell) is far below the API's.
    # The limit is process-wide, so it is only ever raised, never lowered.
    if csv.field_size_limit() < REQUEST_MAX_BYTES:
        csv.field_size_limit(REQUEST_MAX_BYTES)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [cell.strip() for cell in next(reader, list[str]())]
    except csv.Error as exc:
        raise InputError(source, [InputProblem(1, f"cannot be read as CSV: {exc}")]) from None
    if not any(header):
        problems.add(None, "is empty; it needs a header row naming its columns, then one row per job")
        problems.raise_if_any()
    _check_header(header, template, file_column, id_column, problems)
    problems.raise_if_any()
    table = CsvTable(header, template, file_column, id_column)
    parser = InputParser(source, base, problems=problems, files=files)
    jobs: list[Job] = []
    ended = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.add(ended + 1, f"cannot be read as CSV: {exc}")
            break
        number, ended = ended + 1, reader.line_num
        if not row:
            continue
        job = parser.csv_row(number, row, table)
        if job is not None:
            jobs.append(job)
            if numbers is not None:
                numbers.append(number)
    parser.done("has a header but no rows; add one row per job")
    return jobs


def _template_columns(template: str) -> list[str]:
    """The columns `template` names, in order (in nested format specs too); raises `ValueError` for a placeholder
    that names none, or a template `str.format` cannot parse.
    """
    columns: list[str] = []
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is None:
            continue
        root = re.split(r"[.\[]", name, maxsplit=1)[0]
        if not root or root.isdigit():
            raise ValueError(f"the placeholder {{{name}}} must name a column, like {{title}}")
        columns.append(root)
        if spec and "{" in spec:
            columns += _template_columns(spec)
    return columns


def _check_header(
    header: list[str], template: str, file_column: str | None, id_column: str | None, problems: Problems
) -> None:
    present = ", ".join(repr(column) for column in header)
    duplicates = sorted({column for column in header if header.count(column) > 1})
    if duplicates:
        problems.add(1, f"the header names {', '.join(repr(c) for c in duplicates)} more than once; rename them")
    try:
        wanted = [("the template", column) for column in _template_columns(template)]
    except ValueError as exc:
        problems.add(None, f"the template {template!r} is not usable: {exc} (write {{{{ and }}}} for braces)")
        wanted = []
    wanted += [(what, column) for what, column in (("file_column", file_column), ("id_column", id_column)) if column]
    for what, column in dict.fromkeys(wanted):
        if column not in header:
            close = difflib.get_close_matches(column, header, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.add(1, f"{what} names the column {column!r}, which is not in the header{hint}; it has {present}")
