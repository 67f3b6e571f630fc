"""Where a bulk run writes, checked before anything is recorded or sent: a run that could not write its results would
have paid for answers it cannot hand over, and one that wrote over what a user gave would lose it.

- `check_outputs`: `out` can be written and `results_dir` made; neither writes over a file the run reads (its input,
  its actor file, a file a job sends), compared by file identity (device and inode: every spelling of a path, and
  symbolic and hard links to one file, are that file).
- `check_owned`: an existing results file (`out`, or `results.jsonl` in `results_dir`) is replaced only by the run
  whose results it holds (its lines' `key` is `<run id>-<index>`): another run's, or anything else, is refused.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import cast

from lowtide.core.spelling import argument
from lowtide.errors import ConfigurationError

__all__ = ["RAW_FOLDER", "RESULTS_FILE", "check_outputs", "check_owned", "first_key"]

RESULTS_FILE = "results.jsonl"
"""The processed results a results directory holds, one line per input."""
RAW_FOLDER = "raw"
"""Where a results directory keeps each batch's result lines, as the API sent them."""

_FIRST_LINE_BYTES = 1 << 20


def check_outputs(*, out: Path | None, results_dir: Path | None, inputs: Iterable[tuple[Path, str]] = ()) -> None:
    """`out` can be written (its folder exists and takes files; it is not a folder itself), and `results_dir` is a
    folder that can be made and written; neither writes over one of `inputs` (the files the run reads, each with
    what it is: "the run's input", "the actor file", ...). A `ConfigurationError` naming which and why otherwise."""
    if out is not None:
        folder = out.parent if str(out.parent) else Path(".")
        if out.is_dir():
            raise ConfigurationError(f"{argument('out')}: {out} is a folder; name a file for the results.", field="out")
        if not folder.is_dir():
            raise ConfigurationError(
                f"{argument('out')}: cannot write the results to {out}: its folder {folder} does not exist.",
                field="out",
            )
    if results_dir is not None and results_dir.exists() and not results_dir.is_dir():
        raise ConfigurationError(
            f"{argument('results_dir')}: {results_dir} is a file, not a folder; name a folder for the results.",
            field="results_dir",
        )
    _check_overlap(out, results_dir, inputs)
    if out is not None:
        folder = out.parent if str(out.parent) else Path(".")
        if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
            raise ConfigurationError(
                f"{argument('out')}: cannot write the results to {out}: permission denied.", field="out"
            )
    if results_dir is not None:
        try:
            results_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(
                f"{argument('results_dir')}: cannot make the folder {results_dir}: {exc.strerror or exc}.",
                field="results_dir",
            ) from None
        if not os.access(results_dir, os.W_OK):
            raise ConfigurationError(
                f"{argument('results_dir')}: cannot write in {results_dir}: permission denied.", field="results_dir"
            )


def _check_overlap(out: Path | None, results_dir: Path | None, inputs: Iterable[tuple[Path, str]]) -> None:
    """Refuse an output that is one of the run's inputs: by file identity (device and inode), which sees through
    symbolic and hard links and every spelling of a path. A file not made yet is no input; the results directory
    writes `results.jsonl` and, in `raw/`, a file per batch whose name the run picks."""
    written: dict[tuple[int, int], tuple[Path, str]] = {}
    if out is not None:
        _note(written, out, "out")
    if results_dir is not None:
        _note(written, results_dir / RESULTS_FILE, "results_dir")
        raw = results_dir / RAW_FOLDER
        if raw.is_dir():
            for path in raw.iterdir():
                _note(written, path, "results_dir")
    if not written:
        return
    for given, what in inputs:
        if str(given) == "-":
            continue
        found = written.get(_identity(given) or (-1, -1))
        if found is None:
            continue
        path, name = found
        named = what if str(given) == str(path) else f"{what} ({given})"
        if name == "out":
            raise ConfigurationError(
                f"{argument('out')}: {path} is {named}; writing the results there would destroy it. Name another file"
                " for the results.",
                field="out",
            )
        raise ConfigurationError(
            f"{argument('results_dir')}: the run would write its results to {path}, which is {named}; that would"
            " destroy it. Name another folder for the results.",
            field="results_dir",
        )


def _note(written: dict[tuple[int, int], tuple[Path, str]], path: Path, name: str) -> None:
    identity = _identity(path)
    if identity is not None:
        written.setdefault(identity, (path, name))


def _identity(path: Path) -> tuple[int, int] | None:
    """The file a path names (device, inode), following links; None when there is none."""
    try:
        found = path.stat()
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def check_owned(run_id: str, *, out: Path | None, results_dir: Path | None) -> None:
    """Refuse to replace an existing results file that is not this run's own: `out`, or `results.jsonl` in
    `results_dir`. An empty file, or one whose first line is a result of run `run_id` (its `key` is
    `<run id>-<index>`, `-a<n>` after it for a retry), may be replaced: the run resumed, or retried. Anything else
    names the file and how to go on."""
    own = re.compile(re.escape(run_id) + r"-\d+(?:-a\d+)?")
    for path, name in ((out, "out"), (results_dir / RESULTS_FILE if results_dir is not None else None, "results_dir")):
        if path is None or not path.is_file():
            continue
        key = first_key(path)
        if key == "" or (key is not None and own.fullmatch(key)):
            continue
        other = _KEY.fullmatch(key) if key is not None else None
        held = f"the results of run {other.group(1)!r}" if other else "something other than a run's results"
        raise ConfigurationError(
            f"{argument(name)}: {path} already holds {held}, not those of run {run_id!r}; lowtide replaces a results"
            " file only when it resumes the run that wrote it. Name another path, or delete the file to replace it.",
            field=name,
        )


def first_key(path: Path) -> str | None:
    """The `key` of a results file's first line; "" for an empty file, or one holding only the start of lowtide's
    first line (a crash while writing it); None when it holds something else than results."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_FIRST_LINE_BYTES)
    except OSError:
        return None
    if not head.strip():
        return ""
    first, newline, _ = head.partition(b"\n")
    try:
        value: object = json.loads(first)
    except ValueError:
        # Torn while lowtide wrote its first line: nothing of a user's is there.
        return "" if not newline and first.startswith(b'{"index":') else None
    if not isinstance(value, dict):
        return None
    line = cast(dict[str, object], value)
    key = line.get("key")
    return key if isinstance(key, str) and {"index", "status"} <= line.keys() else None


# A results line's key: `<run id>-<index>`, or `<run id>-<index>-a<attempt>`.
_KEY = re.compile(r"(.+)-\d+(?:-a\d+)?")
