"""`Ledger`: the ledger in one SQLite file (WAL), shared safely by several processes and threads.

Every state change is one short transaction (`BEGIN IMMEDIATE`), and bulk changes (thousands of requests joining
a batch, thousands of results arriving) are written in chunks with `executemany`, not one commit per row. Results
are appended (`results`), never updated in place. Nothing secret is stored: requests are kept as the provider's
request bodies, batches by the API's base URL.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lowtide.errors import ConfigurationError, LedgerError
from lowtide.ledger.checkpoint import INLINE_PAGES, Checkpointer
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.location import default_ledger_path
from lowtide.ledger.records import (
    COPIED,
    BatchRecord,
    BatchState,
    NewRequest,
    OutcomeRow,
    PendingRequest,
    RequestRecord,
    RequestState,
    batch_record,
    claimed_records,
    request_record,
    stored_json,
)
from lowtide.ledger.schema import migrate

if TYPE_CHECKING:
    from lowtide.ledger.quotas import LedgerQuotaStore
    from lowtide.ledger.runs import RunStore

__all__ = ["Ledger"]

T = TypeVar("T")

_CHUNK = 1000
_CACHE_KIB = 8192  # SQLite's page cache per connection (its default is 2 MiB)
_dumps = stored_json


class Ledger:
    """One SQLite ledger file; safe to share between processes, and between threads of one process."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_ledger_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Prompts and answers live here: the file is the user's alone. SQLite gives its -wal and -shm files the
            # main file's permissions, so the main file is made private before SQLite opens it.
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        except OSError as exc:
            raise LedgerError(
                f"The ledger cannot be opened at {self.path}: {exc.strerror or exc}. Choose a place that can be"
                " written (the actor's `ledger`, LOWTIDE_LEDGER, or --ledger)."
            ) from None
        for private in (self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))):
            if private.exists():
                os.chmod(private, 0o600)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        try:
            _wal(self._db)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=30000")
            # Results arrive in no particular order: a cache that holds a batch's rows spares rereading pages.
            self._db.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            migrate(self._db)
            # Commits never checkpoint inline: a thread of the ledger's own does (see `checkpoint`).
            self._db.execute("PRAGMA wal_autocheckpoint=0")
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ConfigurationError(
                f"{self.path} is not a lowtide ledger, or it is damaged ({exc}). Move it aside and start a new one;"
                " if it was a ledger, what it held can be recovered with `sqlite3 FILE .recover`.",
                field="ledger",
            ) from None
        except BaseException:
            self._db.close()
            raise
        self.checkpointer = Checkpointer(self.path, on_failure=self._checkpoint_inline)
        """What checkpoints the WAL, off the writers' path."""

    @property
    def location(self) -> str:
        return str(self.path)

    @property
    def run_store(self) -> RunStore:
        from lowtide.ledger.runs import RunStore  # runs.py builds on this module

        return RunStore(self)

    @property
    def quota_store(self) -> LedgerQuotaStore:
        from lowtide.ledger.quotas import LedgerQuotaStore  # quotas.py builds on this module

        return LedgerQuotaStore(self)

    @property
    def notices(self) -> None:
        """None: a process waiting on another's work reads the file every `watch_interval`."""
        return None

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        """Nothing: the processes sharing a file are on one host, where a dead pid tells (`batching.keys`)."""

    def let_go(self, owner: str) -> None:
        """Nothing (see `keep_alive`)."""

    def close(self) -> None:
        """Stop the checkpoint thread and close the connection (again: nothing)."""
        self.checkpointer.close()
        with self._lock:
            self._db.close()

    def _checkpoint_inline(self, _: Exception) -> None:
        with self._lock:
            self._db.execute(f"PRAGMA wal_autocheckpoint={INLINE_PAGES}")

    @contextmanager
    def _transaction(self) -> Generator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise LedgerError(f"The ledger {self.path} could not be written: {exc}.") from exc
        self.checkpointer.written()

    # requests

    def claim(self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float) -> list[RequestRecord]:
        """Insert the requests the ledger does not know (owned by `owner` until `until`); return every record.

        A key the ledger already has is left as it is: the caller attaches to it instead of sending it again.
        """
        inserted, known = self.claim_new(requests, owner=owner, until=until, now=now)
        return claimed_records(requests, inserted, known, owner=owner, until=until, now=now)

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        """`claim`, answered as (key -> params JSON as stored, for the keys inserted; records of the keys known).

        Nothing inserted is read back: the caller has it. Of a key given twice, the first request counts.
        The JSON is ASCII, so its length is its size in bytes.
        """
        inserted: dict[str, str] = {}
        known: list[RequestRecord] = []
        with self._transaction() as db:
            for chunk in _chunks(requests):
                keys = list({r.key: None for r in chunk if r.key not in inserted})
                there = {
                    row[0]
                    for row in db.execute(f"SELECT key FROM requests WHERE key IN ({', '.join('?' * len(keys))})", keys)
                }
                rows: list[tuple[Any, ...]] = []
                for r in chunk:
                    if r.key in there or r.key in inserted:
                        continue
                    inserted[r.key] = params = r.params if isinstance(r.params, str) else _dumps(r.params)
                    rows.append(
                        (
                            r.key,
                            r.custom_id,
                            r.actor,
                            r.model,
                            params,
                            len(params),
                            r.max_attempts,
                            float(r.worst_case_usd) if r.worst_case_usd is not None else None,
                            now,
                            now,
                            owner,
                            until,
                        )
                    )
                db.executemany(
                    "INSERT INTO requests (key, custom_id, actor, model, params, params_bytes, state,"
                    " max_attempts, worst_case_usd, created_at, updated_at, owner, owner_until)"
                    " VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                if there:
                    known.extend(self._requests_by_key(db, sorted(there)))
        return inserted, known

    def take_over(self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None) -> bool:
        """Own a pending request whose owner's lease ran out, or whose owner is `dead_owner` (a process seen dead,
        still holding it); True when this call took it."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE requests SET owner = ?, owner_until = ?, updated_at = ?"
                " WHERE key = ? AND (SELECT state FROM request_view WHERE key = ?) = 'pending'"
                " AND (owner IS NULL OR owner = ? OR owner_until < ? OR owner = ?)",
                (owner, until, now, key, key, owner, now, dead_owner),
            )
            return cursor.rowcount == 1

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        """Put requests back to pending (for a retry in a later batch), owned by `owner`."""
        with self._transaction() as db:
            for chunk in _chunks(list(keys)):
                db.executemany(
                    "UPDATE requests SET state = 'pending', batch_id = NULL, owner = ?, owner_until = ?,"
                    " updated_at = ? WHERE key = ?",
                    [(owner, until, now, key) for key in chunk],
                )

    def committed_usd(self, actor: str) -> Decimal:
        """What `actor` has spent (stored costs) plus the worst case of its requests not yet answered."""
        with self._lock:
            spent, outstanding = self._db.execute(
                "SELECT COALESCE(SUM(CAST(cost_usd AS REAL)), 0),"
                " COALESCE(SUM(CASE WHEN state IN ('pending', 'submitting', 'waiting-on-batch')"
                " THEN worst_case_usd ELSE 0 END), 0) FROM request_view WHERE actor = ?",
                (actor,),
            ).fetchone()
        return Decimal(str(spent)) + Decimal(str(outstanding))

    def request(self, key: str) -> RequestRecord | None:
        with self._lock:
            found = self._requests_by_key(self._db, [key])
        return found[0] if found else None

    def requests(
        self,
        *,
        batch_id: str | None = None,
        actor: str | None = None,
        states: Iterable[RequestState] | None = None,
    ) -> list[RequestRecord]:
        clauses, args = _filters(batch_id=batch_id, actor=actor, states=states)
        with self._lock:
            rows = self._db.execute(f"SELECT * FROM request_view{clauses} ORDER BY created_at, key", args).fetchall()
        return [request_record(row) for row in rows]

    # batches

    def record_intent(
        self,
        batch_id: str,
        *,
        provider: str,
        endpoint: str,
        members: Sequence[tuple[str, str]],
        request_bytes: int,
        owner: str,
        until: float,
        now: float,
    ) -> list[str]:
        """Before `create`: the batch and its members (key, custom_id), in one transaction; their keys. (No other
        process takes a request this one claimed: `take_pending` takes nothing here.)"""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO batches (id, provider, endpoint, state, request_count, request_bytes, intent_at,"
                " owner, owner_until) VALUES (?, ?, ?, 'intent', ?, ?, ?, ?, ?)",
                (batch_id, provider, endpoint, len(members), request_bytes, now, owner, until),
            )
            for chunk in _chunks(members):
                db.executemany(
                    "INSERT INTO batch_members (batch_id, key, custom_id) VALUES (?, ?, ?)",
                    [(batch_id, key, custom_id) for key, custom_id in chunk],
                )
            # One statement for every member: SQLite walks the members itself, with no binding per row.
            db.execute(
                "UPDATE requests SET state = 'submitting', batch_id = ?, attempts = attempts + 1,"
                " owner = NULL, owner_until = NULL, updated_at = ?"
                " WHERE key IN (SELECT key FROM batch_members WHERE batch_id = ?)",
                (batch_id, now, batch_id),
            )
        return [key for key, _ in members]

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        """Nothing: the processes sharing a file each batch the calls they claimed."""
        return []

    def record_submitted(
        self,
        batch_id: str,
        *,
        provider_batch_id: str,
        phase: str,
        request_id: str | None = None,
        now: float,
    ) -> None:
        """Right after `create` answered: the API's batch id. One row: every member of a batch the API has is
        waiting on it (`request_view`), with no write of its own."""
        with self._transaction() as db:
            db.execute(
                "UPDATE batches SET provider_batch_id = ?, state = 'waiting-on-batch', phase = ?,"
                " request_id = ?, submitted_at = COALESCE(submitted_at, ?) WHERE id = ?",
                (provider_batch_id, phase, request_id, now, batch_id),
            )

    def record_unknown(self, batch_id: str, *, note: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE batches SET state = 'unknown', note = ? WHERE id = ?", (note, batch_id))

    def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        """Reconciliation found no batch for an unknown create: mark the intent failed and put its requests back to
        pending (owned by `owner`), in one transaction, only if the intent is still unresolved (and, given
        `intent_at`, still the attempt the caller looked at: not resumed since); its keys, or None when it was
        resolved or resumed meanwhile (another process adopted a batch for it, or is creating it again)."""
        with self._transaction() as db:
            failed = db.execute(
                "UPDATE batches SET state = 'failed', note = ?"
                " WHERE id = ? AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')"
                " AND (? IS NULL OR intent_at = ?)",
                (note, batch_id, intent_at, intent_at),
            )
            if failed.rowcount != 1:
                return None
            keys = [str(row[0]) for row in db.execute("SELECT key FROM batch_members WHERE batch_id = ?", (batch_id,))]
            db.execute(
                "UPDATE requests SET state = 'pending', batch_id = NULL, attempts = MAX(attempts - 1, 0),"
                " owner = ?, owner_until = ?, updated_at = ? WHERE batch_id = ? AND state = ?",
                (owner, until, now, batch_id, RequestState.SUBMITTING.value),
            )
            return keys

    def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        """Take an unresolved intent over to create its batch again from what its create's steps made (an uploaded
        file): its attempt starts anew at `now` under `owner`, so that every other reconciler waits for this create
        and finds its batch. Only if it is still unresolved and still the attempt seen at `intent_at`; True if
        this caller won it."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE batches SET state = 'intent', intent_at = ?, owner = ?, owner_until = ?, note = NULL"
                " WHERE id = ? AND provider_batch_id IS NULL AND state IN ('intent', 'unknown') AND intent_at = ?",
                (now, owner, until, batch_id, intent_at),
            )
            return cursor.rowcount == 1

    def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        """The API refused the create: nothing was processed; the members go back to pending, attempt not counted."""
        with self._transaction() as db:
            db.execute("UPDATE batches SET state = 'failed', note = ? WHERE id = ?", (note, batch_id))
            db.execute(
                "UPDATE requests SET state = 'pending', batch_id = NULL, attempts = MAX(attempts - 1, 0),"
                " updated_at = ? WHERE batch_id = ? AND state = ?",
                (now, batch_id, RequestState.SUBMITTING.value),
            )

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        with self._transaction() as db:
            state = BatchState.ENDED.value if phase == "ended" else BatchState.WAITING.value
            db.execute(
                "UPDATE batches SET phase = ?, counts = ?, ended_at = ?,"
                " state = CASE WHEN state IN ('waiting-on-batch', 'ended') THEN ? ELSE state END WHERE id = ?",
                (phase, _dumps(counts) if counts is not None else None, ended_at, state, batch_id),
            )

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        """Append results of `batch_id`, in arrival order; returns how many.

        Nothing is updated in place: a request's outcome is its latest result for the batch it is in
        (`request_view`), so a result of a batch a request has since left is stored and never read as its state.
        """
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        batch_id,
                        o.key,
                        o.state.value,
                        o.response if isinstance(o.response, str) or o.response is None else _dumps(o.response),
                        _dumps(o.error) if o.error is not None else None,
                        str(o.cost_usd) if o.cost_usd is not None else None,
                        str(o.live_cost_usd) if o.live_cost_usd is not None else None,
                        now,
                    )
                    for o in outcomes
                ],
            )
        return len(outcomes)

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE batches SET state = ?, collected_at = ?, owner = NULL, owner_until = NULL WHERE id = ?",
                (state.value, now, batch_id),
            )

    def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        """Reconciliation found the API's batch for an unknown create; False if another record already holds that
        batch, or the intent is no longer unresolved."""
        with self._transaction() as db:
            taken = db.execute("SELECT 1 FROM batches WHERE provider_batch_id = ?", (provider_batch_id,)).fetchone()
            if taken:
                return False
            adopted = db.execute(
                "UPDATE batches SET provider_batch_id = ?, state = 'waiting-on-batch', submitted_at = ?,"
                " note = 'reconciled after an unknown create'"
                " WHERE id = ? AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')",
                (provider_batch_id, now, batch_id),
            )
            # Its members now wait on the batch the API has (`request_view`): nothing more to write.
            return adopted.rowcount == 1  # else resolved meanwhile (adopted by another process, or sent again)

    def claim_batch(
        self,
        batch_id: str,
        *,
        owner: str,
        until: float,
        now: float,
        force: bool = False,
        dead_owner: str | None = None,
    ) -> bool:
        """Take the right to work on a batch (create, reconcile, poll) unless another process holds an unexpired lease
        on it, or it is held by `dead_owner` (a process seen dead): then exactly one of the callers that saw it dead
        gets it. `force` takes it regardless."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE batches SET owner = ?, owner_until = ? WHERE id = ? AND (? OR owner IS NULL OR owner = ?"
                " OR owner = ? OR owner_until IS NULL OR owner_until < ?)",
                (owner, until, batch_id, force, owner, dead_owner, now),
            )
            return cursor.rowcount == 1

    def release_batch(self, batch_id: str, *, owner: str) -> None:
        """`owner` stops working on a batch it holds (it stopped polling it): any process may take it now."""
        with self._transaction() as db:
            db.execute(
                "UPDATE batches SET owner = NULL, owner_until = NULL WHERE id = ? AND owner = ?", (batch_id, owner)
            )

    def batch(self, batch_id: str) -> BatchRecord | None:
        """A batch by lowtide's id or the API's."""
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM batches WHERE id = ? OR provider_batch_id = ?", (batch_id, batch_id)
            ).fetchone()
        return batch_record(row) if row is not None else None

    def batches(self, *, states: Iterable[BatchState] | None = None) -> list[BatchRecord]:
        wanted = [s.value for s in states] if states is not None else None
        query = "SELECT * FROM batches"
        args: list[Any] = []
        if wanted is not None:
            query += f" WHERE state IN ({', '.join('?' * len(wanted))})"
            args.extend(wanted)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY intent_at, id", args).fetchall()
        return [batch_record(row) for row in rows]

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        """A step of a create made of several calls is done (an input file uploaded, say)."""
        with self._transaction() as db:
            row = db.execute("SELECT create_steps FROM batches WHERE id = ?", (batch_id,)).fetchone()
            steps: dict[str, str] = json.loads(row[0]) if row is not None and row[0] else {}
            steps[step] = value
            db.execute("UPDATE batches SET create_steps = ? WHERE id = ?", (_dumps(steps), batch_id))

    def create_steps(self, batch_id: str) -> dict[str, str]:
        """The steps of a create recorded so far, by name."""
        with self._lock:
            row = self._db.execute("SELECT create_steps FROM batches WHERE id = ?", (batch_id,)).fetchone()
        return dict(json.loads(row[0])) if row is not None and row[0] else {}

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        """Intents of `provider` at `endpoint` whose batch id is not known: creates in flight or unknown."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM batches WHERE state IN ('intent', 'unknown') AND provider_batch_id IS NULL"
                " AND provider = ? AND endpoint = ? ORDER BY intent_at, id",
                (provider, endpoint),
            ).fetchall()
        return [batch_record(row) for row in rows]

    def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        """Which of the batches `among` has a member with `custom_id` (a request is in one unresolved batch)."""
        if not among:
            return None
        marks = ", ".join("?" * len(among))
        with self._lock:
            row = self._db.execute(
                f"SELECT batch_id FROM batch_members WHERE custom_id = ? AND batch_id IN ({marks}) LIMIT 1",
                (custom_id, *among),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def members(self, batch_id: str) -> dict[str, str]:
        """custom_id -> key for every request sent in `batch_id`."""
        with self._lock:
            rows = self._db.execute(
                "SELECT custom_id, key FROM batch_members WHERE batch_id = ?", (batch_id,)
            ).fetchall()
        return {row["custom_id"]: row["key"] for row in rows}

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        """`members`, and key -> (attempts made, attempts allowed) for the requests now in `batch_id`.

        A batch may hold 100,000 requests: the two share their strings, and rows are read one by one.
        """
        members: dict[str, str] = {}
        attempts: dict[str, tuple[int, int]] = {}
        pairs: dict[tuple[int, int], tuple[int, int]] = {}
        with self._lock:
            cursor = self._db.cursor()
            cursor.row_factory = None
            cursor.execute(
                "SELECT m.custom_id, m.key, r.attempts, r.max_attempts, r.batch_id IS m.batch_id"
                " FROM batch_members m LEFT JOIN requests r ON r.key = m.key WHERE m.batch_id = ?",
                (batch_id,),
            )
            for custom_id, key, made, allowed, current in cursor:
                key = custom_id if key == custom_id else key
                members[custom_id] = key
                if current:
                    pair = (made, allowed)
                    attempts[key] = pairs.setdefault(pair, pair)
        return members, attempts

    # moving a ledger

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of `table` (a name of `records.COPIED`), its columns as `COPIED` lists them, in chunks."""
        columns = ", ".join(COPIED[table])
        with self._lock:
            cursor = self._db.cursor()
            cursor.row_factory = None
            cursor.execute(f"SELECT {columns} FROM {table} ORDER BY rowid")
            while chunk := cursor.fetchmany(_CHUNK):
                yield [tuple(row) for row in chunk]

    def load(self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]]) -> dict[str, int]:
        """Write another ledger's rows in one transaction, into a ledger that holds nothing yet."""
        written: dict[str, int] = {}
        with self._transaction() as db:
            held = [t for t in COPIED if db.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]]
            if held:
                raise ConfigurationError(
                    f"The ledger {self.path} is not empty (it holds {', '.join(held)}): a copy goes into a new ledger,"
                    " and nothing was written.",
                    field="ledger",
                )
            for table, chunks in tables:
                columns = COPIED[table]
                insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
                written[table] = 0
                for chunk in chunks:
                    db.executemany(insert, chunk)
                    written[table] += len(chunk)
        return written

    # For the stores built on this ledger's file (bulk runs: lowtide.ledger.runs).

    @contextmanager
    def transaction(self) -> Generator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction on the ledger's connection."""
        with self._transaction() as db:
            yield db

    def select(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        """The records of `keys` the ledger knows, in the order given."""
        with self._lock:
            return self._requests_by_key(self._db, keys)

    def _requests_by_key(self, db: sqlite3.Connection, keys: Sequence[str]) -> list[RequestRecord]:
        found: dict[str, RequestRecord] = {}
        for chunk in _chunks(keys, size=500):
            rows = db.execute(f"SELECT * FROM request_view WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
            for row in rows:
                record = request_record(row)
                found[record.key] = record
        return [found[key] for key in keys if key in found]


def _wal(db: sqlite3.Connection, *, patience: float = 30.0) -> None:
    """Put the file in WAL mode. Switching needs a moment alone with the file, and SQLite may answer "locked"
    at once, without waiting, while another process opens the same new ledger: so wait and ask again."""
    deadline = time.monotonic() + patience
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:  # pragma: no cover - a race between two first opens of a file
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _filters(
    *, batch_id: str | None, actor: str | None, states: Iterable[RequestState] | None
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if batch_id is not None:
        clauses.append("batch_id = ?")
        args.append(batch_id)
    if actor is not None:
        clauses.append("actor = ?")
        args.append(actor)
    if states is not None:
        wanted = [s.value for s in states]
        clauses.append(f"state IN ({', '.join('?' * len(wanted))})")
        args.extend(wanted)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def _chunks(items: Sequence[T], size: int = _CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


_IMPLEMENTS: type[LedgerStore] = Ledger
"""The type checker's proof that `Ledger` is a `LedgerStore`."""
