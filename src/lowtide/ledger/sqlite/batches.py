"""The batches of a SQLite ledger: intents before a create, what each create step left, results appended in arrival
order, leases of the batch's poller, adoption of a batch whose create outcome was unknown, and reading them back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from sqlite3 import Connection
from typing import Any, TypeVar

from lowtide.ledger.records import (
    ADOPTED,
    DISOWNED,
    FOREIGN,
    BatchClaim,
    BatchCreated,
    BatchIntent,
    BatchRecord,
    BatchState,
    OutcomeRow,
    PendingRequest,
    RequestState,
    batch_record,
    foreign_batch_id,
    stored_json,
)
from lowtide.ledger.sqlite.connection import chunks
from lowtide.ledger.sqlite.requests import RequestRows
from lowtide.ledger.sqlite.totals import add_totals, last_result

T = TypeVar("T")

_STATE_TEXT = {state: state.value for state in RequestState}
"""Each state's text, read once a result (an enum's `.value` is a property)."""
_FAILURES = frozenset((RequestState.FAILED, RequestState.EXPIRED, RequestState.CANCELED))
"""The final states the sums count as failures (`TOTALS`)."""


class BatchRows(RequestRows):
    """The batches, members and results tables of a ledger file."""

    _lone_kinds: dict[str, tuple[tuple[str, str], int]]
    """The batches being collected whose members are all of one actor and model: that actor and model, and the file's
    `data_version` before they were read (`members_and_attempts`)."""
    _finals: dict[str, tuple[set[str], int]]
    """The batches being collected whose final results this connection knows all of: the keys with one, and the
    file's `data_version` when they were read (`stored_finals`). See `_counted`."""

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        super().__init__(path, read_only=read_only)
        self._lone_kinds = {}
        self._finals = {}

    def record_intent(self, intent: BatchIntent) -> list[str]:
        """Before `create`: the batch and its members (key, custom_id), in one transaction; their keys. (No other
        process takes a request this one claimed: `take_pending` takes nothing here.)"""
        batch_id, members = intent.batch_id, intent.members
        with self._transaction() as db:
            db.execute(
                "INSERT INTO batches (id, provider, endpoint, state, request_count, request_bytes, intent_at,"
                " owner, owner_until, trace) VALUES (?, ?, ?, 'intent', ?, ?, ?, ?, ?, ?)",
                (
                    batch_id,
                    intent.provider,
                    intent.endpoint,
                    len(members),
                    intent.request_bytes,
                    intent.now,
                    intent.owner,
                    intent.until,
                    intent.trace or None,
                ),
            )
            # In key order: the index by key then takes them in one pass, not 100,000 scattered inserts whose pages
            # outgrow the cache and are written again and again (242 MiB written for a batch that size, against 26).
            for chunk in chunks(sorted(members)):
                db.executemany(
                    "INSERT INTO batch_members (batch_id, key, custom_id) VALUES (?, ?, ?)",
                    [(batch_id, key, custom_id) for key, custom_id in chunk],
                )
            # Nothing more: a request's batch is its latest membership (`request_view`), its row is not rewritten.
        return intent.keys

    def take_pending(
        self, scope: str, *, owner: str, until: float, now: float, limit: int, max_bytes: int
    ) -> list[PendingRequest]:
        """Nothing: the processes sharing a file each batch the calls they claimed."""
        return []

    def record_submitted(self, created: BatchCreated) -> None:
        """Right after `create` answered: the API's batch id. One row: every member of a batch the API has is
        waiting on it (`request_view`), with no write of its own."""
        with self._transaction() as db:
            db.execute(
                "UPDATE batches SET provider_batch_id = ?, state = 'waiting-on-batch', phase = ?,"
                " request_id = ?, submitted_at = COALESCE(submitted_at, ?) WHERE id = ?",
                (created.provider_batch_id, created.phase, created.request_id, created.now, created.batch_id),
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
            _leave(db, batch_id, owner=(owner, until), now=now)
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
            _leave(db, batch_id, owner=None, now=now)

    def record_status(
        self, batch_id: str, *, phase: str, counts: dict[str, int] | None, ended_at: float | None
    ) -> None:
        with self._transaction() as db:
            state = BatchState.ENDED.value if phase == "ended" else BatchState.WAITING.value
            db.execute(
                "UPDATE batches SET phase = ?, counts = ?, ended_at = ?,"
                " state = CASE WHEN state IN ('waiting-on-batch', 'ended') THEN ? ELSE state END WHERE id = ?",
                (phase, stored_json(counts) if counts is not None else None, ended_at, state, batch_id),
            )

    def record_outcomes(self, batch_id: str, outcomes: Sequence[OutcomeRow], *, now: float) -> int:
        """Append results of `batch_id`, in arrival order; returns how many.

        Nothing is updated in place: a request's outcome is its latest result for the batch it is in
        (`request_view`), so a result of a batch a request has since left is stored and never read as its state.
        """
        with self._transaction() as db:
            version = _data_version(db)
            kind = self._lone_kind(batch_id, version)
            finals = self._counted(batch_id, version) if kind is not None else None
            before = last_result(db) if finals is None else 0
            db.executemany(
                "INSERT INTO results (batch_id, key, state, response, error, cost_usd, live_cost_usd, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        batch_id,
                        o.key,
                        _STATE_TEXT[o.state],
                        o.response if isinstance(o.response, str) or o.response is None else stored_json(o.response),
                        stored_json(o.error) if o.error is not None else None,
                        str(o.cost_usd) if o.cost_usd is not None else None,
                        str(o.live_cost_usd) if o.live_cost_usd is not None else None,
                        now,
                    )
                    for o in outcomes
                ],
            )
            if finals is None or kind is None:
                self._finals.pop(batch_id, None)  # (what it kept lacks these from here on)
                add_totals(db, before, batch_id=batch_id, at=now, kind=kind)
            else:
                _add_counted(db, outcomes, finals, batch_id=batch_id, at=now, kind=kind)
        return len(outcomes)

    def record_collected(self, batch_id: str, *, state: BatchState, now: float) -> None:
        self._lone_kinds.pop(batch_id, None)  # (a collection again reads its members again)
        self._finals.pop(batch_id, None)
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
                " note = ? WHERE id = ? AND provider_batch_id IS NULL AND state IN ('intent', 'unknown')",
                (provider_batch_id, now, ADOPTED, batch_id),
            )
            # Its members now wait on the batch the API has (`request_view`): nothing more to write.
            return adopted.rowcount == 1  # else resolved meanwhile (adopted by another process, or sent again)

    def disown(self, batch_id: str, *, provider_batch_id: str, now: float) -> bool:
        """The adopted batch held none of the intent's requests: the intent is unknown again (its members still in
        it, their attempt as it was), and the batch is kept apart as foreign; True if this call did it."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT provider, endpoint FROM batches WHERE id = ? AND provider_batch_id = ?"
                " AND state IN ('waiting-on-batch', 'ended')",
                (batch_id, provider_batch_id),
            ).fetchone()
            if row is None:
                return False
            db.execute(
                "UPDATE batches SET provider_batch_id = NULL, state = 'unknown', phase = NULL, counts = NULL,"
                " submitted_at = NULL, ended_at = NULL, note = ? WHERE id = ?",
                (DISOWNED, batch_id),
            )
            db.execute(
                "INSERT INTO batches (id, provider, endpoint, provider_batch_id, state, request_count, request_bytes,"
                " intent_at, note) VALUES (?, ?, ?, ?, 'failed', 0, 0, ?, ?)",
                (
                    foreign_batch_id(provider_batch_id),
                    row["provider"],
                    row["endpoint"],
                    provider_batch_id,
                    now,
                    FOREIGN,
                ),
            )
            return True

    def claim_batch(self, claim: BatchClaim) -> bool:
        """Take the right to work on a batch (create, reconcile, poll) unless another process holds an unexpired lease
        on it, or it is held by `dead_owner` (a process seen dead): then exactly one of the callers that saw it dead
        gets it. `force` takes it regardless. A batch no longer outstanding (collected, canceled, expired, failed)
        is nobody's to take: nothing is left to do with it."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE batches SET owner = ?, owner_until = ? WHERE id = ? AND (? OR owner IS NULL OR owner = ?"
                " OR owner = ? OR owner_until IS NULL OR owner_until < ?)"
                " AND state IN ('intent', 'unknown', 'waiting-on-batch', 'ended')",
                (claim.owner, claim.until, claim.batch_id, claim.force, claim.owner, claim.dead_owner, claim.now),
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
        with self._reading():
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
        with self._reading():
            rows = self._db.execute(query + " ORDER BY intent_at, id", args).fetchall()
        return [batch_record(row) for row in rows]

    def batch_durations(
        self, provider: str, *, last: int, endpoint: str | None = None, requests: tuple[int, int] | None = None
    ) -> list[float]:
        fewest, most = requests if requests is not None else (None, None)
        with self._reading():
            rows = self._db.execute(
                "SELECT ended_at - submitted_at FROM batches WHERE provider = ? AND state IN ('ended', 'collected')"
                " AND submitted_at IS NOT NULL AND ended_at IS NOT NULL AND (? IS NULL OR endpoint = ?)"
                " AND (? IS NULL OR request_count BETWEEN ? AND ?) ORDER BY ended_at DESC LIMIT ?",
                (provider, endpoint, endpoint, fewest, fewest, most, last),
            ).fetchall()
        return [max(0.0, float(row[0])) for row in rows]

    def record_create_step(self, batch_id: str, step: str, value: str) -> None:
        """A step of a create made of several calls is done (an input file uploaded, say)."""
        with self._transaction() as db:
            row = db.execute("SELECT create_steps FROM batches WHERE id = ?", (batch_id,)).fetchone()
            steps: dict[str, str] = json.loads(row[0]) if row is not None and row[0] else {}
            steps[step] = value
            db.execute("UPDATE batches SET create_steps = ? WHERE id = ?", (stored_json(steps), batch_id))

    def create_steps(self, batch_id: str) -> dict[str, str]:
        """The steps of a create recorded so far, by name."""
        with self._reading():
            row = self._db.execute("SELECT create_steps FROM batches WHERE id = ?", (batch_id,)).fetchone()
        return dict(json.loads(row[0])) if row is not None and row[0] else {}

    def unresolved(self, *, provider: str, endpoint: str) -> list[BatchRecord]:
        """Intents of `provider` at `endpoint` whose batch id is not known: creates in flight or unknown."""
        with self._reading():
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
        with self._reading():
            row = self._db.execute(
                f"SELECT batch_id FROM batch_members WHERE custom_id = ? AND batch_id IN ({marks}) LIMIT 1",
                (custom_id, *among),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def members_and_attempts(self, batch_id: str) -> tuple[dict[str, str], dict[str, tuple[int, int]]]:
        """`members`, and key -> (attempts made, attempts allowed) for the requests now in `batch_id`.

        A batch may hold 100,000 requests: the two share their strings, and rows are read one by one.
        """
        members: dict[str, str] = {}
        attempts: dict[str, tuple[int, int]] = {}
        pairs: dict[tuple[int, int], tuple[int, int]] = {}
        kinds: set[tuple[str | None, str | None]] = set()
        with self._reading():
            version = _data_version(self._db)  # read first: a commit of another's while they are read changes it
            cursor = self._db.cursor()
            cursor.row_factory = None
            cursor.execute(
                # A request in a later batch has left this one: only the latest membership can be past `left_seq`.
                "SELECT m.custom_id, m.key, r.attempts, r.max_attempts, m.seq > r.left_seq, r.actor, r.model"
                " FROM batch_members m LEFT JOIN requests r ON r.key = m.key WHERE m.batch_id = ?",
                (batch_id,),
            )
            kind: tuple[str | None, str | None] | None = None
            for custom_id, key, made, allowed, current, actor, model in cursor:
                key = custom_id if key == custom_id else key
                members[custom_id] = key
                if current:  # the attempt it is making now counts
                    pair = (made + 1, allowed)
                    attempts[key] = pairs.setdefault(pair, pair)
                if kind is None or kind[0] != actor or kind[1] != model:
                    kind = (actor, model)
                    kinds.add(kind)
            self._learn_kind(batch_id, kinds, version)
        return members, attempts

    def _learn_kind(self, batch_id: str, kinds: set[tuple[str | None, str | None]], version: int) -> None:
        """Keep the one actor and model of every member of `batch_id` (read with its members, at the file's
        `version`), for `record_outcomes` to add its results to the sums without looking each one's request up;
        forget it when they are several (or a member's request is gone). See `_lone_kind`."""
        (lone,) = kinds if len(kinds) == 1 else (None,)
        if lone is not None and lone[0] is not None and lone[1] is not None:
            self._lone_kinds[batch_id] = ((lone[0], lone[1]), version)
        else:
            self._lone_kinds.pop(batch_id, None)

    def _lone_kind(self, batch_id: str, version: int) -> tuple[str, str] | None:
        """In a write transaction: the one actor and model of every member of `batch_id` as `_learn_kind` kept it, if
        it still holds; None to look each result's request up. A batch's members are fixed by its intent, and a
        request's actor and model change only by a live answer given its key (`record_live`, which forgets what is
        kept here): it holds unless another connection committed since it was read (the file's `data_version`
        moved: kept no longer, as cheaper than knowing what that commit wrote); `version` is the file's now."""
        return _unless_moved(self._lone_kinds, batch_id, version)

    def _counted(self, batch_id: str, version: int) -> set[str] | None:
        """In a write transaction: the keys whose final result from `batch_id` is stored, as `stored_finals` read
        them and this connection's `record_outcomes` added to them since, if that still holds (no other connection
        has committed since they were read: the file's `data_version`, `version` now, has not moved); else None, and
        the sums look each result up for whether it was counted before (`add_totals`)."""
        return _unless_moved(self._finals, batch_id, version)

    def forget_kinds(self) -> None:
        self._lone_kinds.clear()
        self._finals.clear()

    def stored_finals(self, batch_id: str) -> set[str]:
        """The keys whose latest result from `batch_id` is final: the batch's region of `results_batch_key`."""
        with self._reading():
            version = _data_version(self._db)  # read first: a commit of another's while they are read changes it
            cursor = self._db.cursor()
            cursor.row_factory = None
            # SQLite reads `state` from the row that gave MAX(seq).
            cursor.execute("SELECT key, state, MAX(seq) FROM results WHERE batch_id = ? GROUP BY key", (batch_id,))
            finals = {key for key, state, _ in cursor if state != "pending"}
            # Kept for the sums of the results stored next (`_counted`): a copy, for the caller may change its own.
            self._finals[batch_id] = (set(finals), version)
            return finals

    def results_since(self, batch_id: str, after: int | None) -> tuple[list[str], int]:
        """The results after `after` read by `seq` (the rowid: a range from the end of the table), filtered by batch
        (`+batch_id`: not by `results_batch_key`, whose region of the batch holds all it brought)."""
        with self._reading():
            cursor = self._db.cursor()
            cursor.row_factory = None
            if after is None:
                cursor.execute("SELECT COALESCE(MAX(seq), 0) FROM results")
                return [], int(cursor.fetchone()[0])
            cursor.execute(
                "SELECT seq, key FROM results WHERE seq > ? AND +batch_id = ? ORDER BY seq", (after, batch_id)
            )
            rows: list[tuple[int, str]] = cursor.fetchall()
            return [key for _, key in rows], rows[-1][0] if rows else after


def _leave(db: Connection, batch_id: str, *, owner: tuple[str, float] | None, now: float) -> None:
    """The requests in `batch_id` (an intent that came to nothing: refused, or given up) leave it, back to pending
    with the attempt not counted, owned by `owner` (lease-holder and until) or by none."""
    in_batch = "(SELECT m.seq FROM batch_members m WHERE m.batch_id = :batch AND m.key = requests.key)"
    db.execute(
        f"UPDATE requests SET state = 'pending', left_seq = {in_batch}, owner = :owner, owner_until = :until,"
        f" updated_at = :now WHERE key IN (SELECT key FROM batch_members WHERE batch_id = :batch)"
        f" AND left_seq < {in_batch}",
        {"batch": batch_id, "owner": owner[0] if owner else None, "until": owner[1] if owner else None, "now": now},
    )


def _add_counted(
    db: Connection, outcomes: Sequence[OutcomeRow], finals: set[str], *, batch_id: str, at: float, kind: tuple[str, str]
) -> None:
    """`add_totals` of a batch's results whose actor and model (`kind`) and whose keys counted before (`finals`, added
    to here) are known: summed here, the results neither read back nor looked up. A final result counts once for its
    key in the batch (`_FIRST_FINAL`); its cost is summed exactly (`Decimal`), then stored as SQLite's float."""
    answers = failures = 0
    cost = live = Decimal(0)
    for o in outcomes:
        state = o.state
        if state is RequestState.PENDING or o.key in finals:
            continue
        finals.add(o.key)
        answers += 1
        if state in _FAILURES:
            failures += 1
        if o.cost_usd is not None:
            cost += o.cost_usd
        if o.live_cost_usd is not None:
            live += o.live_cost_usd
    if answers:
        db.execute(
            _ADD_SUMS, (int(at // 60) * 60, batch_id, kind[0], kind[1], answers, failures, float(cost), float(live))
        )


_ADD_SUMS = (
    "INSERT INTO result_totals (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET"
    " answers = answers + excluded.answers, failures = failures + excluded.failures,"
    " cost_usd = cost_usd + excluded.cost_usd, live_cost_usd = live_cost_usd + excluded.live_cost_usd"
)


def _unless_moved(kept: dict[str, tuple[T, int]], batch_id: str, version: int) -> T | None:
    """What `kept` holds for `batch_id` as read at a file's `data_version`, if the file's is still that (`version`);
    else None, and forgotten."""
    found = kept.get(batch_id)
    if found is None:
        return None
    if version != found[1]:
        del kept[batch_id]
        return None
    return found[0]


def _data_version(db: Connection) -> int:
    """SQLite's `data_version`: the same until another connection commits to the file."""
    (version,) = db.execute("PRAGMA data_version").fetchone()
    return int(version)
