"""`PostgresJournal`: a PostgreSQL ledger's agent runs and their journals (`journal.AgentJournal`), each operation
written once (`steps.Op`). A guarded change reads its row `FOR UPDATE` and writes it in the same transaction, so that
of processes on several hosts changing a run at once each sees the change before its own; a run id recorded on two
hosts at once is recorded by one (`ON CONFLICT DO NOTHING`), the other handed that run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import LiteralString, TypeVar

from lowtide.ledger.journal import EntryAt, EntryChange, RunChange
from lowtide.ledger.journal_records import AgentRun, AgentState, JournalEntry, entry_of, entry_row, run_of, run_row
from lowtide.ledger.postgres.pool import SyncPool
from lowtide.ledger.postgres.steps import Op, Sql, run

__all__ = ["PostgresJournal"]

T = TypeVar("T")

_RUNS: LiteralString = (
    "run_id, reference, input, state, result, error, cost_usd, awaiting, holder, held_until, created_at, updated_at"
)
_ENTRIES: LiteralString = (
    "run_id, position, kind, name, fingerprint, key, result, error, cost_usd, idempotent, retry, attempts,"
    " started_at, ended_at"
)
_INSERT_RUN: LiteralString = (
    f"INSERT INTO agent_runs ({_RUNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (run_id) DO NOTHING"
)
_UPDATE_RUN: LiteralString = (
    "UPDATE agent_runs SET reference = %s, input = %s, state = %s, result = %s, error = %s, cost_usd = %s,"
    " awaiting = %s, holder = %s, held_until = %s, created_at = %s, updated_at = %s WHERE run_id = %s"
)
_INSERT_ENTRY: LiteralString = (
    f"INSERT INTO agent_journal ({_ENTRIES}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (run_id, position) DO NOTHING"
)
_UPDATE_ENTRY: LiteralString = (
    "UPDATE agent_journal SET kind = %s, name = %s, fingerprint = %s, key = %s, result = %s, error = %s,"
    " cost_usd = %s, idempotent = %s, retry = %s, attempts = %s, started_at = %s, ended_at = %s"
    " WHERE run_id = %s AND position = %s"
)


class PostgresJournal:
    """The agent runs of one PostgreSQL ledger."""

    def __init__(self, pool: SyncPool) -> None:
        self._pool = pool

    def _do(self, doing: str, make: Callable[[], Op[T]], *, transaction: bool = True) -> T:
        return run(self._pool, doing, make, transaction=transaction)

    def open_run(self, run: AgentRun) -> tuple[AgentRun, bool]:
        return self._do("record an agent run", partial(_open_run, run))

    def agent_run(self, run_id: str) -> AgentRun | None:
        return self._do("read an agent run", partial(_agent_run, run_id, lock=False), transaction=False)

    def agent_runs(self, states: Iterable[AgentState] | None = None) -> list[AgentRun]:
        wanted = [s.value for s in states] if states is not None else None
        return self._do("read agent runs", partial(_agent_runs, wanted), transaction=False)

    def change_run(self, run_id: str, change: RunChange) -> AgentRun | None:
        return self._do("change an agent run", partial(_change_run, run_id, change))

    def change_runs(self, changes: Mapping[str, RunChange]) -> dict[str, AgentRun | None]:
        return self._do("change agent runs", partial(_change_runs, dict(changes)))

    def entries(self, run_id: str) -> list[JournalEntry]:
        return self._do("read an agent's journal", partial(_entries, run_id), transaction=False)

    def entries_of(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        return self._do("read agents' journals", partial(_entries_of, list(run_ids)), transaction=False)

    def put_entry(self, entry: JournalEntry) -> JournalEntry:
        return self._do("journal an agent's intent", partial(_put_entry, entry))

    def change_entry(self, run_id: str, position: int, change: EntryChange) -> JournalEntry | None:
        return self._do("journal an agent's result", partial(_change_entry, run_id, position, change))

    def write_entries(
        self, intents: Sequence[JournalEntry], changes: Sequence[EntryAt]
    ) -> tuple[list[JournalEntry], list[JournalEntry | None]]:
        return self._do("journal agents' intents and results", partial(_write_entries, list(intents), list(changes)))

    def runs_of(self, run_ids: Sequence[str]) -> dict[str, AgentRun]:
        return self._do("read agent runs", partial(_runs_of, list(dict.fromkeys(run_ids))), transaction=False)


def _agent_run(run_id: str, *, lock: bool) -> Op[AgentRun | None]:
    query: LiteralString = f"SELECT {_RUNS} FROM agent_runs WHERE run_id = %s" + (" FOR UPDATE" if lock else "")
    row = (yield Sql(query, (run_id,))).one()
    return run_of(row) if row is not None else None


def _agent_runs(states: list[str] | None) -> Op[list[AgentRun]]:
    if states is None:
        reply = yield Sql(f"SELECT {_RUNS} FROM agent_runs ORDER BY created_at, run_id")
    else:
        reply = yield Sql(
            f"SELECT {_RUNS} FROM agent_runs WHERE state = ANY(%s) ORDER BY created_at, run_id", (states,)
        )
    return [run_of(row) for row in reply.rows]


def _open_run(run: AgentRun) -> Op[tuple[AgentRun, bool]]:
    inserted = (yield Sql(_INSERT_RUN, run_row(run))).rowcount
    if inserted:
        return run, True
    stored = yield from _agent_run(run.run_id, lock=False)
    assert stored is not None, run.run_id
    return stored, False


def _change_run(run_id: str, change: RunChange) -> Op[AgentRun | None]:
    stored = yield from _agent_run(run_id, lock=True)
    changed = change(stored) if stored is not None else None
    if changed is not None:
        row = run_row(changed)
        yield Sql(_UPDATE_RUN, (*row[1:], row[0]))
    return changed


def _change_runs(changes: dict[str, RunChange]) -> Op[dict[str, AgentRun | None]]:
    # Locked in the order of their ids, so that two hosts locking overlapping sets never wait on each other in a ring.
    reply = yield Sql(
        f"SELECT {_RUNS} FROM agent_runs WHERE run_id = ANY(%s) ORDER BY run_id FOR UPDATE", (sorted(changes),)
    )
    done: dict[str, AgentRun | None] = dict.fromkeys(changes)
    for stored in (run_of(row) for row in reply.rows):
        changed = done[stored.run_id] = changes[stored.run_id](stored)
        if changed is not None:
            row = run_row(changed)
            yield Sql(_UPDATE_RUN, (*row[1:], row[0]))
    return done


def _entry(run_id: str, position: int, *, lock: bool) -> Op[JournalEntry | None]:
    query: LiteralString = f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id = %s AND position = %s" + (
        " FOR UPDATE" if lock else ""
    )
    row = (yield Sql(query, (run_id, position))).one()
    return entry_of(row) if row is not None else None


def _entries(run_id: str) -> Op[list[JournalEntry]]:
    reply = yield Sql(f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id = %s ORDER BY position", (run_id,))
    return [entry_of(row) for row in reply.rows]


def _entries_of(run_ids: list[str]) -> Op[dict[str, list[JournalEntry]]]:
    found: dict[str, list[JournalEntry]] = {run_id: [] for run_id in run_ids}
    reply = yield Sql(
        f"SELECT {_ENTRIES} FROM agent_journal WHERE run_id = ANY(%s) ORDER BY run_id, position", (list(found),)
    )
    for row in reply.rows:
        entry = entry_of(row)
        found[entry.run_id].append(entry)
    return found


def _put_entry(entry: JournalEntry) -> Op[JournalEntry]:
    if (yield Sql(_INSERT_ENTRY, entry_row(entry))).rowcount:
        return entry
    stored = yield from _entry(entry.run_id, entry.position, lock=False)
    assert stored is not None, entry
    return stored


def _runs_of(run_ids: list[str]) -> Op[dict[str, AgentRun]]:
    reply = yield Sql(f"SELECT {_RUNS} FROM agent_runs WHERE run_id = ANY(%s)", (run_ids,))
    return {run.run_id: run for run in map(run_of, reply.rows)}


def _write_entries(
    intents: list[JournalEntry], changes: list[EntryAt]
) -> Op[tuple[list[JournalEntry], list[JournalEntry | None]]]:
    put: list[JournalEntry] = []
    for entry in intents:
        put.append((yield from _put_entry(entry)))
    changed: list[JournalEntry | None] = []
    for run_id, position, change in changes:
        changed.append((yield from _change_entry(run_id, position, change)))
    return put, changed


def _change_entry(run_id: str, position: int, change: EntryChange) -> Op[JournalEntry | None]:
    stored = yield from _entry(run_id, position, lock=True)
    changed = change(stored) if stored is not None else None
    if changed is not None:
        row = entry_row(changed)
        yield Sql(_UPDATE_ENTRY, (*row[2:], row[0], row[1]))
    return changed
