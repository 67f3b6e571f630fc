"""The converted texts of a run's office files and web pages, known again from its ledger: a resumed run reads the
text of each file whose request is in the ledger back from that request, so that a file already sent is not converted
again (markitdown's conversion is the costly part of checking a run of office files).

What the run records, in its options (no schema change): for each converted file content (`converted.content_key`),
the SHA-256 of its text, how many characters it holds, and the first items that send it. A resume looks in those items'
requests for a string that is that text, or ends with it (a provider without documents sends the title first), the
digest telling it apart; a file whose items were none of them sent, or whose bytes changed, is converted as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from lowtide.bulk.inputs.converted import CONVERTED_KINDS, remember
from lowtide.bulk.inputs.files import FileInfo
from lowtide.bulk.inputs.jobs import Job, Jobs, document_paths
from lowtide.bulk.inputs.reading import LineJobs
from lowtide.bulk.recorded.identity import known_run
from lowtide.bulk.recorded.items import item_key
from lowtide.ledger.records import RequestRecord
from lowtide.ledger.run_ledger import RunLedger
from lowtide.ledger.runs import RunRecord

__all__ = ["CONVERSIONS_OPTION", "conversions_option", "recall_conversions", "resumed_run"]

CONVERSIONS_OPTION = "converted_texts"
"""The run's recorded option: {content key: [text digest, characters, [item indexes]]}, or absent."""

_ITEMS_KEPT = 8
"""The items noted for each converted content: a file many jobs name is found through any of its first few."""


class _Ledger(Protocol):
    @property
    def run_store(self) -> RunLedger: ...

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]: ...


def conversions_option(jobs: Jobs, files: Mapping[Path, FileInfo]) -> dict[str, list[Any]] | None:
    """What a new run records of its converted files (`CONVERSIONS_OPTION`), or None when it converts none."""
    converted = {path: info for path, info in files.items() if info.content_key is not None}
    if not converted:
        return None
    found: dict[str, list[Any]] = {}
    for index, job in jobs.given():
        for path in _named(job):
            info = converted.get(path)
            if info is None or info.content_key is None:
                continue
            entry = found.setdefault(info.content_key, [info.text_digest, info.text_chars, []])
            indexes = cast("list[int]", entry[2])
            if len(indexes) < _ITEMS_KEPT and index not in indexes:
                indexes.append(index)
    return found


def recall_conversions(ledger: _Ledger, record: RunRecord | None) -> int:
    """Keep, as converted, the text of each file the ledger's run `record` (`resumed_run`) converted whose request it
    holds; gives how many texts were found."""
    return _recall(record, ledger) if record is not None else 0


def resumed_run(
    ledger: _Ledger,
    run_id: str | None,
    input_key: str | None,
    jobs: Jobs,
    fingerprint: Callable[[], str],
    *,
    derive: bool = False,
) -> RunRecord | None:
    """The ledger's run of these jobs, when they resume one: the run of `run_id`, else the one known by its input
    (`input_key`), else the one of the id derived from its `fingerprint`, made only when a job names a file to convert
    or (`derive`) any file, and never of jobs parsed a line at a time (those are known by their input)."""
    store = ledger.run_store
    if run_id is not None:
        return store.run(run_id)
    if input_key is not None:
        return known_run(store, None, input_key, len(jobs))
    if isinstance(jobs, LineJobs) or not any(_named(job) if derive else _converts(job) for _, job in jobs.given()):
        return None
    return store.run(f"run-{fingerprint()[:16]}")


def _named(job: Job) -> list[Path]:
    """The files `job` sends: its `file`, and those its messages' document blocks name by path."""
    named = [job.file] if job.file is not None else []
    return named + [path for _, _, path in document_paths(job)]


def _converts(job: Job) -> bool:
    """Whether `job` names a file that travels converted (by its extension)."""
    return any(path.suffix.lower() in CONVERTED_KINDS for path in _named(job))


def _recall(record: RunRecord, ledger: _Ledger) -> int:
    noted: object = record.options.get(CONVERSIONS_OPTION)
    if not isinstance(noted, dict):
        return 0
    wanted: dict[str, tuple[str, str, int]] = {}  # request key -> (content key, text digest, characters)
    for content, entry in cast("dict[object, object]", noted).items():
        if not isinstance(content, str) or not isinstance(entry, list):
            continue
        digest, chars, indexes = (*cast("list[object]", entry), None, None, None)[:3]
        if not isinstance(digest, str) or not isinstance(chars, int) or not isinstance(indexes, list):
            continue
        for index in cast("list[object]", indexes):
            if isinstance(index, int):
                wanted[item_key(record.id, index, 1)] = (content, digest, chars)
    found: set[str] = set()
    for request in ledger.requests_for(list(wanted)):
        content, digest, chars = wanted[request.key]
        if content in found:
            continue
        text = _text_in(request.params, digest, chars)
        if text is not None:
            remember(content, text)
            found.add(content)
    return len(found)


def _text_in(params: Mapping[str, Any], digest: str, chars: int) -> str | None:
    """The string of `chars` characters whose SHA-256 is `digest`, among the strings of `params` (or their ends)."""
    for value in _strings(params):
        if len(value) < chars:
            continue
        text = value[len(value) - chars :]
        if hashlib.sha256(text.encode()).hexdigest() == digest:
            return text
    return None


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in cast("Mapping[object, object]", value).values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in cast("Sequence[object]", value):
            yield from _strings(inner)
