"""`MemoryJournal`: the agent runs of a `MemoryLedger` and their journals (`journal.AgentJournal`), each change
under the ledger's one lock, with the meaning the SQLite store's tables give them (`sqlite/journal.py`)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence

from lowtide.ledger.journal import EntryAt, EntryChange, RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry

__all__ = ["MemoryJournal"]


class MemoryJournal:
    """The agent runs of one `MemoryLedger` (records are frozen: what is handed out is never changed in place)."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self.runs: dict[str, AgentRun] = {}
        self.journal: dict[tuple[str, int], JournalEntry] = {}

    def open_run(self, run: AgentRun) -> tuple[AgentRun, bool]:
        with self._lock:
            stored = self.runs.get(run.run_id)
            if stored is not None:
                return stored, False
            self.runs[run.run_id] = run
            return run, True

    def agent_run(self, run_id: str) -> AgentRun | None:
        with self._lock:
            return self.runs.get(run_id)

    def agent_runs(self, states: Iterable[AgentState] | None = None) -> list[AgentRun]:
        wanted = set(states) if states is not None else None
        with self._lock:
            runs = [r for r in self.runs.values() if wanted is None or r.state in wanted]
        return sorted(runs, key=lambda r: (r.created_at, r.run_id))

    def change_run(self, run_id: str, change: RunChange) -> AgentRun | None:
        with self._lock:
            stored = self.runs.get(run_id)
            changed = change(stored) if stored is not None else None
            if changed is not None:
                self.runs[run_id] = changed
            return changed

    def change_runs(self, changes: Mapping[str, RunChange]) -> dict[str, AgentRun | None]:
        with self._lock:
            return {run_id: self.change_run(run_id, change) for run_id, change in changes.items()}

    def entries(self, run_id: str) -> list[JournalEntry]:
        with self._lock:
            found = [e for (r, _), e in self.journal.items() if r == run_id]
        return sorted(found, key=lambda e: e.position)

    def entries_of(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        found: dict[str, list[JournalEntry]] = {run_id: [] for run_id in run_ids}
        with self._lock:
            for (run_id, _), entry in self.journal.items():
                if run_id in found:
                    found[run_id].append(entry)
        for entries in found.values():
            entries.sort(key=lambda e: e.position)
        return found

    def put_entry(self, entry: JournalEntry) -> JournalEntry:
        with self._lock:
            return self.journal.setdefault((entry.run_id, entry.position), entry)

    def change_entry(self, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
        with self._lock:
            stored = self.journal.get((run_id, position))
            changed = change(stored) if stored is not None else None
            if changed is not None:
                self.journal[(run_id, position)] = changed
            return changed

    def write_entries(
        self, intents: Sequence[JournalEntry], changes: Sequence[EntryAt]
    ) -> tuple[list[JournalEntry], list[JournalEntry | None]]:
        with self._lock:
            put = [self.put_entry(entry) for entry in intents]
            return put, [self.change_entry(run_id, position, change) for run_id, position, change in changes]

    def runs_of(self, run_ids: Sequence[str]) -> dict[str, AgentRun]:
        with self._lock:
            return {run_id: run for run_id in run_ids if (run := self.runs.get(run_id)) is not None}
