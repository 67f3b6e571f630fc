"""The requests of a SQLite ledger: claims of new keys, take-overs of a dead owner's, requeues, and reading them back
(a request's state comes from `request_view`, which derives it from its latest result)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal
from operator import attrgetter
from typing import Any, TypeVar

from lowtide.ledger.records import (
    KeyAnswer,
    KeyState,
    NewRequest,
    RequestRecord,
    RequestState,
    key_answer,
    request_record,
    request_state,
    stored_json,
)
from lowtide.ledger.sqlite.connection import SqliteFile, chunks
from lowtide.ledger.sqlite.schema import REQUEST_BATCH, latest_membership


class RequestRows(SqliteFile):
    """The requests table of a ledger file."""

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
            # In key order (a stable sort: of a key given twice the first still counts), for the key's index: see
            # `record_intent`.
            for chunk in chunks(sorted(requests, key=_key)):
                if _all_new(db, chunk, inserted, owner=owner, until=until, now=now):
                    continue
                keys = list({r.key: None for r in chunk if r.key not in inserted})
                there = {
                    row[0]
                    for row in db.execute(f"SELECT key FROM requests WHERE key IN ({', '.join('?' * len(keys))})", keys)
                }
                firsts, rows = _new_rows(chunk, there.union(inserted), owner=owner, until=until, now=now)
                inserted.update(firsts)
                db.executemany(_INSERT, rows)
                _traces(db, [r for r in chunk if r.trace and r.key not in there])
                if there:
                    known.extend(self._requests_by_key(db, sorted(there)))
        return inserted, known

    def take_over_many(
        self, keys: Sequence[tuple[str, str | None]], *, owner: str, until: float, now: float
    ) -> set[str]:
        """`take_over` of each (key, dead owner), in order, in one transaction; the keys taken."""
        taken: set[str] = set()
        with self._transaction() as db:
            for key, dead_owner in keys:
                cursor = db.execute(
                    "UPDATE requests SET owner = ?, owner_until = ?, updated_at = ?"
                    " WHERE key = ? AND (SELECT state FROM request_view WHERE key = ?) = 'pending'"
                    " AND (owner IS NULL OR owner = ? OR owner_until < ? OR owner = ?)",
                    (owner, until, now, key, key, owner, now, dead_owner),
                )
                if cursor.rowcount == 1:
                    taken.add(key)
        return taken

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        """Put requests back to pending (for a retry in a later batch), owned by `owner`."""
        with self._transaction() as db:
            for chunk in chunks(list(keys)):
                # It leaves the batch it is in (if any), and the attempt it made there counts.
                db.executemany(
                    f"UPDATE requests SET state = 'pending', owner = ?, owner_until = ?, updated_at = ?,"
                    f" attempts = attempts + ({_LATEST} > left_seq), left_seq = MAX(left_seq, {_LATEST}) WHERE key = ?",
                    [(owner, until, now, key) for key in chunk],
                )

    def committed_usd(self, actor: str) -> Decimal:
        """What `actor` has spent (stored costs) plus the worst case of its requests not yet answered."""
        with self._reading():
            spent, outstanding = self._db.execute(
                "SELECT COALESCE(SUM(CAST(cost_usd AS REAL)), 0),"
                " COALESCE(SUM(CASE WHEN state IN ('pending', 'submitting', 'waiting-on-batch')"
                " THEN worst_case_usd ELSE 0 END), 0) FROM request_view WHERE actor = ?",
                (actor,),
            ).fetchone()
        return Decimal(str(spent)) + Decimal(str(outstanding))

    def request(self, key: str) -> RequestRecord | None:
        with self._reading():
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
        with self._reading():
            rows = self._db.execute(f"SELECT * FROM request_view{clauses} ORDER BY created_at, key", args).fetchall()
        return [request_record(row) for row in rows]

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        """The records of `keys` the ledger knows, in the order given."""
        with self._reading():
            return self._requests_by_key(self._db, keys)

    def states_of(self, keys: Sequence[str]) -> list[KeyState]:
        """The state, batch and owner of each of `keys` the ledger knows, in the order given (`request_view`'s columns
        for them alone: no parameters nor answer read)."""

        def states(chunk: Sequence[str]) -> Iterator[tuple[str, KeyState]]:
            query = (
                "SELECT key, state, batch_id, owner, owner_until FROM request_view"
                f" WHERE key IN ({', '.join('?' * len(chunk))})"
            )
            for key, state, batch_id, owner, until in self._db.execute(query, chunk):
                yield key, KeyState(key, request_state(state), batch_id, owner, until)

        with self._reading():
            return _in_key_order(keys, states)

    def members_among(self, batch_id: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` were members of `batch_id`."""
        with self._reading():
            return _members_among(self._db, batch_id, keys)

    def answers_of(self, batch_id: str, keys: Sequence[str]) -> list[KeyAnswer]:
        """The latest result from `batch_id` of each of `keys` that has one, in the order given (`results_batch_key`:
        the batch's region of the results, no request read)."""

        def answers(chunk: Sequence[str]) -> Iterator[tuple[str, KeyAnswer]]:
            # SQLite reads the other columns from the row that gave MAX(seq): the key's latest result.
            cursor.execute(
                "SELECT key, state, response, error, MAX(seq) FROM results"
                f" WHERE batch_id = ? AND key IN ({', '.join('?' * len(chunk))}) GROUP BY key",
                (batch_id, *chunk),
            )
            for key, state, response, error, _ in cursor:
                yield key, key_answer(key, state, response, error)

        with self._reading():
            cursor = self._db.cursor()
            cursor.row_factory = None
            return _in_key_order(keys, answers)

    def traces_of(self, keys: Sequence[str]) -> dict[str, str]:
        """The trace contexts stored with `keys` (schema 8), of those that have one."""
        found: dict[str, str] = {}
        with self._reading():
            for chunk in chunks(keys, size=500):
                query = f"SELECT key, context FROM request_traces WHERE key IN ({', '.join('?' * len(chunk))})"
                found.update((str(key), str(context)) for key, context in self._db.execute(query, chunk))
        return found

    def _requests_by_key(self, db: sqlite3.Connection, keys: Sequence[str]) -> list[RequestRecord]:
        def records(chunk: Sequence[str]) -> Iterator[tuple[str, RequestRecord]]:
            rows = db.execute(f"SELECT * FROM request_view WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
            for row in rows:
                record = request_record(row)
                yield record.key, record

        return _in_key_order(keys, records)


T = TypeVar("T")


def _members_among(db: sqlite3.Connection, batch_id: str, keys: Sequence[str]) -> set[str]:
    """`LedgerStore.members_among`: the requests of `keys` whose batch (`REQUEST_BATCH`: the latest membership, unless
    they left it) is `batch_id`."""
    found: set[str] = set()
    for chunk in chunks(keys, size=500):
        query = (
            f"SELECT r.key FROM requests r {REQUEST_BATCH}"
            f" WHERE r.key IN ({', '.join('?' * len(chunk))}) AND m.batch_id = ?"
        )
        found.update(str(key) for (key,) in db.execute(query, (*chunk, batch_id)))
    return found


def _in_key_order(keys: Sequence[str], read: Callable[[Sequence[str]], Iterable[tuple[str, T]]]) -> list[T]:
    """What `read` finds of each of `keys` (a call a 500 keys, giving keys and values), in the order given; a key it
    finds nothing of left out."""
    found: dict[str, T] = {}
    for chunk in chunks(keys, size=500):
        found.update(read(chunk))
    return [found[key] for key in keys if key in found]


_key = attrgetter("key")
_LATEST = latest_membership("requests.key")
"""The latest membership of the request an UPDATE of `requests` is at."""


def _filters(
    *, batch_id: str | None, actor: str | None, states: Iterable[RequestState] | None
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if batch_id is not None:  # its members first: the view finds each one's batch
        clauses.append("key IN (SELECT key FROM batch_members WHERE batch_id = ?) AND batch_id = ?")
        args.extend((batch_id, batch_id))
    if actor is not None:
        clauses.append("actor = ?")
        args.append(actor)
    if states is not None:
        wanted = [s.value for s in states]
        clauses.append(f"state IN ({', '.join('?' * len(wanted))})")
        args.extend(wanted)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


_INSERT = (
    "INSERT INTO requests (key, custom_id, actor, model, params, params_bytes, state, max_attempts, worst_case_usd,"
    " created_at, updated_at, owner, owner_until) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)"
)


def _all_new(
    db: sqlite3.Connection,
    chunk: Sequence[NewRequest],
    inserted: dict[str, str],
    *,
    owner: str,
    until: float,
    now: float,
) -> bool:
    """Insert a chunk of `claim_new`'s, as what a claim of new calls almost always is: none of its keys known, so none
    looked up first (the insert probes the key's index anyway). True when every key was new, and each is added to
    `inserted`; False when one was there, and then nothing of the chunk is (a savepoint undoes it), for the caller
    to look its keys up first."""
    firsts, rows = _new_rows(chunk, inserted.keys(), owner=owner, until=until, now=now)
    db.execute("SAVEPOINT claim_new")
    try:
        db.executemany(_INSERT, rows)
    except sqlite3.IntegrityError:  # a key the ledger has (its primary key): that chunk is looked up first
        db.execute("ROLLBACK TO claim_new")
        db.execute("RELEASE claim_new")
        return False
    db.execute("RELEASE claim_new")
    inserted.update(firsts)
    _traces(db, [r for r in chunk if r.trace])
    return True


def _new_rows(
    chunk: Sequence[NewRequest], leave: AbstractSet[str], *, owner: str, until: float, now: float
) -> tuple[dict[str, str], list[tuple[Any, ...]]]:
    """The `requests` rows (`_INSERT`'s) of a chunk's claims, but those whose key is in `leave` and a key's second:
    with each key's params JSON as stored."""
    firsts: dict[str, str] = {}
    rows: list[tuple[Any, ...]] = []
    for r in chunk:
        if r.key in firsts or r.key in leave:
            continue
        firsts[r.key] = params = r.params if isinstance(r.params, str) else stored_json(r.params)
        worst = float(r.worst_case_usd) if r.worst_case_usd is not None else None
        rows.append(
            (r.key, r.custom_id, r.actor, r.model, params, len(params), r.max_attempts, worst, now, now, owner, until)
        )
    return firsts, rows


def _traces(db: sqlite3.Connection, claims: Sequence[NewRequest]) -> None:
    """The trace contexts of claims just inserted, stored with them (telemetry on)."""
    if claims:
        db.executemany(
            "INSERT OR IGNORE INTO request_traces (key, context) VALUES (?, ?)", [(r.key, r.trace) for r in claims]
        )
