"""`SqliteJournal`: the SQLite ledger's agent runs and their journals (`journal.AgentJournal`), in its `agent_runs`
and `agent_journal` tables; a guarded change reads and writes its row in one `BEGIN IMMEDIATE` transaction, so that
of two processes changing a run at once the second sees the first's change."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from lowtide.ledger.journal import EntryAt, EntryChange, RunChange
from lowtide.ledger.journal_records import (
    ENTRY_COLUMNS,
    RUN_COLUMNS,
    AgentRun,
    AgentState,
    JournalEntry,
    entry_of,
    entry_row,
    run_of,
    run_row,
)
from lowtide.ledger.sqlite.connection import SqliteFile

__all__ = ["SqliteJournal"]

_RUNS = ", ".join(RUN_COLUMNS)
_ENTRIES = ", ".join(ENTRY_COLUMNS)
_PUT_RUN = f"INSERT OR REPLACE INTO agent_runs ({_RUNS}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
_CHUNK = 500
"""Run ids read in one query (below SQLite's limit of bound parameters)."""
_PUT_ENTRY = f"INSERT OR REPLACE INTO agent_journal ({_ENTRIES}) VALUES ({', '.join('?' * len(ENTRY_COLUMNS))})"


class SqliteJournal:
    """The agent runs of one ledger file."""

    def __init__(self, ledger: SqliteFile) -> None:
        self.ledger = ledger

    def open_run(self, run: AgentRun) -> tuple[AgentRun, bool]:
        with self.ledger.transaction() as db:
            row = db.execute(f"SELECT {_RUNS} FROM agent_runs WHERE run_id = ?", (run.run_id,)).fetchone()
            if row is not None:
                return run_of(row), False
            db.execute(_PUT_RUN, run_row(run))
        return run, True

    def agent_run(self, run_id: str) -> AgentRun | None:
        rows = self.ledger.select(f"SELECT {_RUNS} FROM agent_runs WHERE run_id = ?", (run_id,))
        return run_of(rows[0]) if rows else None

    def agent_runs(self, states: Iterable[AgentState] | None = None) -> list[AgentRun]:
        wanted = [s.value for s in states] if states is not None else None
        where = f" WHERE state IN ({', '.join('?' * len(wanted))})" if wanted is not None else ""
        rows = self.ledger.select(f"SELECT {_RUNS} FROM agent_runs{where} ORDER BY created_at, run_id", wanted or ())
        return [run_of(row) for row in rows]

    def change_run(self, run_id: str, change: RunChange) -> AgentRun | None:
        with self.ledger.transaction() as db:
            row = db.execute(f"SELECT {_RUNS} FROM agent_runs WHERE run_id = ?", (run_id,)).fetchone()
            changed = change(run_of(row)) if row is not None else None
            if changed is not None:
                db.execute(_PUT_RUN, run_row(changed))
        return changed

    def change_runs(self, changes: Mapping[str, RunChange]) -> dict[str, AgentRun | None]:
        ids = list(changes)
        done: dict[str, AgentRun | None] = dict.fromkeys(ids)
        with self.ledger.transaction() as db:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                query = f"SELECT {_RUNS} FROM agent_runs WHERE run_id IN ({', '.join('?' * len(chunk))})"
                for row in db.execute(query, chunk).fetchall():
                    stored = run_of(row)
                    done[stored.run_id] = changes[stored.run_id](stored)
            db.executemany(_PUT_RUN, [run_row(run) for run in done.values() if run is not None])
        return done

    def entries(self, run_id: str) -> list[JournalEntry]:
        rows = self.ledger.select(f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id = ? ORDER BY position", (run_id,))
        return [entry_of(row) for row in rows]

    def entries_of(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        found: dict[str, list[JournalEntry]] = {run_id: [] for run_id in run_ids}
        ids = list(found)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            query = f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id IN ({', '.join('?' * len(chunk))})"
            for row in self.ledger.select(query + " ORDER BY run_id, position", chunk):
                entry = entry_of(row)
                found[entry.run_id].append(entry)
        return found

    def put_entry(self, entry: JournalEntry) -> JournalEntry:
        with self.ledger.transaction() as db:
            return _put_entry(db, entry)

    def change_entry(self, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
        with self.ledger.transaction() as db:
            return _change_entry(db, run_id, position, change)

    def write_entries(
        self, intents: Sequence[JournalEntry], changes: Sequence[EntryAt]
    ) -> tuple[list[JournalEntry], list[JournalEntry | None]]:
        with self.ledger.transaction() as db:
            put = [_put_entry(db, entry) for entry in intents]
            changed = [_change_entry(db, run_id, position, change) for run_id, position, change in changes]
        return put, changed

    def runs_of(self, run_ids: Sequence[str]) -> dict[str, AgentRun]:
        ids = list(dict.fromkeys(run_ids))
        found: dict[str, AgentRun] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            query = f"SELECT {_RUNS} FROM agent_runs WHERE run_id IN ({', '.join('?' * len(chunk))})"
            found.update((run.run_id, run) for run in map(run_of, self.ledger.select(query, chunk)))
        return found


def _put_entry(db: sqlite3.Connection, entry: JournalEntry) -> JournalEntry:
    row = db.execute(
        f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id = ? AND position = ?", (entry.run_id, entry.position)
    ).fetchone()
    if row is not None:
        return entry_of(row)
    db.execute(_PUT_ENTRY, entry_row(entry))
    return entry


def _change_entry(db: sqlite3.Connection, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
    row = db.execute(
        f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id = ? AND position = ?", (run_id, position)
    ).fetchone()
    changed = change(entry_of(row)) if row is not None else None
    if changed is not None:
        db.execute(_PUT_ENTRY, entry_row(changed))
    return changed
