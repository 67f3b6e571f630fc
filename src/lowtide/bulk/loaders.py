"""Jobs from JSONL and CSV inputs, files or streams (standard input): every line checked before any job is returned.

Loading checks everything a run needs before anything is sent (every line, every file's kind and size, every
override), but reads no file contents: a job holds the path of its file.
"""

from __future__ import annotations

import codecs
import csv
import difflib
import io
import json
import re
import string
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from lowtide.bulk.files import REQUEST_MAX_BYTES, FileChecks, binary_kind
from lowtide.bulk.input_digest import InputDigest
from lowtide.bulk.jobs import (
    JOB_KEYS,
    OVERRIDE_KEYS,
    Job,
    check_id,
    job_of,
    override_problems,
    pydantic_problem,
    unknown_keys,
)
from lowtide.bulk.problems import InputError, InputProblem, Problems
from lowtide.config import DEFAULT_PROVIDER
from lowtide.custom_ids import CustomIdRule
from lowtide.errors import ConfigurationError

__all__ = ["iter_jsonl", "jsonl_inputs", "load_csv", "load_csv_stream", "load_jsonl", "load_jsonl_stream"]

# Enough of an input file to tell a PDF, an image or a workbook from text.
_HEAD_BYTES = 64


def _resolve(name: str, base: Path) -> Path:
    """A job's file named in an input: absolute, or relative to the input's folder (not the working directory)."""
    return (base / Path(name).expanduser()).absolute()


# -- JSONL -------------------------------------------------------------------------------------------------------


def load_jsonl(path: str | Path, *, provider: str = DEFAULT_PROVIDER) -> list[Job]:
    """Load jobs from a JSONL file, one JSON object a line; every line is checked before any job is returned.

    A line is a job, `{"prompt": ..., "file": ..., "id": ..., "citations": ...}` or `{"messages": [...], ...}`, plus
    any Messages parameter to override for that job (`model`, `max_tokens`, `system`, `temperature`, ...); or, for
    the whole file, a batch request in the Messages-shaped batch format, `{"custom_id": ..., "params": {...}}`, whose
    custom id becomes the job's id and must be one `provider`'s API takes (its `CustomIdRule`, registered with the
    default registry; by default the default provider's, whose batch API takes this format). Relative file paths are
    relative to the JSONL file's folder. Blank lines are skipped; a UTF-8 byte order mark is allowed. Raises
    `InputError` naming the file, the lines and what is wrong with each (the first few of them).
    """
    return list(iter_jsonl(path, provider=provider))


def iter_jsonl(path: str | Path, *, provider: str = DEFAULT_PROVIDER) -> Iterator[Job]:
    """The jobs of a JSONL file as `load_jsonl` loads them, each handed on as its line is read and checked, the file
    read a line at a time: a caller that keeps less than a `Job` per line (`BulkRun.add_jobs` keeps a prompt alone as
    its string) never holds them all. A problem with any line raises `InputError` once the last line is read, as
    `load_jsonl` does: whatever consumed the jobs before must not act on them (nothing of a run is recorded or sent
    before its jobs are added)."""
    return (job_of(item) for item in jsonl_inputs(path, provider=provider))


def jsonl_inputs(
    path: str | Path, *, provider: str = DEFAULT_PROVIDER, digest: InputDigest | None = None
) -> Iterator[Job | str]:
    """The jobs of a JSONL file as `iter_jsonl` hands them on, but a line that is a prompt alone (`{"prompt": ...}`)
    as its prompt string, checked as its `Job` would be: what `BulkRun.add_jobs` keeps of it, without a `Job` built
    and validated for each of a million lines (a resumed run reads its input again). `digest`: fed the file's bytes
    as they are read (and how they are read), for `BulkRun.add_jobs`."""
    source = Path(path)
    base = source.absolute().parent
    if digest is not None:
        digest.reading(format="jsonl", folder=str(base), provider=provider)
    return _jsonl_jobs(_input_lines(source, digest), source, base, provider)


def load_jsonl_stream(
    lines: Iterable[str] | Iterable[bytes],
    *,
    name: str = "<stdin>",
    base: str | Path | None = None,
    provider: str = DEFAULT_PROVIDER,
) -> list[Job]:
    """Load jobs from JSONL read from a stream (standard input, say), as `load_jsonl` loads a file.

    `lines` is an open text or binary stream, or any iterable of lines. `name` stands for the input in error
    messages; relative file paths are relative to `base` (default: the working directory). A binary stream
    (`sys.stdin.buffer`) lets a line that is not UTF-8 be named exactly; a text stream that cannot decode stops there.
    """
    base_path = Path(base if base is not None else Path.cwd()).absolute()
    return [job_of(item) for item in _jsonl_jobs(lines, name, base_path, provider)]


def _jsonl_jobs(
    lines: Iterable[str] | Iterable[bytes], source: str | Path, base: Path, provider: str
) -> Iterator[Job | str]:
    problems = Problems(source)
    files = FileChecks()
    ids: dict[str, int] = {}
    jobs = 0
    shape: tuple[str, int] | None = None  # the first line's shape, and its number: every line must have it
    for number, text in _numbered(lines, source, "JSONL", problems):
        if not text.strip():
            continue
        try:
            fields = _json_object(text)
            this = _BATCH_REQUEST if _BATCH_KEYS & fields.keys() else _JOB
            if shape is None:
                shape = (this, number)
            elif this != shape[0]:
                raise _LineProblem(
                    f"is {_SHAPES[this]}, but line {shape[1]} is {_SHAPES[shape[0]]}; every line of an input must"
                    " have the same shape"
                )
            if this == _JOB and len(fields) == 1 and type(prompt := fields.get("prompt")) is str and prompt.strip():
                jobs += 1  # a prompt alone, valid as its `Job` would be: no `Job` made, no id to check
                yield prompt
                continue
            job = _batch_request_job(fields, provider) if this == _BATCH_REQUEST else _jsonl_job(fields, base, files)
        except _LineProblem as exc:
            for message in exc.messages:
                problems.add(number, message)
            continue
        check_id(job.id, number, ids, problems)
        jobs += 1
        yield job
    if not jobs and not problems.total:
        problems.add(None, 'holds no jobs; write one JSON object a line, such as {"prompt": "..."}')
    problems.raise_if_any()


def _numbered(
    lines: Iterable[str] | Iterable[bytes], source: str | Path, kind: str, problems: Problems
) -> Iterator[tuple[int, str]]:
    """(number, text) of each line from 1, without a byte order mark; an input whose first bytes say it is not text
    is refused, and a line that is not UTF-8 is a problem (a text stream that cannot decode ends there)."""
    iterator = iter(lines)
    number = 0
    while True:
        try:
            line = next(iterator)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            # A text stream decodes ahead of the line it hands out: the bad byte is somewhere after this line.
            problems.add(None, _undecodable(exc, after=number))
            return
        number += 1
        if number == 1:
            _refuse_binary(line if isinstance(line, bytes) else line.encode(errors="replace"), source, kind)
            line = line.removeprefix(codecs.BOM_UTF8) if isinstance(line, bytes) else line.removeprefix("\ufeff")
        if isinstance(line, str):
            yield number, line
            continue
        try:
            yield number, line.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(
                number,
                f"is not UTF-8 (the byte 0x{line[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8",
            )


class _LineProblem(Exception):
    def __init__(self, *messages: str) -> None:
        super().__init__(*messages)
        self.messages = messages


_JOB = "job"
_BATCH_REQUEST = "batch request"
_SHAPES = {
    _JOB: 'a job such as {"prompt": "..."}',
    _BATCH_REQUEST: 'a batch request such as {"custom_id": "...", "params": {...}}',
}
_BATCH_KEYS = frozenset({"custom_id", "params"})
_ANY_ID = CustomIdRule(re.compile(r".+", re.S), "a string that is not empty")
"""The rule for a batch request's custom id whose provider registered none: it is a job's id, nothing more."""


def _custom_id_rule(provider: str) -> CustomIdRule:
    """The rule `provider` registered for custom ids (through the default registry, where its parameter check is
    found too); any non-empty string when it registered none, or its plugins cannot load."""
    from lowtide.registry import default_registry  # the registry's modules import lowtide.config, as this one does

    try:
        return default_registry().custom_id_rule(provider) or _ANY_ID
    except ConfigurationError:
        return _ANY_ID


def _json_object(text: str) -> dict[str, object]:
    try:
        item: object = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _LineProblem(f"is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(item, dict):
        raise _LineProblem(f'is a JSON {_json_type(item)}, not an object such as {{"prompt": "..."}}')
    return cast(dict[str, object], item)  # JSON object keys are always strings


def _jsonl_job(fields: dict[str, Any], base: Path, files: FileChecks) -> Job:
    unknown = sorted(set(fields) - OVERRIDE_KEYS - set(JOB_KEYS))
    if unknown:
        raise _LineProblem(unknown_keys(unknown, what="key", job_keys=JOB_KEYS))
    overrides = {key: value for key, value in fields.items() if key in OVERRIDE_KEYS}
    messages: list[str] = override_problems(overrides)
    file = fields.get("file")
    path: Path | None = None
    if file is not None:
        if not isinstance(file, str) or not file:
            messages.append(f"file: expected a path as a string, got {json.dumps(file)}")
        else:
            path = _resolve(file, base)
            trouble = files.trouble(file, path)
            if trouble is not None:
                messages.append(trouble)
    if messages:
        raise _LineProblem(*messages)
    job_fields = {key: fields[key] for key in ("prompt", "messages", "citations", "id") if key in fields}
    if type(job_fields.get("id")) is int:  # a numeric id is the user's id all the same (but not true or false)
        job_fields["id"] = str(job_fields["id"])
    try:
        return Job(**job_fields, file=path, overrides=overrides)
    except ValidationError as exc:
        raise _LineProblem(*(pydantic_problem(error) for error in exc.errors())) from None


def _batch_request_job(fields: dict[str, Any], provider: str) -> Job:
    """A job from a batch request line: its custom id by `provider`'s rule, its params checked as a job's overrides
    are."""
    unknown = sorted(set(fields) - _BATCH_KEYS)
    if unknown:
        listed = ", ".join(repr(key) for key in unknown)
        raise _LineProblem(
            f"unknown key{'s' * (len(unknown) > 1)} {listed}; a batch request holds custom_id and params"
        )
    found: list[str] = []
    custom_id = fields.get("custom_id")
    rule = _custom_id_rule(provider)
    if not isinstance(custom_id, str) or not rule.allows(custom_id):
        got = "nothing" if custom_id is None else json.dumps(custom_id)
        found.append(f"custom_id: expected {rule.described} (the API's rule), got {got}")
    params = fields.get("params")
    if not isinstance(params, dict):
        got = "nothing" if params is None else f"a JSON {_json_type(params)}"
        raise _LineProblem(*found, f"params: expected an object of Messages parameters, got {got}")
    params = cast(dict[str, Any], params)
    if "messages" not in params:
        found.append("params: no messages; a batch request's params hold the messages to send")
    overrides = {key: value for key, value in params.items() if key != "messages"}
    found += [f"params: {problem}" if problem.startswith("unknown") else f"params.{problem}"
              for problem in override_problems(overrides)]  # fmt: skip
    if found:
        raise _LineProblem(*found)
    try:
        return Job(messages=params["messages"], id=custom_id, overrides=overrides)
    except ValidationError as exc:
        raise _LineProblem(*(f"params.{pydantic_problem(error)}" for error in exc.errors())) from None


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "boolean" if isinstance(value, bool) else "number"


def _input_lines(source: Path, digest: InputDigest | None = None) -> Iterator[bytes]:
    """The lines of an input file, read a line at a time, as `bytes.splitlines` splits the whole (at LF, CRLF or CR),
    without their ends (`digest` fed each as read, with its end); a file that cannot be opened is an `InputError`,
    as `_read_input` says it."""
    with _unreadable_as_input_error(source):
        handle = source.open("rb")
    with handle:
        for chunk in handle:  # (a chunk ends at LF: a CR inside it splits it as the whole file's splitlines would)
            if digest is not None:
                digest.update(chunk)
            yield from chunk.splitlines()


def _read_input(source: Path) -> bytes:
    with _unreadable_as_input_error(source):
        return source.read_bytes()


@contextmanager
def _unreadable_as_input_error(source: Path) -> Generator[None]:
    """An input file that is missing, a folder or unreadable, as the `InputError` that says so."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(source, [InputProblem(None, "does not exist")]) from None
    except IsADirectoryError:
        raise InputError(source, [InputProblem(None, "is a folder; name the input file itself")]) from None
    except OSError as exc:
        raise InputError(source, [InputProblem(None, f"cannot be read: {exc.strerror or exc}")]) from None


def _refuse_binary(head: bytes, source: str | Path, kind: str) -> None:
    """Refuse an input whose first bytes say it is not text (a PDF, an image, a workbook)."""
    binary = binary_kind(head[:_HEAD_BYTES])
    if binary is not None:
        problem = f"is {binary}, not {kind} text; export the data as {kind} (UTF-8) and load that"
        raise InputError(source, [InputProblem(None, problem)])


# -- CSV ---------------------------------------------------------------------------------------------------------


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
    raw = _read_input(source)
    if digest is not None:
        digest.reading(format="csv", folder=str(base), template=template, file_column=file_column, id_column=id_column)
        digest.update(raw)
    return _csv_jobs(_csv_text(raw, source), source, base, template, file_column, id_column)


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
            text = _csv_text(first + b"".join(cast(Iterator[bytes], chunks)), name)
        else:
            _refuse_binary(first.encode(errors="replace"), name, "CSV")
            text = (first + "".join(cast(Iterator[str], chunks))).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(name, [InputProblem(None, _undecodable(exc, after=0))]) from None
    return _csv_jobs(text, name, folder, template, file_column, id_column)


def _undecodable(exc: UnicodeDecodeError, *, after: int) -> str:
    where = f" after line {after}" if after else ""
    return (
        f"cannot be read as UTF-8{where}: the byte 0x{exc.object[exc.start]:02x} is not valid UTF-8; save the input"
        " as UTF-8 (or read it as bytes, so that the line is named)"
    )


def _csv_text(raw: bytes, source: str | Path) -> str:
    _refuse_binary(raw, source, "CSV")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problem = InputProblem(line, f"is not UTF-8 (the byte 0x{raw[exc.start]:02x}); save the file as UTF-8")
        raise InputError(source, [problem]) from None


def _csv_jobs(
    text: str, source: str | Path, base: Path, template: str, file_column: str | None, id_column: str | None
) -> list[Job]:
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
    files = FileChecks()
    ids: dict[str, int] = {}
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
        job = _csv_job(row, header, template, file_column, id_column, base, files, number, problems)
        if job is not None:
            check_id(job.id, number, ids, problems)
            jobs.append(job)
    if not jobs and not problems.total:
        problems.add(None, "has a header but no rows; add one row per job")
    problems.raise_if_any()
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


def _csv_job(
    row: list[str],
    header: list[str],
    template: str,
    file_column: str | None,
    id_column: str | None,
    base: Path,
    files: FileChecks,
    number: int,
    problems: Problems,
) -> Job | None:
    if len(row) != len(header):
        problems.add(
            number,
            f"has {len(row)} cells but the header has {len(header)} columns; quote cells that hold commas or newlines",
        )
        return None
    values = dict(zip(header, row, strict=True))
    try:
        prompt = template.format_map(values)
    except (IndexError, AttributeError, TypeError, ValueError) as exc:
        problems.add(number, f"the template cannot be filled in from this row: {exc}")
        return None
    found: list[str] = []
    if not prompt.strip():
        found.append("the template gives an empty prompt for this row; are its cells empty?")
    path: Path | None = None
    name = values[file_column].strip() if file_column else ""
    if name:
        path = _resolve(name, base)
        trouble = files.trouble(name, path)
        if trouble is not None:
            found.append(trouble)
    for message in found:
        problems.add(number, message)
    if found:
        return None
    job_id = values[id_column].strip() if id_column else ""
    return Job(prompt=prompt, file=path, id=job_id or None)
