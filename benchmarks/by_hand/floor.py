"""What every floor shares: the least a durable client must keep of one batch, in SQLite. Every request's intent
inserted in one transaction before the create; each results line appended as received, as the API sent it, in
transactions of `RESULTS_PER_TRANSACTION`, before the answers of those lines are handed out. JSON by orjson (a lowtide
dependency).

A provider's floor (`<provider>_batches.py`, or `openai_shaped.floor_batch`) makes the same API calls as its SDK by
hand, and reads its results file itself, line by line from the bytes, each line decoded once.

Given a `Respond` (the `floor-responses` contender), the floor also does what lowtide's contract asks of every answer
and nothing else: each line made into what the caller is handed (an `ActorResponse`, priced, or the request's
`ActorError`) by the provider's own codec, and every response kept until the run returns, as `run_many` returns
them. Its lines are still stored as the API sent them: the least a durable client handing back lowtide's responses
must do. Like lowtide's engine, it keeps what it hands out from the collector's full passes (`gc.freeze` after each
transaction's answers, given back at the end): a client keeping thousands of responses alive would pay for a dozen of
them otherwise."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

RESULTS_PER_TRANSACTION = 2000
"""Results are appended in transactions of this many, as lowtide's first chunk holds."""

dumps = orjson.dumps
loads = orjson.loads

Respond = Callable[[dict[str, Any], str], object]
"""A results line (decoded) and the API's batch id, to the outcome lowtide's contract hands back for it: a response
whose `text` is the answer's, or an error (no `text`)."""


def kept(encoded: bytes) -> bytes:
    """A copy of `orjson.dumps`'s output to keep: each output holds an allocation of about 4 KB however short the JSON
    (10,000 kept: 40 MiB of peak memory), and a copy holds only its length."""
    return memoryview(encoded).tobytes()


class FloorLedger:
    """The floor's durable record: intents before the create, results lines as they come, answers handed out only
    once their lines are stored."""

    def __init__(self, path: Path, respond: Respond | None = None) -> None:
        self._respond = respond
        self._batch_id = ""
        self._connection = sqlite3.connect(path, isolation_level=None)
        self._connection.executescript(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
            " CREATE TABLE intents (custom_id TEXT PRIMARY KEY, params BLOB NOT NULL, batch_id TEXT);"
            " CREATE TABLE results (custom_id TEXT NOT NULL, line BLOB NOT NULL);"
        )
        self._rows: list[tuple[str, bytes]] = []
        self._answers: list[tuple[str, str]] = []
        self.texts: dict[str, str] = {}
        """The answers handed out: each only after its line was stored."""
        self.responses: list[object] = []
        """With `respond`: every outcome handed out, kept (as `run_many` returns them all)."""
        self._outcomes: list[object] = []

    @property
    def responding(self) -> bool:
        """Whether each line is made into its outcome (`floor-responses`), whose text is handed out."""
        return self._respond is not None

    def __enter__(self) -> FloorLedger:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._connection.close()
        if self._respond is not None:
            gc.unfreeze()

    def intents(self, rows: Iterable[tuple[str, bytes]]) -> None:
        """Every request's intent, `(custom_id, params JSON)`, in one transaction: before the create."""
        with self._connection:
            self._connection.execute("BEGIN")
            self._connection.executemany("INSERT INTO intents (custom_id, params) VALUES (?, ?)", rows)

    def created(self, batch_id: str) -> None:
        """The API's batch id, right after the create (one row per batch would do)."""
        self._connection.execute("UPDATE intents SET batch_id = ?", (batch_id,))
        self._batch_id = batch_id

    def result(self, custom_id: str, line: bytes, text: str | None, decoded: dict[str, Any] | None = None) -> None:
        """One results line as received, and its answer's text (None: no answer); a transaction every
        `RESULTS_PER_TRANSACTION` lines. With `respond`, the line (`decoded`) is made into its outcome, whose text
        is the one handed out."""
        self._rows.append((custom_id, line))
        if self._respond is not None:
            assert decoded is not None, "a floor given `respond` passes each line decoded"
            outcome = self._respond(decoded, self._batch_id)
            self._outcomes.append(outcome)
            text = getattr(outcome, "text", None)
        if text is not None:
            self._answers.append((custom_id, text))
        if len(self._rows) >= RESULTS_PER_TRANSACTION:
            self.flush()

    def flush(self) -> None:
        """Append the lines in hand in one transaction, then hand their answers out."""
        if self._rows:
            with self._connection:
                self._connection.execute("BEGIN")
                self._connection.executemany("INSERT INTO results (custom_id, line) VALUES (?, ?)", self._rows)
        self.texts.update(self._answers)
        if self._outcomes:
            self.responses.extend(self._outcomes)
            self._outcomes.clear()
            gc.freeze()
        self._rows.clear()
        self._answers.clear()


async def store_lines(
    durable: FloorLedger, lines: AsyncIterator[str], text_of: Callable[[dict[str, Any]], str | None]
) -> None:
    """A results file read as text lines: each decoded once and appended (`durable.result`) under its `custom_id`,
    with its answer's text (`text_of`; None: no answer) unless the floor makes each line into its outcome; the last
    lines stored."""
    responding = durable.responding
    async for text in lines:
        if text:
            line = loads(text)
            durable.result(line["custom_id"], text.encode(), None if responding else text_of(line), line)
    durable.flush()
