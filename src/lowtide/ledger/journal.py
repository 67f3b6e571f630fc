"""`AgentJournal`: what a durable agent run asks of its ledger (its run and the journal of its turns and steps),
whichever store keeps it; a store's `agent_journal` (`roles.Journals`) gives its own. Every change is a guarded one:
the store reads the row and writes what a pure function of it says (`change_run`, `change_entry`) in one
transaction, so that the rules (who holds the lease, which state may follow which) are written once, in
`lowtide.agents`, and of two processes changing a run at once only one sees the row it changed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry

__all__ = ["AgentJournal", "EntryAt", "EntryChange", "RunChange"]

RunChange = Callable[[AgentRun], AgentRun | None]
"""Given the run as stored, the run to store instead, or None to leave it (the change does not apply)."""
EntryChange = Callable[[JournalEntry], JournalEntry | None]
EntryAt = tuple[str, int, EntryChange]
"""A change of the entry at (run id, position)."""


class AgentJournal(Protocol):
    """The agent runs a ledger keeps, and their journals."""

    def open_run(self, run: AgentRun) -> tuple[AgentRun, bool]:
        """Record `run` unless its id is taken: (the run stored under the id, whether this call recorded it)."""
        ...

    def agent_run(self, run_id: str) -> AgentRun | None: ...

    def agent_runs(self, states: Iterable[AgentState] | None = None) -> list[AgentRun]:
        """The runs (in those states), oldest first."""
        ...

    def change_run(self, run_id: str, change: RunChange) -> AgentRun | None:
        """Apply `change` to the run as stored, in one transaction: the run written, or None (no such run, or the
        change declined)."""
        ...

    def change_runs(self, changes: Mapping[str, RunChange]) -> dict[str, AgentRun | None]:
        """`change_run` for many runs (by id) in one transaction: what a `resume` pass writes for all the runs it
        advances, rather than a transaction a run. Each id to the run written, or None."""
        ...

    def entries(self, run_id: str) -> list[JournalEntry]:
        """The run's journal, by position."""
        ...

    def entries_of(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        """`entries` of many runs read together: what a `resume` pass replays, a read a pass rather than one a run.
        Each id asked to its journal, by position (empty for a run with none)."""
        ...

    def put_entry(self, entry: JournalEntry) -> JournalEntry:
        """Record `entry` (an intent) unless its run already has one at its position: the entry stored there."""
        ...

    def change_entry(self, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
        """`change_run` for the entry at `position`."""
        ...

    def write_entries(
        self, intents: Sequence[JournalEntry], changes: Sequence[EntryAt]
    ) -> tuple[list[JournalEntry], list[JournalEntry | None]]:
        """`put_entry` of each intent and `change_entry` of each change, in one transaction: what the runs of a
        `resume` pass write at one moment, rather than a transaction each. Their answers, in the order given."""
        ...

    def runs_of(self, run_ids: Sequence[str]) -> dict[str, AgentRun]:
        """The runs of those ids the ledger has, read together (whether any was stopped meanwhile)."""
        ...
