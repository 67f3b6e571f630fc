"""Jobs from JSONL inputs, files or streams (standard input): every line checked before any job is returned (CSV's:
`csv_loader`).

Loading checks everything a run needs before anything is sent (every line, every file's kind and size, every
override), but reads no file contents: a job holds the path of its file.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from lowtide.bulk.files import FileChecks
from lowtide.bulk.input_digest import InputDigest
from lowtide.bulk.input_reading import input_lines, refuse_binary, resolve, undecodable
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
from lowtide.config.actors import DEFAULT_PROVIDER
from lowtide.core.custom_ids import CustomIdRule
from lowtide.errors import ConfigurationError

__all__ = [
    "iter_jsonl",
    "jsonl_inputs",
    "jsonl_line",
    "jsonl_reading",
    "load_jsonl",
    "load_jsonl_stream",
    "parsed_jsonl",
]


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
        jsonl_reading(digest, base, provider)
    return parsed_jsonl(input_lines(source, digest), source, base, provider)


def jsonl_reading(digest: InputDigest, base: Path, provider: str) -> None:
    """Tell `digest` how the JSONL bytes that follow are read: what a job made of them depends on besides."""
    digest.reading(format="jsonl", folder=str(base), provider=provider)


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
    return [job_of(item) for item in parsed_jsonl(lines, name, base_path, provider)]


def parsed_jsonl(
    lines: Iterable[str] | Iterable[bytes], source: str | Path, base: Path, provider: str
) -> Iterator[Job | str]:
    """The jobs of JSONL `lines` (a prompt alone as its string), every line checked: the problems found, raised as one
    `InputError` once the last line is read."""
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
            job = _line_job(fields, this, base, provider, files)
        except _LineProblem as exc:
            for message in exc.messages:
                problems.add(number, message)
            continue
        if isinstance(job, Job):  # (a prompt alone has no id to check)
            check_id(job.id, number, ids, problems)
        jobs += 1
        yield job
    if not jobs and not problems.total:
        problems.add(None, 'holds no jobs; write one JSON object a line, such as {"prompt": "..."}')
    problems.raise_if_any()


def jsonl_line(line: bytes, number: int, source: str | Path, base: Path, provider: str, files: FileChecks) -> Job | str:
    """Line `number` of a JSONL input (its bytes, without their end) as its job, checked as `jsonl_inputs` checks it,
    but alone: its shape is not compared with the other lines', nor its id with theirs. For an input whose every line
    passed `jsonl_inputs` before (a run known by its bytes, `line_jobs`): what can differ since is the files its jobs
    name (`files`), a problem with which is an `InputError` naming the line."""
    try:
        text = line.removeprefix(codecs.BOM_UTF8) if number == 1 else line
        fields = _json_object(text.decode("utf-8"))
        this = _BATCH_REQUEST if _BATCH_KEYS & fields.keys() else _JOB
        return _line_job(fields, this, base, provider, files)
    except _LineProblem as exc:
        raise InputError(source, [InputProblem(number, message) for message in exc.messages]) from None


def _line_job(fields: dict[str, Any], this: str, base: Path, provider: str, files: FileChecks) -> Job | str:
    """The job of a line's fields, of the shape `this`; a prompt alone as its string, valid as its `Job` would be (no
    `Job` made)."""
    if this == _JOB and len(fields) == 1 and type(prompt := fields.get("prompt")) is str and prompt.strip():
        return prompt
    return _batch_request_job(fields, provider) if this == _BATCH_REQUEST else _jsonl_job(fields, base, files)


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
            problems.add(None, undecodable(exc, after=number))
            return
        number += 1
        if number == 1:
            refuse_binary(line if isinstance(line, bytes) else line.encode(errors="replace"), source, kind)
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
