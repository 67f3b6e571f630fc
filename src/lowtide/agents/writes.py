"""`JournalWrites`: the journal writes and stop checks of the runs advancing together (a `resume` pass), made in one
transaction (and one read) for every run that asks in the same moment, rather than one each. Each run still waits
for its own write to be stored before it goes on (an intent before its step runs, a result before the next), so what
a kill at any point leaves is what a write of its own would have left."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from lowtide.agents.asking import ask
from lowtide.ledger.journal import EntryAt, EntryChange
from lowtide.ledger.journal_records import AgentState, JournalEntry

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore

__all__ = ["JournalWrites"]

T = TypeVar("T")


@dataclass
class _Asked:
    """What the runs asked in one moment, with who waits for each answer."""

    intents: list[tuple[JournalEntry, asyncio.Future[JournalEntry]]] = field(
        default_factory=list[tuple[JournalEntry, asyncio.Future[JournalEntry]]]
    )
    changes: list[tuple[EntryAt, asyncio.Future[JournalEntry | None]]] = field(
        default_factory=list[tuple[EntryAt, asyncio.Future[JournalEntry | None]]]
    )
    stops: list[tuple[str, asyncio.Future[bool]]] = field(default_factory=list[tuple[str, asyncio.Future[bool]]])


class JournalWrites:
    """The journal of one store, written for the runs that share this object (each awaits its own answer)."""

    def __init__(self, store: LedgerStore) -> None:
        self._store = store
        self._asked = _Asked()
        self._writing: asyncio.Task[None] | None = None

    async def put(self, entry: JournalEntry) -> JournalEntry:
        """`AgentJournal.put_entry`, with every other write asked in this moment."""
        answer: asyncio.Future[JournalEntry] = self._future(asyncio.get_running_loop().create_future())
        self._asked.intents.append((entry, answer))
        return await answer

    async def change(self, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
        """`AgentJournal.change_entry`, with every other write asked in this moment."""
        answer: asyncio.Future[JournalEntry | None] = self._future(asyncio.get_running_loop().create_future())
        self._asked.changes.append(((run_id, position, change), answer))
        return await answer

    async def stopped(self, run_id: str) -> bool:
        """Whether the run is `stopped` now (read after this moment's writes, with every other run asked)."""
        answer: asyncio.Future[bool] = self._future(asyncio.get_running_loop().create_future())
        self._asked.stops.append((run_id, answer))
        return await answer

    def _future(self, answer: asyncio.Future[T]) -> asyncio.Future[T]:
        """`answer`, with this moment's writer started (once)."""
        if self._writing is None:
            self._writing = asyncio.ensure_future(self._write())
        return answer

    async def _write(self) -> None:
        await asyncio.sleep(0)  # every run of this moment asks first
        asked, self._asked, self._writing = self._asked, _Asked(), None
        journal = self._store.agent_journal

        def write() -> tuple[list[JournalEntry], list[JournalEntry | None], set[str]]:
            put, changed = ([], [])
            if asked.intents or asked.changes:
                put, changed = journal.write_entries([e for e, _ in asked.intents], [c for c, _ in asked.changes])
            runs = journal.runs_of([run_id for run_id, _ in asked.stops]) if asked.stops else {}
            return put, changed, {run_id for run_id, run in runs.items() if run.state is AgentState.STOPPED}

        waiting = [a for _, a in asked.intents] + [a for _, a in asked.changes] + [a for _, a in asked.stops]
        try:
            put, changed, stopped = await ask(self._store, write)
        except BaseException as exc:  # each run gets the error its own write would have met
            for answer in waiting:
                if not answer.done():
                    answer.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        for (_, answer), entry in zip(asked.intents, put, strict=True):
            if not answer.done():
                answer.set_result(entry)
        for (_, answer), maybe in zip(asked.changes, changed, strict=True):
            if not answer.done():
                answer.set_result(maybe)
        for run_id, answer in asked.stops:
            if not answer.done():
                answer.set_result(run_id in stopped)
