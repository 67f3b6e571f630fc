"""One bulk input's lines, each read, parsed and checked here (`InputParser`): a JSONL line or a CSV row decoded (an
input whose first bytes say it is not text refused), made into its job, its file's kind and size and its id checked,
and what is wrong noted against its line, all raised together as one `InputError` when the input ends. Jobs given in
code are checked as theirs are (`check_jobs`).

The JSONL loaders (`jsonl`), the CSV loaders (`csv_rows`) and a run known by its input's bytes (`reading`) all read
their lines through it, so a line is refused the same way, with the same words, however it came in.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from lowtide.bulk.inputs.files import FileChecks, FileInfo, binary_kind
from lowtide.bulk.inputs.jobs import (
    JOB_KEYS,
    OVERRIDE_KEYS,
    Job,
    Jobs,
    document_paths,
    override_problems,
    pydantic_problem,
    unknown_keys,
)
from lowtide.bulk.inputs.problems import MAX_PROBLEMS_SHOWN, InputError, InputProblem
from lowtide.config.actors import DEFAULT_PROVIDER
from lowtide.core.custom_ids import CustomIdRule
from lowtide.errors import ConfigurationError

__all__ = [
    "CsvTable",
    "InputParser",
    "Problems",
    "check_id",
    "check_jobs",
    "csv_text",
    "jsonl_line",
    "refuse_binary",
    "refuse_held",
    "resolve",
    "undecodable",
]

# Enough of an input file to tell a PDF, an image or a workbook from text.
_HEAD_BYTES = 64


class CsvTable(NamedTuple):
    """What a CSV input's rows are read by: its header, the prompt's template and the columns of files and ids."""

    header: list[str]
    template: str
    file_column: str | None
    id_column: str | None


class InputParser:
    """The lines of one input (`source`, its files relative to `base`), read, parsed and checked one at a time: each
    job handed on as its line passes, each problem noted against its line's number, ids checked unique across the
    input, and `done` raising what was found as one `InputError`. `problems` may be shared with what checks the
    input whole (a CSV's header)."""

    __slots__ = ("_ids", "_shape", "base", "files", "jobs", "problems", "provider", "source")

    def __init__(
        self,
        source: str | Path,
        base: Path,
        *,
        provider: str = DEFAULT_PROVIDER,
        files: FileChecks | None = None,
        problems: Problems | None = None,
    ) -> None:
        self.source, self.base, self.provider = source, base, provider
        self.files = files if files is not None else FileChecks()
        self.problems = problems if problems is not None else Problems(source)
        self.jobs = 0
        self._ids: dict[str, int] = {}
        self._shape: tuple[str, int] | None = None  # the first JSONL line's shape and number: every line must have it

    # -- JSONL ---------------------------------------------------------------------------------------------------

    def jsonl(self, lines: Iterable[str] | Iterable[bytes]) -> Iterator[Job | str]:
        """The jobs of JSONL `lines` (a prompt alone as its string), every line checked: the problems found, raised
        as one `InputError` once the last line is read."""
        for number, text in self.numbered(lines, "JSONL"):
            job = self.jsonl_line(number, text)
            if job is not None:
                yield job
        self.done('holds no jobs; write one JSON object a line, such as {"prompt": "..."}')

    def jsonl_line(self, number: int, text: str) -> Job | str | None:
        """Line `number` of a JSONL input as its job; None for a blank line or one with problems (noted)."""
        if not text.strip():
            return None
        try:
            fields = _json_object(text)
            this = _shape_of(fields)
            if self._shape is None:
                self._shape = (this, number)
            elif this != self._shape[0]:
                raise _LineProblem(
                    f"is {_SHAPES[this]}, but line {self._shape[1]} is {_SHAPES[self._shape[0]]}; every line of an"
                    " input must have the same shape"
                )
            job = _line_job(fields, this, self.base, self.provider, self.files)
        except _LineProblem as exc:
            for message in exc.messages:
                self.problems.add(number, message)
            return None
        return self._counted(job, number)

    # -- CSV -----------------------------------------------------------------------------------------------------

    def csv_row(self, number: int, row: list[str], table: CsvTable) -> Job | None:
        """Row `number` of a CSV input (the header is line 1) as its job; None for one with problems (noted)."""
        header = table.header
        if len(row) != len(header):
            self.problems.add(
                number,
                f"has {len(row)} cells but the header has {len(header)} columns; quote cells that hold commas or"
                " newlines",
            )
            return None
        values = dict(zip(header, row, strict=True))
        try:
            prompt = table.template.format_map(values)
        except (IndexError, AttributeError, TypeError, ValueError) as exc:
            self.problems.add(number, f"the template cannot be filled in from this row: {exc}")
            return None
        found: list[str] = []
        if not prompt.strip():
            found.append("the template gives an empty prompt for this row; are its cells empty?")
        path: Path | None = None
        name = values[table.file_column].strip() if table.file_column else ""
        if name:
            path = resolve(name, self.base)
            trouble = self.files.trouble(name, path)
            if trouble is not None:
                found.append(trouble)
        for message in found:
            self.problems.add(number, message)
        if found:
            return None
        job_id = values[table.id_column].strip() if table.id_column else ""
        job = Job(prompt=prompt, file=path, id=job_id or None)
        self._counted(job, number)
        return job

    # -- any input -----------------------------------------------------------------------------------------------

    def numbered(self, lines: Iterable[str] | Iterable[bytes], kind: str) -> Iterator[tuple[int, str]]:
        """(number, text) of each line from 1, without a byte order mark; an input whose first bytes say it is not
        text is refused, and a line that is not UTF-8 is a problem (a text stream that cannot decode ends there)."""
        iterator = iter(lines)
        number = 0
        while True:
            try:
                line = next(iterator)
            except StopIteration:
                return
            except UnicodeDecodeError as exc:
                # A text stream decodes ahead of the line it hands out: the bad byte is somewhere after this line.
                self.problems.add(None, undecodable(exc, after=number))
                return
            number += 1
            if number == 1:
                refuse_binary(line if isinstance(line, bytes) else line.encode(errors="replace"), self.source, kind)
                line = line.removeprefix(codecs.BOM_UTF8) if isinstance(line, bytes) else line.removeprefix("\ufeff")
            if isinstance(line, str):
                yield number, line
                continue
            try:
                yield number, line.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.problems.add(
                    number,
                    f"is not UTF-8 (the byte 0x{line[exc.start]:02x} at column {exc.start + 1}); save the file as"
                    " UTF-8",
                )

    def done(self, empty: str) -> None:
        """The end of the input: `empty` noted when it gave no job and nothing else was wrong; every problem raised
        as one `InputError`."""
        if not self.jobs and not self.problems.total:
            self.problems.add(None, empty)
        self.problems.raise_if_any()

    def _counted(self, job: Job | str, number: int) -> Job | str:
        if isinstance(job, Job):  # (a prompt alone has no id to check)
            check_id(job.id, number, self._ids, self.problems)
        self.jobs += 1
        return job


def jsonl_line(line: bytes, number: int, source: str | Path, base: Path, provider: str, files: FileChecks) -> Job | str:
    """Line `number` of a JSONL input (its bytes, without their end) as its job, checked as `InputParser.jsonl` checks
    it, but alone: its shape is not compared with the other lines', nor its id with theirs. For an input whose every
    line passed `InputParser.jsonl` before (a run known by its bytes, `reading.LineJobs`): what can differ since is
    the files its jobs name (`files`), a problem with which is an `InputError` naming the line."""
    try:
        text = line.removeprefix(codecs.BOM_UTF8) if number == 1 else line
        fields = _json_object(text.decode("utf-8"))
        return _line_job(fields, _shape_of(fields), base, provider, files)
    except _LineProblem as exc:
        raise InputError(source, [InputProblem(number, message) for message in exc.messages]) from None


def csv_text(raw: bytes, source: str | Path) -> str:
    """A CSV input's bytes as its text: refused when its first bytes say it is not text, or it is not UTF-8 (the
    line of the first byte that is not named)."""
    refuse_binary(raw, source, "CSV")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problem = InputProblem(line, f"is not UTF-8 (the byte 0x{raw[exc.start]:02x}); save the file as UTF-8")
        raise InputError(source, [problem]) from None


def resolve(name: str, base: Path) -> Path:
    """A job's file named in an input: absolute, or relative to the input's folder (not the working directory)."""
    return (base / Path(name).expanduser()).absolute()


def refuse_binary(head: bytes, source: str | Path, kind: str) -> None:
    """Refuse an input whose first bytes say it is not text (a PDF, an image, a workbook)."""
    binary = binary_kind(head[:_HEAD_BYTES])
    if binary is not None:
        problem = f"is {binary}, not {kind} text; export the data as {kind} (UTF-8) and load that"
        raise InputError(source, [InputProblem(None, problem)])


def undecodable(exc: UnicodeDecodeError, *, after: int) -> str:
    where = f" after line {after}" if after else ""
    return (
        f"cannot be read as UTF-8{where}: the byte 0x{exc.object[exc.start]:02x} is not valid UTF-8; save the input"
        " as UTF-8 (or read it as bytes, so that the line is named)"
    )


# -- the checks any input's jobs pass -----------------------------------------------------------------------


class Problems:
    """Collects the problems of one input, keeping the first few and counting the rest."""

    def __init__(self, source: str | Path, label: str = "line") -> None:
        self.source = source
        self.label = label
        self.shown: list[InputProblem] = []
        self.total = 0

    def add(self, line: int | None, message: str) -> None:
        self.total += 1
        if len(self.shown) < MAX_PROBLEMS_SHOWN:
            self.shown.append(InputProblem(line, message, self.label))

    def raise_if_any(self) -> None:
        if self.total:
            raise InputError(self.source, self.shown, total=self.total)


def check_jobs(jobs: Sequence[Job], *, held: dict[int, list[str]] | None = None) -> dict[Path, FileInfo]:
    """Check jobs made in code as the loaders check theirs: files present, of a kind and size the API takes, and ids
    unique. Problems are numbered by the job's index in `jobs`. Returns what was found of each file, by path.

    `held`: given, each file's problem is kept there by job index instead of raised (a resumed run's, whose jobs sent
    before need their files no more: `refuse_held` raises those of the jobs still to send).
    """
    problems = Problems("jobs", label="job")
    if not jobs:
        problems.add(None, "there are no jobs to run")
    files = FileChecks()
    ids: dict[str, int] = {}
    place = jobs if isinstance(jobs, Jobs) else Jobs()
    # A prompt given alone has neither a file nor an id: nothing more to check.
    for index, job in jobs.given() if isinstance(jobs, Jobs) else enumerate(jobs):
        found: list[str] = []
        if job.file is not None:
            shown = place.named(job.file, str(job.file))
            trouble = files.check(job.file) if shown == str(job.file) else files.trouble(shown, job.file)
            if trouble is not None:  # (named as its input names it: the line's own words, its path looked for)
                found.append(f"file {shown!r} {trouble}" if shown == str(job.file) else trouble)
        for where, named, path in document_paths(job):
            trouble = files.trouble(place.named(path, named), path)
            if trouble is not None:
                found.append(f"{where}: {trouble}")
        if held is not None and found:
            held[index] = found
        for message in found if held is None else ():
            problems.add(index, message)
        check_id(job.id, index, ids, problems)
    problems.raise_if_any()
    return files.found


def refuse_held(held: Mapping[int, list[str]], indexes: Iterable[int], jobs: Jobs) -> None:
    """Raise, as `check_jobs` does, the file problems `held` of the jobs of `indexes` (a resumed run's jobs still to
    send), by their input's lines where the jobs know them (`Jobs.place`), else by job."""
    if not held:
        return
    problems: Problems | None = None
    for index in indexes:
        messages = held.get(index)
        if not messages:
            continue
        place = jobs.place(index)
        if problems is None:
            problems = Problems(place[0]) if place is not None else Problems("jobs", label="job")
        for message in messages:
            problems.add(place[1] if place is not None else index, message)
    if problems is not None:
        problems.raise_if_any()


def check_id(job_id: str | None, where: int, ids: dict[str, int], problems: Problems) -> None:
    if job_id is None:
        return
    first = ids.setdefault(job_id, where)
    if first != where:
        problems.add(where, f"the id {job_id!r} is already used on {problems.label} {first}; ids must be unique")


# -- one JSONL line's fields -------------------------------------------------------------------------------------


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


def _shape_of(fields: dict[str, object]) -> str:
    return _BATCH_REQUEST if _BATCH_KEYS & fields.keys() else _JOB


def _line_job(fields: dict[str, Any], this: str, base: Path, provider: str, files: FileChecks) -> Job | str:
    """The job of a line's fields, of the shape `this`; a prompt alone as its string, valid as its `Job` would be (no
    `Job` made)."""
    if this == _JOB and len(fields) == 1 and type(prompt := fields.get("prompt")) is str and prompt.strip():
        return prompt
    return _batch_request_job(fields, provider) if this == _BATCH_REQUEST else _jsonl_job(fields, base, files)


def _custom_id_rule(provider: str) -> CustomIdRule:
    """The rule `provider` registered for custom ids (through the default registry, where its parameter check is
    found too); any non-empty string when it registered none, or its plugins cannot load."""
    from lowtide.registry import (
        default_registry,  # the registry's modules import lowtide.config.actors, as this one does
    )

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
            path = resolve(file, base)
            trouble = files.trouble(file, path)
            if trouble is not None:
                messages.append(trouble)
    given = fields.get("messages")
    if isinstance(given, list):
        fields = {**fields, "messages": _paths_found(cast("list[object]", given), base, files, messages)}
    if messages:
        raise _LineProblem(*messages)
    job_fields = {key: fields[key] for key in ("prompt", "messages", "citations", "id") if key in fields}
    if type(job_fields.get("id")) is int:  # a numeric id is the user's id all the same (but not true or false)
        job_fields["id"] = str(job_fields["id"])
    try:
        return Job(**job_fields, file=path, overrides=overrides)
    except ValidationError as exc:
        raise _LineProblem(*(pydantic_problem(error) for error in exc.errors())) from None


def _paths_found(given: list[object], base: Path, files: FileChecks, problems: list[str]) -> list[object]:
    """A line's messages with each document block by path (`{"type": "document", "path": ...}`) found from the input's
    folder, as a job's `file` is, and its file checked with the line (its problems added to `problems`)."""
    found: list[object] = []
    for index, message in enumerate(given):
        turn = _fields(message)
        content = turn.get("content") if turn is not None else None
        if turn is None or not isinstance(content, list):
            found.append(message)
            continue
        blocks: list[object] = []
        for number, block in enumerate(cast("list[object]", content)):
            fields = _fields(block)
            named = fields.get("path") if fields is not None else None
            if fields is None or fields.get("type") != "document" or not isinstance(named, str) or not named:
                blocks.append(block)
                continue
            path = resolve(named, base)
            trouble = files.trouble(named, path)
            if trouble is not None:
                problems.append(f"messages.{index}.content.{number}: {trouble}")
            blocks.append({**fields, "path": str(path)})
        found.append({**turn, "content": blocks})
    return found


def _fields(value: object) -> dict[str, object] | None:
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


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
