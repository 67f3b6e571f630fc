"""`PostgresLedger`: the ledger in one PostgreSQL database, shared by lowtide processes on any number of hosts.

The same tables and the same meaning as the SQLite ledger (`lowtide.ledger.sqlite`): every state change is one short
transaction, bulk changes go as arrays in one statement per chunk (`unnest`), results are appended, and a request's
state is derived from its latest result (`request_view`). What differs is what many hosts need:

- **Races are settled by the server**, not by a file lock: a key claimed on two hosts at once is inserted by one
  (`ON CONFLICT DO NOTHING ... RETURNING`) and known to the other; a take-over or a batch's lease is one guarded
  `UPDATE`, which PostgreSQL re-checks on the row's newest version when another transaction changed it meanwhile, so
  exactly one contender wins.
- **Owners live by lease**: each process's heartbeat renews its row in `owners` (`keep_alive`); a record's
  `owner_until` is its owner's lease, so the work of a process that stopped renewing it (killed, or its host gone)
  is taken over once the lease runs out, by exactly one other process, on any host.
- **Changes are announced** on `NOTIFY lowtide_batches` (results stored, a batch's state changed), in the same
  transaction as the change: a process waiting on a batch another process polls is woken by the notice
  (`notices`), not by reading the database in a loop.

Nothing secret is stored: the URL's password is never written, shown or logged (`location` is the redacted URL).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from lowtide.errors import ConfigurationError, LedgerError
from lowtide.ledger.interface import LedgerStore
from lowtide.ledger.postgres.notices import Heartbeat, Listener
from lowtide.ledger.postgres.pool import SyncPool
from lowtide.ledger.postgres.schema import NOTICE_CHANNEL
from lowtide.ledger.postgres.url import redacted
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

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow
    from psycopg.sql import Composed

    from lowtide.ledger.postgres.quotas import PostgresQuotaStore
    from lowtide.ledger.postgres.runs import PostgresRunStore

__all__ = ["PostgresLedger"]

T = TypeVar("T")

_CHUNK = 1000
_GATHERING = 0x6C74  # the advisory lock space of gathering a scope's pending calls ("lt")
_NOTIFY: LiteralString = f"SELECT pg_notify('{NOTICE_CHANNEL}', %s)"
_BATCH: LiteralString = (
    "SELECT b.id, b.provider, b.endpoint, b.provider_batch_id, b.state, b.phase, b.request_count, b.request_bytes,"
    " b.intent_at, b.submitted_at, b.ended_at, b.collected_at, b.counts, b.request_id, b.owner,"
    " COALESCE(w.lease_until, b.owner_until) AS owner_until, b.note"
    " FROM batches b LEFT JOIN owners w ON w.owner = b.owner"
)
"""A batch as the ledger's readers see it: its owner's lease is the owner's heartbeat, when it keeps one."""
_LEASE_OVER: LiteralString = "COALESCE((SELECT lease_until FROM owners WHERE owner = {t}.owner), {t}.owner_until)"
"""How long the owner of a row of table `{t}` is still working on it."""


class PostgresLedger:
    """One PostgreSQL ledger; safe to share between threads of a process, and between processes on any hosts."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool = SyncPool(url)
        self._heartbeat = Heartbeat(self._pool)
        self._listener: Listener | None = None
        self._listener_lock = threading.Lock()
        self._quotas: PostgresQuotaStore | None = None

    @property
    def location(self) -> str:
        return redacted(self.url)

    @property
    def run_store(self) -> PostgresRunStore:
        from lowtide.ledger.postgres.runs import PostgresRunStore  # runs.py builds on this module

        return PostgresRunStore(self._pool)

    @property
    def quota_store(self) -> PostgresQuotaStore:
        from lowtide.ledger.postgres.quotas import PostgresQuotaStore

        if self._quotas is None:
            self._quotas = PostgresQuotaStore(self.url)
        return self._quotas

    def close(self) -> None:
        """End this process's leases (its work is free for others at once), stop listening, close the pool."""
        self._heartbeat.close()
        with self._listener_lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        self._pool.close()

    # owners

    def keep_alive(self, owner: str, *, lease_seconds: float, now: Callable[[], float]) -> None:
        self._heartbeat.keep(owner, lease_seconds=lease_seconds, now=now)

    def let_go(self, owner: str) -> None:
        self._heartbeat.let_go(owner)

    @property
    def notices(self) -> Listener:
        """Announcements of batches that changed, from every process on the database (`LISTEN`, one connection)."""
        with self._listener_lock:
            if self._listener is None:
                self._listener = Listener(self.url, NOTICE_CHANNEL)
            return self._listener

    # requests

    def claim(self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float) -> list[RequestRecord]:
        inserted, known = self.claim_new(requests, owner=owner, until=until, now=now)
        return claimed_records(requests, inserted, known, owner=owner, until=until, now=now)

    def claim_new(
        self, requests: Sequence[NewRequest], *, owner: str, until: float, now: float
    ) -> tuple[dict[str, str], list[RequestRecord]]:
        """`claim`, answered as (key -> params JSON as stored, for the keys inserted; records of the keys known).

        A key another host inserts at the same moment is inserted by one of the two: the other's insert waits for
        that transaction and finds the key known (`ON CONFLICT DO NOTHING`), then reads its record.
        """
        inserted: dict[str, str] = {}
        known: list[RequestRecord] = []
        given: set[str] = set()
        with self._pool.transaction("record the calls") as db:
            for chunk in _chunks(requests):
                rows: list[tuple[Any, ...]] = []
                params_of: dict[str, str] = {}
                for r in chunk:
                    if r.key in given:
                        continue  # of a key given twice, the first request counts
                    given.add(r.key)
                    params_of[r.key] = params = r.params if isinstance(r.params, str) else stored_json(r.params)
                    worst = float(r.worst_case_usd) if r.worst_case_usd is not None else None
                    rows.append(
                        (r.key, r.custom_id, r.actor, r.model, params, len(params), r.max_attempts, worst, r.scope)
                    )
                if not rows:
                    continue
                columns = list(zip(*rows, strict=True))
                cursor = db.execute(
                    "INSERT INTO requests (key, custom_id, actor, model, params, params_bytes, max_attempts,"
                    " worst_case_usd, scope, state, created_at, updated_at, owner, owner_until)"
                    " SELECT k, c, a, m, p, n, x, w, s, 'pending', %s, %s, %s, %s FROM unnest("
                    "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::int[],"
                    " %s::float8[], %s::text[]) AS t(k, c, a, m, p, n, x, w, s)"
                    " ON CONFLICT (key) DO NOTHING RETURNING key",
                    (now, now, owner, until, *(list(column) for column in columns)),
                )
                fresh = {str(row[0]) for row in cursor.fetchall()}
                for key in params_of:
                    if key in fresh:
                        inserted[key] = params_of[key]
                there = [key for key in params_of if key not in fresh]
                if there:
                    known.extend(_requests_by_key(db, sorted(there)))
        return inserted, known

    def take_over(self, key: str, *, owner: str, until: float, now: float, dead_owner: str | None = None) -> bool:
        with self._pool.transaction("take over a request") as db:
            cursor = db.execute(
                "UPDATE requests r SET owner = %(owner)s, owner_until = %(until)s, updated_at = %(now)s"
                " WHERE r.key = %(key)s AND (SELECT state FROM request_view WHERE key = %(key)s) = 'pending'"
                " AND (r.owner IS NULL OR r.owner = %(owner)s OR r.owner = %(dead)s"
                f" OR {_LEASE_OVER.format(t='r')} < %(now)s)",
                {"owner": owner, "until": until, "now": now, "key": key, "dead": dead_owner},
            )
            return cursor.rowcount == 1

    def requeue(self, keys: Iterable[str], *, owner: str, until: float, now: float) -> None:
        with self._pool.transaction("queue requests again") as db:
            for chunk in _chunks(list(keys)):
                db.execute(
                    "UPDATE requests SET state = 'pending', batch_id = NULL, owner = %s, owner_until = %s,"
                    " updated_at = %s WHERE key = ANY(%s)",
                    (owner, until, now, list(chunk)),
                )

    def committed_usd(self, actor: str) -> Decimal:
        with self._pool.connection("read what an actor committed") as db:
            row = db.execute(
                "SELECT COALESCE(SUM(cost_usd::numeric), 0),"
                " COALESCE(SUM(CASE WHEN state IN ('pending', 'submitting', 'waiting-on-batch')"
                " THEN worst_case_usd ELSE 0 END), 0) FROM request_view WHERE actor = %s",
                (actor,),
            ).fetchone()
        assert row is not None
        return Decimal(str(row[0])) + Decimal(str(row[1]))

    def request(self, key: str) -> RequestRecord | None:
        found = self.requests_for([key])
        return found[0] if found else None

    def requests(
        self,
        *,
        batch_id: str | None = None,
        actor: str | None = None,
        states: Iterable[RequestState] | None = None,
    ) -> list[RequestRecord]:
        wanted = [s.value for s in states] if states is not None else None
        with self._pool.connection("read requests") as db:
            rows = _dicts(
                db,
                "SELECT * FROM request_view WHERE (%(batch)s::text IS NULL OR batch_id = %(batch)s)"
                " AND (%(actor)s::text IS NULL OR actor = %(actor)s)"
                " AND (%(states)s::text[] IS NULL OR state = ANY(%(states)s)) ORDER BY created_at, key",
                {"batch": batch_id, "actor": actor, "states": wanted},
            )
        return [request_record(row) for row in rows]

    def requests_for(self, keys: Sequence[str]) -> list[RequestRecord]:
        with self._pool.connection("read requests") as db:
            return _requests_by_key(db, keys)

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
        with self._pool.transaction("record a batch before creating it") as db:
            db.execute(
                "INSERT INTO batches (id, provider, endpoint, state, request_count, request_bytes, intent_at,"
                " owner, owner_until) VALUES (%s, %s, %s, 'intent', %s, %s, %s, %s, %s)",
                (batch_id, provider, endpoint, len(members), request_bytes, now, owner, until),
            )
            # Locked first: a request another process is taking into its batch (`take_pending`) is waited for, and
            # then found not to be this owner's any more: it stays out.
            mine: set[str] = set()
            known: set[str] = set()
            for chunk in _chunks(members):
                rows = db.execute(
                    "SELECT key, state = 'pending' AND (owner IS NULL OR owner = %s) FROM requests"
                    " WHERE key = ANY(%s) ORDER BY key FOR UPDATE",
                    (owner, [key for key, _ in chunk]),
                ).fetchall()
                known.update(str(key) for key, _ in rows)
                mine.update(str(key) for key, free in rows if free)
            strangers = sorted({key for key, _ in members} - known)
            if strangers:  # a batch of requests the ledger does not hold would be answered to nobody
                raise LedgerError(
                    f"The ledger {self.location} could not record batch {batch_id}: it holds no request"
                    f" {', '.join(strangers[:5])}."
                )
            if len(mine) < len(members):
                members = [(key, custom_id) for key, custom_id in members if key in mine]
                if not members:
                    db.execute("DELETE FROM batches WHERE id = %s", (batch_id,))
                    return []
                db.execute("UPDATE batches SET request_count = %s WHERE id = %s", (len(members), batch_id))
            for chunk in _chunks(members):
                db.execute(
                    "INSERT INTO batch_members (batch_id, key, custom_id)"
                    " SELECT %s, k, c FROM unnest(%s::text[], %s::text[]) AS t(k, c)",
                    (batch_id, [key for key, _ in chunk], [custom_id for _, custom_id in chunk]),
                )
            db.execute(
                "UPDATE requests SET state = 'submitting', batch_id = %s, attempts = attempts + 1,"
                " owner = NULL, owner_until = NULL, updated_at = %s"
                " WHERE key IN (SELECT key FROM batch_members WHERE batch_id = %s)",
                (batch_id, now, batch_id),
            )
        return [key for key, _ in members]

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        if not scope or limit <= 0:
            return []
        with self._pool.transaction("gather the calls of other processes") as db:
            # One process at a time gathers a scope: another flushing it right now takes these calls itself.
            free = db.execute("SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", (_GATHERING, scope)).fetchone()
            if free is None or not free[0]:
                return []
            rows = db.execute(
                "SELECT key, custom_id, params, params_bytes, model FROM requests"
                " WHERE scope = %s AND state = 'pending' AND owner IS DISTINCT FROM %s"
                " ORDER BY created_at, key LIMIT %s FOR UPDATE SKIP LOCKED",
                (scope, owner, limit),
            ).fetchall()
            taken: list[PendingRequest] = []
            size = 0
            for key, custom_id, params, params_bytes, model in rows:
                size += int(params_bytes) + 64
                if size > max_bytes:
                    break
                taken.append(PendingRequest(str(key), str(custom_id), str(params), int(params_bytes), str(model)))
            if taken:
                db.execute(
                    "UPDATE requests SET owner = %s, owner_until = %s, updated_at = %s WHERE key = ANY(%s)",
                    (owner, until, now, [t.key for t in taken]),
                )
        return taken

    def record_submitted(
        self,
        batch_id: str,
        *,
        provider_batch_id: str,
        phase: str,
        request_id: str | None = None,
        now: float,
    ) -> None:
        with self._pool.transaction("record a created batch") as db:
            db.execute(
                "UPDATE batches SET provider_batch_id = %s, state = 'waiting-on-batch', phase = %s,"
                " request_id = %s, submitted_at = COALESCE(submitted_at, %s) WHERE id = %s",
                (provider_batch_id, phase, request_id, now, batch_id),
            )
            db.execute(_NOTIFY, (batch_id,))

    def record_unknown(self, batch_id: str, *, note: str) -> None:
        with self._pool.transaction("record a create whose outcome is unknown") as db:
            db.execute("UPDATE batches SET state = 'unknown', note = %s WHERE id = %s", (note, batch_id))

    def give_up_intent(
        self, batch_id: str, *, note: str, owner: str, until: float, now: float, intent_at: float | None = None
    ) -> list[str] | None:
        with self._pool.transaction("give up a create") as db:
            failed = db.execute(
                "UPDATE batches SET state = 'failed', note = %(note)s"
                " WHERE id = %(id)s AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')"
                " AND (%(at)s::float8 IS NULL OR intent_at = %(at)s)",
                {"note": note, "id": batch_id, "at": intent_at},
            )
            if failed.rowcount != 1:
                return None
            keys = [
                str(row[0])
                for row in db.execute("SELECT key FROM batch_members WHERE batch_id = %s", (batch_id,)).fetchall()
            ]
            db.execute(
                "UPDATE requests SET state = 'pending', batch_id = NULL, attempts = GREATEST(attempts - 1, 0),"
                " owner = %s, owner_until = %s, updated_at = %s WHERE batch_id = %s AND state = 'submitting'",
                (owner, until, now, batch_id),
            )
            db.execute(_NOTIFY, (batch_id,))
            return keys

    def resume_intent(self, batch_id: str, *, intent_at: float, owner: str, until: float, now: float) -> bool:
        with self._pool.transaction("resume a create") as db:
            cursor = db.execute(
                "UPDATE batches SET state = 'intent', intent_at = %s, owner = %s, owner_until = %s, note = NULL"
                " WHERE id = %s AND provider_batch_id IS NULL AND state IN ('intent', 'unknown') AND intent_at = %s",
                (now, owner, until, batch_id, intent_at),
            )
            return cursor.rowcount == 1

    def record_refused(self, batch_id: str, *, note: str, now: float) -> None:
        with self._pool.transaction("record a refused create") as db:
            db.execute("UPDATE batches SET state = 'failed', note = %s WHERE id = %s", (note, batch_id))
            db.execute(
                "UPDATE requests SET state = 'pending', batch_id = NULL, attempts = GREATEST(attempts - 1, 0),"
                " updated_at = %s WHERE batch_id = %s AND state = 'submitting'",
                (now, batch_id),
            )
            db.execute(_NOTIFY, (batch_id,))

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        state = BatchState.ENDED.value if phase == "ended" else BatchState.WAITING.value
        with self._pool.transaction("record a batch's status") as db:
            db.execute(
                "UPDATE batches SET phase = %s, counts = %s, ended_at = %s,"
                " state = CASE WHEN state IN ('waiting-on-batch', 'ended') THEN %s ELSE state END WHERE id = %s",
                (phase, stored_json(counts) if counts is not None else None, ended_at, state, batch_id),
            )

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        if not outcomes:
            return 0
        keys: list[str] = []
        states: list[str] = []
        responses: list[str | None] = []
        errors: list[str | None] = []
        costs: list[str | None] = []
        live_costs: list[str | None] = []
        for o in outcomes:
            keys.append(o.key)
            states.append(o.state.value)
            responses.append(
                o.response if isinstance(o.response, str) or o.response is None else stored_json(o.response)
            )
            errors.append(stored_json(o.error) if o.error is not None else None)
            costs.append(str(o.cost_usd) if o.cost_usd is not None else None)
            live_costs.append(str(o.live_cost_usd) if o.live_cost_usd is not None else None)
        with self._pool.transaction("store a batch's results") as db:
            # WITH ORDINALITY keeps the arrival order in `seq`.
            db.execute(
                "INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)"
                " SELECT %s, k, s, r, e, c, l, %s FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[],"
                " %s::text[], %s::text[]) WITH ORDINALITY AS t(k, s, r, e, c, l, n) ORDER BY n",
                (batch_id, now, keys, states, responses, errors, costs, live_costs),
            )
            db.execute(_NOTIFY, (batch_id,))
        return len(outcomes)

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        with self._pool.transaction("record a collected batch") as db:
            db.execute(
                "UPDATE batches SET state = %s, collected_at = %s, owner = NULL, owner_until = NULL WHERE id = %s",
                (state.value, now, batch_id),
            )
            db.execute(_NOTIFY, (batch_id,))

    def adopt(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        from psycopg.errors import UniqueViolation

        with self._pool.transaction("adopt a batch") as db:
            try:
                with db.transaction():  # a savepoint: another host adopting the same batch meanwhile wins
                    adopted = db.execute(
                        "UPDATE batches SET provider_batch_id = %(api)s, state = 'waiting-on-batch',"
                        " submitted_at = %(now)s, note = 'reconciled after an unknown create'"
                        " WHERE id = %(id)s AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')"
                        " AND NOT EXISTS (SELECT 1 FROM batches WHERE provider_batch_id = %(api)s)",
                        {"api": provider_batch_id, "now": now, "id": batch_id},
                    )
            except UniqueViolation:
                return False
            if adopted.rowcount == 1:
                db.execute(_NOTIFY, (batch_id,))
            return adopted.rowcount == 1

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
        with self._pool.transaction("take a batch's lease") as db:
            cursor = db.execute(
                "UPDATE batches b SET owner = %(owner)s, owner_until = %(until)s"
                " WHERE b.id = %(id)s AND (%(force)s OR b.owner IS NULL OR b.owner = %(owner)s OR b.owner = %(dead)s"
                f" OR {_LEASE_OVER.format(t='b')} IS NULL OR {_LEASE_OVER.format(t='b')} < %(now)s)",
                {"owner": owner, "until": until, "id": batch_id, "force": force, "dead": dead_owner, "now": now},
            )
            return cursor.rowcount == 1

    def release_batch(self, batch_id: str, *, owner: str) -> None:
        with self._pool.transaction("release a batch's lease") as db:
            db.execute(
                "UPDATE batches SET owner = NULL, owner_until = NULL WHERE id = %s AND owner = %s", (batch_id, owner)
            )
            db.execute(_NOTIFY, (batch_id,))

    def batch(self, batch_id: str) -> BatchRecord | None:
        with self._pool.connection("read a batch") as db:
            rows = _dicts(db, f"{_BATCH} WHERE b.id = %(id)s OR b.provider_batch_id = %(id)s", {"id": batch_id})
        return batch_record(rows[0]) if rows else None

    def batches(self, *, states: Iterable[BatchState] | None = None) -> list[BatchRecord]:
        wanted = [s.value for s in states] if states is not None else None
        with self._pool.connection("read batches") as db:
            rows = _dicts(
                db,
                f"{_BATCH} WHERE (%(states)s::text[] IS NULL OR b.state = ANY(%(states)s)) ORDER BY b.intent_at, b.id",
                {"states": wanted},
            )
        return [batch_record(row) for row in rows]

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        with self._pool.transaction("record a step of a create") as db:
            row = db.execute("SELECT create_steps FROM batches WHERE id = %s FOR UPDATE", (batch_id,)).fetchone()
            steps: dict[str, str] = json.loads(str(row[0])) if row is not None and row[0] else {}
            steps[step] = value
            db.execute("UPDATE batches SET create_steps = %s WHERE id = %s", (stored_json(steps), batch_id))

    def create_steps(self, batch_id: str) -> dict[str, str]:
        with self._pool.connection("read the steps of a create") as db:
            row = db.execute("SELECT create_steps FROM batches WHERE id = %s", (batch_id,)).fetchone()
        return dict(json.loads(str(row[0]))) if row is not None and row[0] else {}

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        with self._pool.connection("read unresolved creates") as db:
            rows = _dicts(
                db,
                f"{_BATCH} WHERE b.state IN ('intent', 'unknown') AND b.provider_batch_id IS NULL"
                " AND b.provider = %s AND b.endpoint = %s ORDER BY b.intent_at, b.id",
                (provider, endpoint),
            )
        return [batch_record(row) for row in rows]

    def batch_holding(self, custom_id: str, among: Sequence[str]) -> str | None:
        if not among:
            return None
        with self._pool.connection("read a batch's members") as db:
            row = db.execute(
                "SELECT batch_id FROM batch_members WHERE custom_id = %s AND batch_id = ANY(%s) LIMIT 1",
                (custom_id, list(among)),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def members(self, batch_id: str) -> dict[str, str]:
        with self._pool.connection("read a batch's members") as db:
            rows = db.execute("SELECT custom_id, key FROM batch_members WHERE batch_id = %s", (batch_id,)).fetchall()
        return {str(custom_id): str(key) for custom_id, key in rows}

    # moving a ledger

    def export_rows(self, table: str) -> Iterator[list[tuple[Any, ...]]]:
        from psycopg import sql

        columns = COPIED[table]
        order = "seq" if table == "results" else columns[0]
        query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table), sql.Identifier(order)
        )
        batch_at = columns.index("batch_id") if table == "results" else -1
        with self._pool.transaction("read the ledger") as db, db.cursor(name=f"lowtide_export_{table}") as cursor:
            cursor.execute(query)
            while chunk := cursor.fetchmany(_CHUNK):
                rows = [tuple(row) for row in chunk]
                if batch_at >= 0:  # a live answer's '' is the None other stores keep
                    rows = [(*r[:batch_at], r[batch_at] or None, *r[batch_at + 1 :]) for r in rows]
                yield rows

    def load(self, tables: Iterable[tuple[str, Iterable[list[tuple[Any, ...]]]]]) -> dict[str, int]:
        from psycopg import sql

        written: dict[str, int] = {}
        with self._pool.transaction("be written") as db:
            # No other copy or process may write meanwhile: the emptiness checked here holds until the commit.
            db.execute(
                sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(sql.SQL(", ").join(map(sql.Identifier, COPIED)))
            )
            held = [
                table
                for table in COPIED
                if _one(db, sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(table)))
            ]
            if held:
                raise ConfigurationError(
                    f"The ledger {self.location} is not empty (it holds {', '.join(held)}): a copy goes into a new"
                    " ledger, and nothing was written.",
                    field="ledger",
                )
            for table, chunks in tables:
                columns = COPIED[table]
                batch_at = columns.index("batch_id") if table == "results" else -1
                copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
                    sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
                )
                written[table] = 0
                with db.cursor().copy(copy) as writing:
                    for chunk in chunks:
                        for row in chunk:
                            if batch_at >= 0 and row[batch_at] is None:
                                row = (*row[:batch_at], "", *row[batch_at + 1 :])
                            writing.write_row(row)
                        written[table] += len(chunk)
        return written

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        members: dict[str, str] = {}
        attempts: dict[str, tuple[int, int]] = {}
        pairs: dict[tuple[int, int], tuple[int, int]] = {}
        with self._pool.connection("read a batch's members") as db:
            cursor = db.execute(
                "SELECT m.custom_id, m.key, r.attempts, r.max_attempts, r.batch_id = m.batch_id"
                " FROM batch_members m LEFT JOIN requests r ON r.key = m.key WHERE m.batch_id = %s",
                (batch_id,),
            )
            for custom_id, key, made, allowed, current in cursor:
                custom_id, key = str(custom_id), str(key)
                key = custom_id if key == custom_id else key
                members[custom_id] = key
                if current:
                    pair = (int(made), int(allowed))
                    attempts[key] = pairs.setdefault(pair, pair)
        return members, attempts


def _one(db: Connection[TupleRow], query: Composed) -> object:
    row = db.execute(query).fetchone()
    return row[0] if row is not None else None


def _dicts(db: Connection[TupleRow], sql: LiteralString, args: Sequence[Any] | dict[str, Any]) -> list[dict[str, Any]]:
    from psycopg.rows import dict_row

    with db.cursor(row_factory=dict_row) as cursor:
        cursor.execute(sql, args)
        return cursor.fetchall()


def _requests_by_key(db: Connection[TupleRow], keys: Sequence[str]) -> list[RequestRecord]:
    found: dict[str, RequestRecord] = {}
    for chunk in _chunks(keys, size=500):
        for row in _dicts(db, "SELECT * FROM request_view WHERE key = ANY(%s)", (list(chunk),)):
            record = request_record(row)
            found[record.key] = record
    return [found[key] for key in keys if key in found]


def _chunks(items: Sequence[T], size: int = _CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


_IMPLEMENTS: type[LedgerStore] = PostgresLedger
"""The type checker's proof that `PostgresLedger` is a `LedgerStore`."""
