"""Jobs from JSONL inputs, files or streams (standard input): every line read, parsed and checked by `parser` before
any job is returned (CSV's: `csv_rows`).

Loading checks everything a run needs before anything is sent (every line, every file's kind and size, every
override), but reads no file contents: a job holds the path of its file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from lowtide.bulk.inputs.digest import InputDigest
from lowtide.bulk.inputs.jobs import Job, job_of
from lowtide.bulk.inputs.parser import InputParser
from lowtide.bulk.inputs.reading import input_lines, jsonl_reading
from lowtide.config.actors import DEFAULT_PROVIDER

__all__ = [
    "iter_jsonl",
    "jsonl_inputs",
    "load_jsonl",
    "load_jsonl_stream",
    "parsed_jsonl",
]


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
    """The jobs of JSONL `lines` (a prompt alone as its string), every line checked (`InputParser.jsonl`): the
    problems found, raised as one `InputError` once the last line is read."""
    return InputParser(source, base, provider=provider).jsonl(lines)
