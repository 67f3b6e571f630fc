"""`JournalWrites`: the journal writes and stop checks of the runs advancing together (a `resume` pass), made in one
transaction (and one read) for every run that asks in the same moment, rather than one each. Each run still waits
for its own write to be stored before it goes on (an intent before its step runs, a result before the next), so what
a kill at any point leaves is what a write of its own would have left."""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from lowtide.agents.asking import ask
from lowtide.ledger.journal import EntryAt, EntryChange, RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry

if TYPE_CHECKING:
    from lowtide.ledger.interface import LedgerStore

__all__ = ["JournalWrites"]

T = TypeVar("T")

_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, JournalWrites]] = weakref.WeakKeyDictionary()
"""Each event loop's writes, by store (checked to be the same store, not one at a reused address)."""


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
    ends: dict[str, tuple[RunChange, asyncio.Future[AgentRun | None]]] = field(
        default_factory=dict[str, tuple[RunChange, asyncio.Future[AgentRun | None]]]
    )


class JournalWrites:
    """The journal of one store, written for the runs that share this object (each awaits its own answer): those of
    one event loop share one (`of`), whether a `resume` pass advances them or `Agent.start` calls made at once."""

    @classmethod
    def of(cls, store: LedgerStore) -> JournalWrites:
        """The writes of `store` on the running event loop, shared by every run this loop advances on it."""
        shared = _SHARED.setdefault(asyncio.get_running_loop(), {})
        writes = shared.get(id(store))
        if writes is None or writes._store is not store:
            writes = shared[id(store)] = cls(store)
        return writes

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

    async def settle(self, run_id: str, position: int, change: EntryChange) -> bool:
        """`change` (a result or an error written), then whether the run is `stopped` now: both in the transaction of
        this moment's writes, not one each."""
        loop = asyncio.get_running_loop()
        changed: asyncio.Future[JournalEntry | None] = self._future(loop.create_future())
        stopped: asyncio.Future[bool] = loop.create_future()
        self._asked.changes.append(((run_id, position, change), changed))
        self._asked.stops.append((run_id, stopped))
        try:
            await changed
        except BaseException:
            if not stopped.done():
                stopped.cancel()
            elif not stopped.cancelled():
                stopped.exception()  # the write's own error: said once, by the write's answer
            raise
        return await stopped

    async def change_run(self, run_id: str, change: RunChange) -> AgentRun | None:
        """`AgentJournal.change_run` (what an advance came to), with every other run's asked in this moment."""
        if run_id in self._asked.ends:  # (one advance of a run at a time: never, but not two changes in one mapping)
            return await ask(self._store, lambda: self._store.agent_journal.change_run(run_id, change))
        answer: asyncio.Future[AgentRun | None] = self._future(asyncio.get_running_loop().create_future())
        self._asked.ends[run_id] = (change, answer)
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

        def write() -> tuple[list[JournalEntry], list[JournalEntry | None], dict[str, AgentRun | None], set[str]]:
            put, changed = ([], [])
            if asked.intents or asked.changes:
                put, changed = journal.write_entries([e for e, _ in asked.intents], [c for c, _ in asked.changes])
            ended = journal.change_runs({run_id: c for run_id, (c, _) in asked.ends.items()}) if asked.ends else {}
            runs = journal.runs_of([run_id for run_id, _ in asked.stops]) if asked.stops else {}
            return put, changed, ended, {run_id for run_id, run in runs.items() if run.state is AgentState.STOPPED}

        waiting = [a for _, a in asked.intents] + [a for _, a in asked.changes] + [a for _, a in asked.stops]
        waiting += [a for _, a in asked.ends.values()]
        try:
            put, changed, ended, stopped = await ask(self._store, write)
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
        for run_id, (_, answer) in asked.ends.items():
            if not answer.done():
                answer.set_result(ended[run_id])
        for run_id, answer in asked.stops:
            if not answer.done():
                answer.set_result(run_id in stopped)
