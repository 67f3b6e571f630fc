"""The items of a bulk run: `Job` (a prompt with an optional file, or messages, with per-job overrides), the checks
every job passes before anything is sent, and the messages a job becomes.

A job holds its file's path, never its contents: `file_block` reads and encodes the file only when the job's request
is built, so that 20,000 jobs naming 20,000 PDFs cost 20,000 small objects, not gigabytes. A line of a JSONL or CSV
input becomes its job in `lowtide.bulk.inputs.parser`, the one place a line is read, parsed and checked.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lowtide.bulk.inputs.files import (
    IMAGE_MAX_BASE64_BYTES,
    REQUEST_MAX_BYTES,
    FileInfo,
    FileKind,
    file_block,
    inspect_file,
)
from lowtide.bulk.inputs.problems import MAX_PROBLEMS_SHOWN, InputError, InputProblem
from lowtide.errors import ConfigurationError
from lowtide.types import ActorRequest, ChatMessage, built

__all__ = [
    "IMAGE_MAX_BASE64_BYTES",
    "JOB_KEYS",
    "MAX_PROBLEMS_SHOWN",
    "OVERRIDE_KEYS",
    "REQUEST_MAX_BYTES",
    "FileInfo",
    "FileKind",
    "InputError",
    "InputProblem",
    "Job",
    "Jobs",
    "described",
    "document_paths",
    "file_block",
    "inspect_file",
    "job_from",
    "job_input",
    "job_messages",
    "job_of",
    "override_problems",
    "pydantic_problem",
    "unknown_keys",
]

OVERRIDE_KEYS: frozenset[str] = frozenset(ActorRequest.model_fields) - {
    "messages",
    "response_model",
    "custom_id",
    "extra_params",
}
"""The Messages parameters one job may set for itself (model, max_tokens, system, temperature, ...)."""

JOB_KEYS = ("prompt", "messages", "file", "id", "citations")
"""The keys of a JSONL line that are the job's own, beside the Messages parameters it overrides."""

_PROBE_REQUEST: dict[str, object] = {
    "model": "probe",
    "messages": [{"role": "user", "content": "probe"}],
    "max_tokens": 1,
}

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
    def _known_overrides(cls, overrides: dict[str, object]) -> dict[str, object]:
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


class Jobs(Sequence[Job]):
    """A run's jobs, in order. A prompt given alone, or a `Job` of a prompt alone (no id, file, messages, citations
    or overrides: a JSONL line `{"prompt": ...}`), is kept as the string it is (a `Job` of that prompt when read):
    a million prompts cost the run no object of their own."""

    __slots__ = ("_items",)

    def __init__(self, jobs: Iterable[Job | str] = ()) -> None:
        self._items: list[Job | str] = []
        for job in jobs:
            self.append(job)

    def append(self, job: Job | str) -> None:
        if isinstance(job, str) and (not job or job.isspace()):
            job = Job(prompt=job)  # refused as any blank prompt is
        elif isinstance(job, Job) and (prompt := _prompt_alone(job)) is not None:
            job = prompt
        self._items.append(job)

    def _item(self, index: int) -> Job | str:
        """Job `index` as it is kept: its prompt when given alone (a subclass may keep it another way until asked)."""
        return self._items[index]

    def prompt_alone(self, index: int) -> str | None:
        """The prompt of job `index` when it was given alone (no id, file, messages or overrides)."""
        item = self._item(index)
        return item if isinstance(item, str) else None

    def given(self) -> Iterator[tuple[int, Job]]:
        """The jobs given as `Job`s (not as a prompt alone), with their indexes: those with more to check."""
        return ((index, item) for index, item in enumerate(self._items) if not isinstance(item, str))

    def id_of(self, index: int) -> str | None:
        item = self._items[index]
        return None if isinstance(item, str) else item.id

    def file_of(self, index: int) -> str | None:
        """The name of the file job `index` sends (its result line keeps it), or None."""
        return file_name(self._items[index])

    def place(self, index: int) -> tuple[str | Path, int] | None:
        """Where job `index` was read, as its input and line number, when its jobs know it (else None)."""
        return None

    def named(self, path: Path, given: str) -> str:
        """How a problem names a file a job sends (at `path`, `given` as the job holds it): as given here; as its input
        file named it where the jobs know their input."""
        return given

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Job: ...

    @overload
    def __getitem__(self, index: slice) -> list[Job]: ...

    def __getitem__(self, index: int | slice) -> Job | list[Job]:
        if isinstance(index, slice):
            return [job_of(self._item(at)) for at in range(len(self))[index]]
        return job_of(self._item(index))

    def __iter__(self) -> Iterator[Job]:
        return (job_of(item) for item in self._items)


def _prompt_alone(job: Job) -> str | None:
    """The prompt of `job` when it is that alone (`job_of` builds the same job again from it)."""
    alone = job.messages is None and job.file is None and job.citations is None and job.id is None
    return job.prompt if alone and not job.overrides else None


def job_of(item: Job | str) -> Job:
    """The `Job` of a prompt alone, built as validation would (the prompt was checked when it was added)."""
    if not isinstance(item, str):
        return item
    values: dict[str, object] = {
        "prompt": item,
        "messages": None,
        "file": None,
        "citations": None,
        "id": None,
        "overrides": {},
    }
    return built(Job, values, _PROMPT_ONLY)


_PROMPT_ONLY = frozenset(("prompt",))


def override_problems(overrides: Mapping[str, object]) -> list[str]:
    """What is wrong with a job's Messages parameter overrides: unknown names, or values the API would refuse."""
    if not overrides:
        return []
    unknown = sorted(set(overrides) - OVERRIDE_KEYS)
    if unknown:
        return [unknown_keys(unknown, what="Messages parameter")]
    try:
        ActorRequest.model_validate({**_PROBE_REQUEST, **overrides})
    except ValidationError as exc:
        return [pydantic_problem(error) for error in exc.errors()]
    return []


def unknown_keys(unknown: Sequence[str], *, what: str, job_keys: Sequence[str] = ()) -> str:
    choices = sorted([*job_keys, *OVERRIDE_KEYS])
    parts: list[str] = []
    for key in unknown:
        close = difflib.get_close_matches(key, choices, n=1)
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    noun = f"{what}s" if len(unknown) > 1 else what
    own = f"{', '.join(job_keys)} and " if job_keys else ""
    return f"unknown {noun} {', '.join(parts)}; use {own}the Messages parameters {', '.join(sorted(OVERRIDE_KEYS))}"


def pydantic_problem(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def job_input(value: object, *, where: str) -> Job | str:
    """One input given in code (`BulkRun.add_jobs`, `Actor.map`) as a job: a `Job`, a prompt (kept as the string it
    is), or a mapping shaped like a JSONL line. Anything else (None, a number, bytes, an empty prompt or mapping, a
    key no job has) is a `ConfigurationError` naming `where` (its index) and what an input is."""
    if isinstance(value, Job):
        return value
    if isinstance(value, str):
        return value if value.strip() else job_from({"prompt": value}, where=where)
    fields = cast("Mapping[str, object]", value) if isinstance(value, Mapping) else None
    if fields:
        return job_from(_split_overrides(fields), where=where)
    raise ConfigurationError(f"{where} is {described(cast('object', value))}; {_AN_INPUT}", field="inputs")


def job_from(data: Mapping[str, object], *, where: str) -> Job:
    """The job `data` (a job's fields, its Messages parameters under `overrides`) describes, or a
    `ConfigurationError` naming `where` and each problem, in one line."""
    try:
        return Job.model_validate(dict(data))
    except ValidationError as exc:
        problems = "; ".join(pydantic_problem(error).removeprefix("overrides: ") for error in exc.errors())
        raise ConfigurationError(f"{where}: {problems}", field="inputs") from None


def described(value: object) -> str:
    """`value` as an error names what was given instead of an input: its type, and itself when short."""
    if value is None:
        return "None"
    if isinstance(value, Mapping):
        return "an empty mapping" if not value else "a mapping"
    if isinstance(value, bytes | bytearray):
        return f"{type(value).__name__} (a prompt is text: decode it)"
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 40 else shown[:37] + '...'}"


_AN_INPUT = (
    'each input is a prompt (a non-empty string), a Job, or a mapping shaped like a JSONL line ({"prompt": ...} or'
    ' {"messages": [...]}, with "file", "id", "citations" and Messages parameters).'
)


def _split_overrides(value: Mapping[str, object]) -> dict[str, object]:
    """A JSONL-shaped mapping as a job's fields: what is not one of them is a Messages parameter it overrides."""
    known = set(Job.model_fields) - {"overrides"}
    data = {k: v for k, v in value.items() if k in known}
    given: object = value.get("overrides") or {}
    extra = {k: v for k, v in value.items() if k not in known and k != "overrides"}
    data["overrides"] = {**cast("Mapping[str, object]", given), **extra} if isinstance(given, Mapping) else given
    return data


def job_messages(job: Job, *, citations: bool) -> list[dict[str, object]]:
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


def file_name(item: Job | str) -> str | None:
    """The name of the file a job sends, kept in its result line: its `file`, else its messages' first document block
    by path (None for a prompt alone, or a job that names no file)."""
    if isinstance(item, str):
        return None
    if item.file is not None:
        return item.file.name
    return next((path.name for _, _, path in document_paths(item)), None)


def named_from(base: Path, path: Path, given: str) -> str:
    """A file as an input file names it: its path from the input's folder `base` (as given when outside it)."""
    return str(path.relative_to(base)) if path.is_relative_to(base) else given


def document_paths(job: Job) -> Iterator[tuple[str, str, Path]]:
    """Each document block by path among `job`'s messages: where it is (`messages.0.content.1`), the path as given, and
    the file it names (absolute: a relative path is the working directory's, as when its request is built)."""
    for index, message in enumerate(job.messages or ()):
        if isinstance(message.content, str):
            continue
        for number, block in enumerate(message.content):
            named = block.get("path")
            if block.get("type") == "document" and isinstance(named, str) and named:
                yield f"messages.{index}.content.{number}", named, Path(named).expanduser().absolute()
