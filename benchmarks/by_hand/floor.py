"""What every floor shares: the least a durable client must keep of one batch, in SQLite. Every request's intent
inserted in one transaction before the create; each results line appended as received, as the API sent it, in
transactions of `RESULTS_PER_TRANSACTION`, before the answers of those lines are handed out. JSON by orjson (a lowtide
dependency).

A provider's floor (`<provider>_batches.py`, or `openai_shaped.floor_batch`) makes the same API calls as its SDK by
hand, and reads its results file itself, line by line from the bytes, each line decoded once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import orjson

RESULTS_PER_TRANSACTION = 2000
"""Results are appended in transactions of this many, as lowtide's first chunk holds."""

dumps = orjson.dumps
loads = orjson.loads


def kept(encoded: bytes) -> bytes:
    """A copy of `orjson.dumps`'s output to keep: each output holds an allocation of about 4 KB however short the JSON
    (10,000 kept: 40 MiB of peak memory), and a copy holds only its length."""
    return memoryview(encoded).tobytes()


class FloorLedger:
    """The floor's durable record: intents before the create, results lines as they come, answers handed out only
    once their lines are stored."""

    def __init__(self, path: Path) -> None:
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

    def __enter__(self) -> FloorLedger:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._connection.close()

    def intents(self, rows: Iterable[tuple[str, bytes]]) -> None:
        """Every request's intent, `(custom_id, params JSON)`, in one transaction: before the create."""
        with self._connection:
            self._connection.execute("BEGIN")
            self._connection.executemany("INSERT INTO intents (custom_id, params) VALUES (?, ?)", rows)

    def created(self, batch_id: str) -> None:
        """The API's batch id, right after the create (one row per batch would do)."""
        self._connection.execute("UPDATE intents SET batch_id = ?", (batch_id,))

    def result(self, custom_id: str, line: bytes, text: str | None) -> None:
        """One results line as received, and its answer's text (None: no answer); a transaction every
        `RESULTS_PER_TRANSACTION` lines."""
        self._rows.append((custom_id, line))
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
        self._rows.clear()
        self._answers.clear()
