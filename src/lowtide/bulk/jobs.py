"""The items of a bulk run: `Job`, and the JSONL and CSV loaders.

Loading checks everything a run needs before anything is sent (every line, every file's kind and size), but reads
no file contents: a job holds a path, and `file_block` reads and encodes the file only when its request is built,
so that 20,000 jobs naming 20,000 PDFs cost 20,000 small objects, not gigabytes.
"""

from __future__ import annotations

import codecs
import csv
import difflib
import io
import json
import re
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lowtide.bulk.files import (
    IMAGE_MAX_BASE64_BYTES,
    REQUEST_MAX_BYTES,
    FileChecks,
    FileInfo,
    FileKind,
    binary_kind,
    file_block,
    inspect_file,
)
from lowtide.bulk.problems import MAX_PROBLEMS_SHOWN, InputError, InputProblem, Problems
from lowtide.types import ActorRequest, ChatMessage

__all__ = [
    "IMAGE_MAX_BASE64_BYTES",
    "MAX_PROBLEMS_SHOWN",
    "OVERRIDE_KEYS",
    "REQUEST_MAX_BYTES",
    "FileInfo",
    "FileKind",
    "InputError",
    "InputProblem",
    "Job",
    "check_jobs",
    "file_block",
    "inspect_file",
    "job_messages",
    "load_csv",
    "load_jsonl",
    "override_problems",
]

OVERRIDE_KEYS: frozenset[str] = frozenset(ActorRequest.model_fields) - {
    "messages",
    "response_model",
    "custom_id",
    "extra_params",
}
"""The Messages parameters one job may set for itself (model, max_tokens, system, temperature, ...)."""

_JOB_KEYS = ("prompt", "messages", "file", "id", "citations")
# Enough of an input file to tell a PDF, an image or a workbook from text.
_HEAD_BYTES = 64
_PROBE_REQUEST: dict[str, Any] = {"model": "probe", "messages": [{"role": "user", "content": "probe"}], "max_tokens": 1}

# -- jobs --------------------------------------------------------------------------------------------------------


class Job(BaseModel):
    """One item of a bulk run: a prompt (with a file sent before it, if given), or a whole conversation.

    `citations` None means the run's default. `id` is the user's own name for the item, carried to its result.
    `overrides` sets Messages parameters (`model`, `max_tokens`, `system`, `temperature`, ...) for this job only.
    A job holds its file's path, never its contents.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str | None = None
    messages: list[ChatMessage] | None = Field(default=None, min_length=1)
    file: Path | None = None
    citations: bool | None = None
    id: str | None = Field(default=None, min_length=1)
    overrides: dict[str, Any] = Field(default_factory=dict[str, Any])

    @field_validator("prompt")
    @classmethod
    def _prompt_has_text(cls, prompt: str | None) -> str | None:
        if prompt is not None and not prompt.strip():
            raise ValueError("the prompt is empty; the API needs some text to answer")
        return prompt

    @field_validator("overrides")
    @classmethod
    def _known_overrides(cls, overrides: dict[str, Any]) -> dict[str, Any]:
        problems = override_problems(overrides)
        if problems:
            raise ValueError("; ".join(problems))
        return overrides

    @model_validator(mode="after")
    def _one_input(self) -> Job:
        if self.messages is not None and (self.prompt is not None or self.file is not None):
            raise ValueError("give either messages, or a prompt (with a file if you like), not both")
        if self.messages is None and self.prompt is None:
            hint = ": a file needs a prompt saying what to do with it" if self.file is not None else ""
            raise ValueError(f"give a prompt or messages{hint}")
        return self


def override_problems(overrides: Mapping[str, Any]) -> list[str]:
    """What is wrong with a job's Messages parameter overrides: unknown names, or values the API would refuse."""
    if not overrides:
        return []
    unknown = sorted(set(overrides) - OVERRIDE_KEYS)
    if unknown:
        return [_unknown_keys(unknown, what="Messages parameter")]
    try:
        ActorRequest.model_validate({**_PROBE_REQUEST, **overrides})
    except ValidationError as exc:
        return [_pydantic_problem(error) for error in exc.errors()]
    return []


def _unknown_keys(unknown: Sequence[str], *, what: str, job_keys: Sequence[str] = ()) -> str:
    choices = sorted([*job_keys, *OVERRIDE_KEYS])
    parts: list[str] = []
    for key in unknown:
        close = difflib.get_close_matches(key, choices, n=1)
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    noun = f"{what}s" if len(unknown) > 1 else what
    own = f"{', '.join(job_keys)} and " if job_keys else ""
    return f"unknown {noun} {', '.join(parts)}; use {own}the Messages parameters {', '.join(sorted(OVERRIDE_KEYS))}"


def _pydantic_problem(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def job_messages(job: Job, *, citations: bool) -> list[dict[str, Any]]:
    """The `messages` of the request for `job`: its conversation, or one user turn with the file block first.

    `citations` is the run's default; the job's own `citations`, when set, wins. The file is read here.
    """
    if job.messages is not None:
        return [message.model_dump() for message in job.messages]
    assert job.prompt is not None  # a Job always has messages or a prompt
    if job.file is None:
        return [{"role": "user", "content": job.prompt}]
    cite = job.citations if job.citations is not None else citations
    return [{"role": "user", "content": [file_block(job.file, citations=cite), {"type": "text", "text": job.prompt}]}]


def check_jobs(jobs: Sequence[Job]) -> dict[Path, FileInfo]:
    """Check jobs made in code as the loaders check theirs: files present, of a kind and size the API takes, and ids
    unique. Problems are numbered by the job's index in `jobs`. Returns what was found of each file, by path.
    """
    problems = Problems("jobs", label="job")
    if not jobs:
        problems.add(None, "there are no jobs to run")
    files = FileChecks()
    ids: dict[str, int] = {}
    for index, job in enumerate(jobs):
        if job.file is not None:
            trouble = files.check(job.file)
            if trouble is not None:
                problems.add(index, f"file {str(job.file)!r} {trouble}")
        _check_id(job.id, index, ids, problems)
    problems.raise_if_any()
    return files.found


def _check_id(job_id: str | None, where: int, ids: dict[str, int], problems: Problems) -> None:
    if job_id is None:
        return
    first = ids.setdefault(job_id, where)
    if first != where:
        problems.add(where, f"the id {job_id!r} is already used on {problems.label} {first}; ids must be unique")


def _resolve(name: str, base: Path) -> Path:
    """A job's file named in an input: absolute, or relative to the input's folder (not the working directory)."""
    return (base / Path(name).expanduser()).absolute()


# -- JSONL -------------------------------------------------------------------------------------------------------


def load_jsonl(path: str | Path) -> list[Job]:
    """Load jobs from a JSONL file, one JSON object a line; every line is checked before any job is returned.

    A line is `{"prompt": ..., "file": ..., "id": ..., "citations": ...}` or `{"messages": [...], ...}`, plus any
    Messages parameter to override for that job (`model`, `max_tokens`, `system`, `temperature`, ...). Relative
    file paths are relative to the JSONL file's folder. Blank lines are skipped; a UTF-8 byte order mark is allowed.
    Raises `InputError` naming the file, the lines and what is wrong with each (the first few of them).
    """
    source = Path(path)
    raw = _read_input(source, "JSONL")
    base = source.absolute().parent
    problems = Problems(source)
    files = FileChecks()
    ids: dict[str, int] = {}
    jobs: list[Job] = []
    for number, line in enumerate(raw.removeprefix(codecs.BOM_UTF8).splitlines(), start=1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(
                number,
                f"is not UTF-8 (the byte 0x{line[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8",
            )
            continue
        if not text.strip():
            continue
        try:
            job = _jsonl_job(text, base, files)
        except _LineProblem as exc:
            for message in exc.messages:
                problems.add(number, message)
            continue
        _check_id(job.id, number, ids, problems)
        jobs.append(job)
    if not jobs and not problems.total:
        problems.add(None, 'holds no jobs; write one JSON object a line, such as {"prompt": "..."}')
    problems.raise_if_any()
    return jobs


class _LineProblem(Exception):
    def __init__(self, *messages: str) -> None:
        super().__init__(*messages)
        self.messages = messages


def _jsonl_job(text: str, base: Path, files: FileChecks) -> Job:
    try:
        item: object = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _LineProblem(f"is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(item, dict):
        raise _LineProblem(f'is a JSON {_json_type(item)}, not an object such as {{"prompt": "..."}}')
    fields = cast(dict[str, Any], item)  # JSON object keys are always strings
    unknown = sorted(set(fields) - OVERRIDE_KEYS - set(_JOB_KEYS))
    if unknown:
        raise _LineProblem(_unknown_keys(unknown, what="key", job_keys=_JOB_KEYS))
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
        raise _LineProblem(*(_pydantic_problem(error) for error in exc.errors())) from None


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "boolean" if isinstance(value, bool) else "number"


def _read_input(source: Path, kind: str) -> bytes:
    """The bytes of an input file; one whose first bytes say it is not text (a PDF, a workbook) is refused."""
    try:
        raw = source.read_bytes()
    except FileNotFoundError:
        raise InputError(source, [InputProblem(None, "does not exist")]) from None
    except IsADirectoryError:
        raise InputError(source, [InputProblem(None, "is a folder; name the input file itself")]) from None
    except OSError as exc:
        raise InputError(source, [InputProblem(None, f"cannot be read: {exc.strerror or exc}")]) from None
    binary = binary_kind(raw[:_HEAD_BYTES])
    if binary is not None:
        problem = f"is {binary}, not {kind} text; export the data as {kind} (UTF-8) and load that"
        raise InputError(source, [InputProblem(None, problem)])
    return raw


# -- CSV ---------------------------------------------------------------------------------------------------------


def load_csv(
    path: str | Path,
    template: str,
    *,
    file_column: str | None = None,
    id_column: str | None = None,
) -> list[Job]:
    """Load one job per row of a CSV file, its prompt being `template` filled in with the row's `{column}` values.

    `file_column` names a column of file paths (relative to the CSV's folder; an empty cell means no file),
    `id_column` a column of ids. The header is line 1; every row is checked before any job is returned. Raises
    `InputError` naming the file, the lines and what is wrong (an unknown column lists the columns there are).
    """
    source = Path(path)
    raw = _read_input(source, "CSV")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problem = InputProblem(line, f"is not UTF-8 (the byte 0x{raw[exc.start]:02x}); save the file as UTF-8")
        raise InputError(source, [problem]) from None
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
    base = source.absolute().parent
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
            _check_id(job.id, number, ids, problems)
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
