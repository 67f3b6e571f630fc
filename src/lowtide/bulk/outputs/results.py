"""What a run gives back: one result per input, in input order and grouped, and the files it writes.

The results directory holds `raw/<batch id>.jsonl` (each batch's result lines as the API sent them) and `results.jsonl`
(one line per input). Both are appended whole lines at a time as results arrive, so they are safe to read while the run
goes on; at the end `results.jsonl` is replaced, atomically, by the complete file in input order (written beside it,
then renamed: a crash leaves the old file or the new one). Nothing secret is written: requests are never copied there,
only answers, usage, costs and errors.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel

from lowtide.batching.backend import ResultLine, UnreadableLine
from lowtide.bulk.outputs.atomic import AtomicFile
from lowtide.bulk.outputs.destinations import RAW_FOLDER, RESULTS_FILE
from lowtide.bulk.outputs.spool import Tallied
from lowtide.core.run_reports import RunReport, no_usage
from lowtide.errors import ActorError, APIError
from lowtide.messages.answers import Answer, response_of
from lowtide.types import ActorResponse, Usage

__all__ = [
    "ItemResult",
    "ItemStatus",
    "ReportTally",
    "ResultsDirectory",
    "RunResult",
    "exact_json",
    "item_line",
    "tallied",
    "write_lines",
]


class ItemStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    """An error the API gave, an answer that did not validate, or the time limit."""
    CANCELED = "canceled"
    EXPIRED = "expired"
    NOT_RUN = "not-run"
    """Never sent: the cost limit would have been crossed."""
    WAITING = "waiting"
    """In a batch the API has, its answer not collected yet: the batch's results could not be read this time (a
    connection cut, the API failing), or the run stopped before they came. Nothing is lost: the same run again,
    `lowtide retry`, or `lowtide collect` collects it, never paying twice."""
    PENDING = "pending"
    """Not final yet and in no batch the API has: not sent, or its batch's create has an unknown outcome, which is
    reconciled before anything is sent again (only seen in the status of a run going on, or one that stopped)."""


@dataclass(frozen=True, slots=True)
class ItemResult:
    """The outcome of one input of a run.

    Its answer is held as the batch gave it (`answer`): for the answers of text alone, a `TextAnswer` of about a
    tenth of the memory of a response, so that a run of 100,000 items is not 100,000 responses held at once.
    `response` builds the `ActorResponse` when read (anew each time); `text`, `parsed`, `cost_usd` and `usage` are
    read without building it.
    """

    index: int
    id: str | None
    key: str
    status: ItemStatus
    answer: Answer | None = None
    """The answer (when the item has one), as the batch gave it."""
    error: ActorError | None = None
    reason: str | None = None
    citations: list[dict[str, object]] | None = None
    field_citations: dict[str, list[dict[str, object]]] | None = None
    batch_id: str | None = None
    """The API's id of the batch the item waits on (`waiting`), when its answer or error does not name it."""
    file: str | None = None  # the name of the file the item's job sent, kept in its result line

    @property
    def response(self) -> ActorResponse[object] | None:
        """The item's `ActorResponse`, None when it has no answer."""
        return response_of(self.answer) if self.answer is not None else None

    @property
    def ok(self) -> bool:
        return self.status is ItemStatus.SUCCEEDED

    @property
    def parsed(self) -> object:
        return self.answer.parsed if isinstance(self.answer, ActorResponse) else None

    @property
    def text(self) -> str | None:
        return self.answer.text if self.answer is not None else None

    @property
    def usage(self) -> Usage | None:
        return self.answer.usage if self.answer is not None else None

    @property
    def cost_usd(self) -> Decimal | None:
        cost = self.answer.cost if self.answer is not None else None
        return cost.total_usd if cost is not None else None

    def as_json(self) -> dict[str, object]:
        """The item's line in `results.jsonl` and the `--out` file."""
        answer = self.answer
        parsed = self.parsed
        return {
            "index": self.index,
            "id": self.id,
            "key": self.key,
            "status": self.status.value,
            "text": answer.text if answer is not None else None,
            "parsed": parsed.model_dump(mode="json") if isinstance(parsed, BaseModel) else parsed,
            "citations": self.citations,
            "field_citations": self.field_citations,
            "usage": answer.usage.model_dump() if answer is not None else None,
            "cost_usd": self.cost_usd,
            "batch_id": self.batch_id or _batch_of(answer, self.error),
            "error": _error_json(self.error, self.reason),
            **({"file": self.file} if self.file is not None else {}),
        }


@dataclass(repr=False)
class RunResult:
    """Every input's result in input order (`items`, or iterate), and grouped by how it ended."""

    run_id: str
    items: list[ItemResult]
    elapsed_seconds: float = 0.0
    notes: list[str] = field(default_factory=list[str])
    batches: int | None = None
    """How many batches the run has used, over every go at it (None when not known)."""
    mode: str = "batch"
    """`batch`, or `live`: its costs are at live prices, and `retry` also sends the items it did not attempt."""
    interrupted: str | None = None
    """The signal (`SIGINT`, `SIGTERM`) that stopped a live run early, its calls in flight answered and stored."""
    cache_saved_usd: Decimal | None = None  # (`RunReport.cache_saved_usd`)

    def __repr__(self) -> str:
        # Short: a run's repr is printed (in tracebacks, by asyncio at exit), and 20,000 answers are a lot of text.
        return f"<RunResult {self.run_id}: {len(self.items)} item(s), {self.counts()}>"

    def __iter__(self) -> Iterator[ItemResult]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> ItemResult:
        return self.items[index]

    def _with(self, *statuses: ItemStatus) -> list[ItemResult]:
        return [item for item in self.items if item.status in statuses]

    @property
    def completed(self) -> list[ItemResult]:
        return self._with(ItemStatus.SUCCEEDED)

    @property
    def failed(self) -> list[ItemResult]:
        """Items that failed: an error the API gave, an answer that did not validate, or the time limit."""
        return self._with(ItemStatus.FAILED)

    @property
    def expired(self) -> list[ItemResult]:
        """Items whose request expired in its batch, on its last attempt."""
        return self._with(ItemStatus.EXPIRED)

    @property
    def to_retry(self) -> list[ItemResult]:
        """Items that failed or expired (and in a live run, those not attempted): what `retry` sends again."""
        if self.mode == "live":
            return self._with(ItemStatus.FAILED, ItemStatus.EXPIRED, ItemStatus.NOT_RUN)
        return self._with(ItemStatus.FAILED, ItemStatus.EXPIRED)

    @property
    def canceled(self) -> list[ItemResult]:
        return self._with(ItemStatus.CANCELED)

    @property
    def waiting(self) -> list[ItemResult]:
        """Items in a batch the API has whose answers are not collected yet: the same run again collects them."""
        return self._with(ItemStatus.WAITING)

    @property
    def not_run(self) -> list[ItemResult]:
        return self._with(ItemStatus.NOT_RUN)

    @property
    def ok(self) -> bool:
        return all(item.ok for item in self.items)

    @property
    def unpriced(self) -> int:
        """How many answers have no known cost (their model has no price): the run's cost is then unknown."""
        return sum(1 for item in self.items if item.answer is not None and item.answer.cost is None)

    @property
    def cost_usd(self) -> Decimal | None:
        """What the run's answers cost; None (unknown, never $0) when one of them has no known price."""
        if self.unpriced:
            return None
        return sum((item.cost_usd or Decimal(0) for item in self.items), Decimal(0))

    @property
    def live_cost_usd(self) -> Decimal | None:
        """What the same answers cost through the live API; None when one of them has no known price."""
        if self.unpriced:
            return None
        total = Decimal(0)
        for item in self.items:
            cost = item.answer.cost if item.answer is not None else None
            total += cost.live_equivalent_usd if cost is not None else Decimal(0)
        return total

    def usage(self) -> dict[str, int]:
        """Tokens summed over the answers: input (without the cache), cache reads and writes, output."""
        names = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
        total: dict[str, int] = dict.fromkeys(names, 0)
        for item in self.items:
            if item.answer is not None:
                used = item.answer.usage
                total["input_tokens"] += used.input_tokens
                total["cache_read_input_tokens"] += used.cache_read_input_tokens
                total["cache_creation_input_tokens"] += used.cache_creation_input_tokens
                total["output_tokens"] += used.output_tokens
        return total

    def counts(self) -> dict[str, int]:
        found = {status.value: 0 for status in ItemStatus}
        for item in self.items:
            found[item.status.value] += 1
        return found

    def report(self) -> RunReport:
        """The run's summary, folded from its items (what `as_json` and `summary` say)."""
        tally = ReportTally()
        for item in self.items:
            tally.add(item)
        return tally.report(
            self.run_id, batches=self.batches, mode=self.mode, interrupted=self.interrupted,
            elapsed_seconds=self.elapsed_seconds, notes=self.notes, cache_saved_usd=self.cache_saved_usd,
        )  # fmt: skip

    def as_json(self) -> dict[str, object]:
        """The run's summary as `lowtide run --json` prints it (costs as exact numbers through `exact_json`)."""
        return self.report().as_json()

    def summary(self) -> str:
        return self.report().summary()


def tallied(item: ItemResult) -> Tallied:
    """What `item`'s answer adds to its run's report (`ReportTally`), as a spool keeps it for a success."""
    answer = item.answer
    if answer is None:
        return Tallied(False, None, None, (0, 0, 0, 0))
    cost, used = answer.cost, answer.usage
    return Tallied(
        True,
        cost.total_usd if cost is not None else None,
        cost.live_equivalent_usd if cost is not None else None,
        (used.input_tokens, used.cache_read_input_tokens, used.cache_creation_input_tokens, used.output_tokens),
    )


class ReportTally:
    """A run's report folded from its items one at a time, in any order: what a run whose results are not held
    (written from the ledger a chunk at a time) says, as `RunResult.report()` does for one that holds them."""

    def __init__(self) -> None:
        self.items = 0
        self.counts = {status.value: 0 for status in ItemStatus}
        self.cost = Decimal(0)
        self.live_cost = Decimal(0)
        self.unpriced = 0
        self.usage = no_usage()
        self.reasons: dict[str, int] = {}
        self.api_failure: APIError | None = None

    def add(self, item: ItemResult) -> None:
        self.items += 1
        self.counts[item.status.value] += 1
        self._spend(tallied(item), 1)
        if item.status is not ItemStatus.SUCCEEDED:
            error = item.error
            why = item.reason or (f"{type(error).__name__}: {error}" if error else item.status.value)
            self.reasons[why] = self.reasons.get(why, 0) + 1
            if self.api_failure is None and isinstance(error, APIError):
                self.api_failure = error

    def count_success(self, tally: Tallied, times: int = 1) -> None:
        """A success known by what it adds (a line spooled by an earlier go) added, or taken back (-1)."""
        self.items += times
        self.counts[ItemStatus.SUCCEEDED.value] += times
        self._spend(tally, times)

    def _spend(self, tally: Tallied, times: int) -> None:
        """What an item's answer adds (`times` 1), or takes back (-1): its cost and usage."""
        if not tally.answered:
            return
        if tally.cost is None or tally.live_cost is None:
            self.unpriced += times
        else:
            self.cost += tally.cost * times
            self.live_cost += tally.live_cost * times
        usage = self.usage
        usage["input_tokens"] += tally.usage[0] * times
        usage["cache_read_input_tokens"] += tally.usage[1] * times
        usage["cache_creation_input_tokens"] += tally.usage[2] * times
        usage["output_tokens"] += tally.usage[3] * times

    def report(
        self,
        run_id: str,
        *,
        batches: int | None,
        mode: str,
        interrupted: str | None,
        elapsed_seconds: float,
        notes: Sequence[str],
        cache_saved_usd: Decimal | None = None,
    ) -> RunReport:
        priced = not self.unpriced
        return RunReport(
            run_id, self.items, dict(self.counts), self.cost if priced else None,
            self.live_cost if priced else None, self.unpriced, dict(self.usage), dict(self.reasons),
            self.api_failure, batches=batches, mode=mode, interrupted=interrupted, elapsed_seconds=elapsed_seconds,
            notes=list(notes), cache_saved_usd=cache_saved_usd,
        )  # fmt: skip


class ResultsDirectory:
    """The run's results folder: raw result lines per batch, and one processed line per input.

    Both are appended whole lines at a time. A process that died mid-line leaves a torn last line: a run resumed
    rewrites `results.jsonl` whole (`start`), and cuts a raw file back to its last whole line before it appends to
    it, skipping the lines of requests it already holds (a batch whose results are read again).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.raw = self.path / RAW_FOLDER
        self.raw.mkdir(parents=True, exist_ok=True)
        self.results_path = self.path / RESULTS_FILE
        self._results: IO[str] | None = None
        self._raw_held: dict[Path, set[bytes]] = {}
        """For each raw file appended to by this process: the custom ids (or whole lines) it holds."""

    def start(self, finished: Sequence[ItemResult]) -> None:
        """Begin with exactly the items already final (a resumed run), then append as results arrive."""
        with self.rewrite() as out:
            out.write("".join(item_line(item) for item in finished))
        self.append_from_now()

    def rewrite(self) -> AtomicFile:
        """`results.jsonl` written anew, whole (its lines written and committed by the caller); appending stops until
        `append_from_now`."""
        if self._results is not None:
            self._results.close()
            self._results = None
        return AtomicFile(self.results_path)

    def append_from_now(self) -> None:
        """Append each result as it settles, from now on."""
        self._results = self.results_path.open("a", encoding="utf-8")

    def add(self, items: Iterable[ItemResult]) -> None:
        assert self._results is not None, "start() first"
        text = "".join(_line(item.as_json()) for item in items)
        if text:
            self._results.write(text)
            self._results.flush()

    def add_raw(self, batch_id: str, lines: Sequence[ResultLine | UnreadableLine]) -> None:
        """Append a chunk of a batch's result lines as the API sent them (a line lowtide could not read, as its bytes),
        each request's line once."""
        path = self.raw / f"{_safe(batch_id)}.jsonl"
        held = self._raw_held.get(path)
        if held is None:
            held = self._raw_held[path] = _whole_lines(path)
        out = bytearray()
        for line in lines:
            raw = line.raw if isinstance(line, UnreadableLine) else _line(line).encode()[:-1]
            name = _named_in(raw) or raw
            if name in held:
                continue
            held.add(name)
            out += raw + b"\n"
        if out:
            with path.open("ab") as handle:
                handle.write(out)

    def finish(self, items: Sequence[ItemResult]) -> None:
        """Replace `results.jsonl` by every input's line, in input order."""
        with self.rewrite() as out:
            out.write("".join(item_line(item) for item in items))


def write_lines(path: Path, lines: Iterable[Mapping[str, object]]) -> None:
    """Write a JSONL file whole beside `path` and move it into place (`AtomicFile`), so a reader (or a crash) sees the
    old file or the new one, never half of either. The new file takes the old one's permissions."""
    with AtomicFile(path) as out:
        for line in lines:
            out.write(_line(line))


def item_line(item: ItemResult) -> str:
    """An item's line in `results.jsonl` and the `--out` file, with its newline."""
    return _line(item.as_json())


def _whole_lines(path: Path) -> set[bytes]:
    """What a raw results file holds (each line's custom id, or the line), once a torn last line is cut off."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return set()
    whole = data.rfind(b"\n") + 1
    if whole < len(data):  # the last line was cut short by a process that died while writing it
        os.truncate(path, whole)
    return {_named_in(line) or line for line in data[:whole].split(b"\n") if line}


def _named_in(line: bytes) -> bytes | None:
    found = _CUSTOM_ID.search(line)
    return found.group(1) if found else None


_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([^"\\]{1,128})"')


def _line(value: Mapping[str, object]) -> str:
    return exact_json(value) + "\n"


def exact_json(value: Mapping[str, Any], *, indent: bool = False) -> str:
    """`value` as JSON (UTF-8, not ASCII-escaped), its `Decimal`s as JSON numbers with their exact digits.

    A cost is a `Decimal`; as a float it could lose digits, and as a string it would not be a number. orjson writes
    the digits as they are; what orjson refuses (an integer beyond 64 bits, in a tool's input say) goes through the
    standard library, the `Decimal`s of the top level still written as numbers.
    """
    try:
        options = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
        return orjson.dumps(value, default=_exact, option=options).decode()
    except TypeError:
        pass
    spacing: dict[str, Any] = {"indent": 2} if indent else {"separators": (",", ":")}
    colon = ": " if indent else ":"
    numbers = {key: _number(item) for key, item in value.items() if isinstance(item, Decimal)}
    marker = secrets.token_hex(16)  # stands in for each number; no other value holds it
    marked = {key: marker if key in numbers else item for key, item in value.items()}
    text = json.dumps(marked, ensure_ascii=False, default=str, **spacing)
    for key, number in numbers.items():
        pair = f"{json.dumps(key, ensure_ascii=False)}{colon}"
        text = text.replace(f'{pair}"{marker}"', pair + number, 1)
    return text


def _exact(value: object) -> object:
    return orjson.Fragment(_number(value)) if isinstance(value, Decimal) else str(value)


def _number(value: Decimal) -> str:
    """The exact digits of a finite `Decimal`, without an exponent (`0.0001125`, never `1.125E-4`)."""
    return format(value, "f") if value.is_finite() else "null"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _batch_of(answer: Answer | None, error: ActorError | None) -> str | None:
    if answer is not None:
        return answer.ids.batch_id if isinstance(answer, ActorResponse) else answer.batch_id
    batch_id = getattr(error, "batch_id", None)
    return batch_id if isinstance(batch_id, str) else None


def _error_json(error: ActorError | None, reason: str | None) -> dict[str, object] | None:
    if error is None and reason is None:
        return None
    kind = type(error).__name__ if error is not None else "RunLimit"
    return {"type": kind, "message": str(error) if error is not None else reason, "reason": reason}
