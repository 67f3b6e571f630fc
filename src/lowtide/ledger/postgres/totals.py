"""The PostgreSQL ledger's sums of results (`result_totals`) counting each batch's final result once, without looking
each one up when its storer can vouch for it.

A trigger adds every statement's stored results to the sums (schema 5). A batch's result stored again (a collection
replayed after a crash, or two processes collecting one batch at once) must not be counted again (schema 6), so the
trigger looked, for each result, for an earlier final result of its key in its batch: an index lookup a result, 0.24 s
of the server's 3.3 s of CPU for 100,000 calls (`log_statement_stats`), most of the sums' cost.

A storer knows better, most of the time: a collection reads which of the batch's keys have a final result
(`stored_finals`) before it stores any, and stores none of those again. From schema 11 every statement storing a
batch's results counts itself on the batch (`batches.result_stores`), under the batch row's lock; a storer that read
the batch's final results when that count was `n` says so for the statement it runs next (the transaction's setting
`lowtide.new_finals`, "<batch> <n>"), and if the count is still `n` when its trigger runs, no other statement has
stored the batch's results since that read: the trigger adds the results up without looking any of them up. If
another statement stored some meanwhile (its count is higher), or waits to (the row lock: it counts after this one
commits), the results are looked up as before. The storer vouches only for results whose keys it read no final result
of, each key once (`FinalsRead.vouch`); what it stored is added to what it read, at the count its statement left.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import LiteralString

from lowtide.ledger.records import OutcomeRow

__all__ = ["ADD_TOTALS", "NEW_FINALS", "FinalsRead", "Vouched"]

NEW_FINALS: LiteralString = "lowtide.new_finals"
"""The transaction's setting by which a storer vouches for the results it stores next: "<batch id> <count>"."""

_SUM: LiteralString = """
        INSERT INTO result_totals AS t (minute, batch_id, actor, model, answers, failures, cost_usd, live_cost_usd)
            SELECT floor(o.at / 60) * 60, {batch}, {actor}, {model}, count(*),
                count(*) FILTER (WHERE o.state IN ('failed', 'expired', 'canceled')),
                COALESCE(sum(o.cost_usd::numeric), 0), COALESCE(sum(o.live_cost_usd::numeric), 0)
            FROM added o {join} WHERE o.state <> 'pending' {counted}
            GROUP BY {groups} ORDER BY {groups}
        ON CONFLICT (minute, batch_id, actor, model) DO UPDATE SET answers = t.answers + excluded.answers,
            failures = t.failures + excluded.failures, cost_usd = t.cost_usd + excluded.cost_usd,
            live_cost_usd = t.live_cost_usd + excluded.live_cost_usd;"""

_EARLIER: LiteralString = (
    "NOT EXISTS (SELECT 1 FROM results p WHERE p.batch_id = o.batch_id AND p.key = o.key AND p.seq < o.seq"
    " AND p.state <> 'pending')"
)
"""A result not counted before: no earlier final result of its key from its batch."""

_LONE: dict[str, LiteralString] = {
    "batch": "lone",
    "actor": "lone_actor",
    "model": "lone_model",
    "join": "",
    "groups": "1",
}
_BY_REQUEST: dict[str, LiteralString] = {
    "batch": "o.batch_id",
    "actor": "COALESCE(r.actor, '?')",
    "model": "COALESCE(r.model, '?')",
    "join": "LEFT JOIN LATERAL (SELECT x.actor, x.model FROM requests x WHERE x.key = o.key OFFSET 0) r ON TRUE",
    "groups": "1, 2, 3, 4",
}

ADD_TOTALS: LiteralString = (
    """
    ALTER TABLE batches ADD COLUMN result_stores BIGINT NOT NULL DEFAULT 0;
    CREATE OR REPLACE FUNCTION lowtide_add_totals() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        lone       TEXT;                -- the one batch every result stored belongs to, if there is one
        kinds      BIGINT;              -- how many actors and models its members have
        lone_actor TEXT;
        lone_model TEXT;
        stores     BIGINT;              -- how many statements had stored its results before this one
        vouched    BOOLEAN := FALSE;    -- its storer read them all, and stores none of their keys again
    BEGIN
        SELECT min(o.batch_id) INTO lone FROM added o HAVING min(o.batch_id) = max(o.batch_id);
        IF lone IS NOT NULL AND lone <> '' THEN
            UPDATE batches SET result_stores = result_stores + 1 WHERE id = lone
                RETURNING result_stores - 1 INTO stores;
            vouched := COALESCE(current_setting('"""
    + NEW_FINALS
    + """', TRUE) = lone || ' ' || stores, FALSE);
            SELECT count(*), min(k.actor), min(k.model) INTO kinds, lone_actor, lone_model FROM batch_kinds k
                WHERE k.batch_id = lone;
        ELSE
            UPDATE batches SET result_stores = result_stores + 1
                WHERE id IN (SELECT o.batch_id FROM added o WHERE o.batch_id <> '');
        END IF;
        IF kinds = 1 AND vouched THEN"""
    + _SUM.format(**_LONE, counted="")
    + """
            RETURN NULL;
        END IF;
        IF kinds = 1 THEN"""
    + _SUM.format(**_LONE, counted="AND " + _EARLIER)
    + """
            RETURN NULL;
        END IF;"""
    + _SUM.format(**_BY_REQUEST, counted="AND (o.batch_id = '' OR vouched OR " + _EARLIER + ")")
    + """
        RETURN NULL;
    END
    $$;
    """
)
"""Schema 11: each batch counts the statements that stored its results, and the sums' trigger adds a vouched
statement's results without looking each up. Otherwise as schema 8's: a batch of one actor and model is counted
under them, any other result under its request's."""


@dataclass(frozen=True, slots=True)
class Vouched:
    """A store's word for the results it is storing: none of `new` (the final ones' keys, each once) had a final
    result from the batch when `stores` statements had stored its results; `finals` are the keys that had."""

    stores: int
    finals: set[str]
    new: list[str]


class FinalsRead:
    """What one store read of each batch's final results (`stored_finals`), kept for its next storing of that batch's
    results: for a few batches at once (those being collected), the oldest forgotten first. Shared by a store's
    threads."""

    KEPT = 8

    def __init__(self) -> None:
        self._read: dict[str, tuple[set[str], int]] = {}
        self._lock = threading.Lock()

    def read(self, batch_id: str, finals: set[str], stores: int | None) -> None:
        """`finals` read of `batch_id` once `stores` statements had stored its results (None: no such batch)."""
        self._keep(batch_id, None if stores is None else (set(finals), stores))  # a copy: the caller may change its own

    def _keep(self, batch_id: str, kept: tuple[set[str], int] | None) -> None:
        with self._lock:
            self._read.pop(batch_id, None)
            if kept is None:
                return
            self._read[batch_id] = kept
            while len(self._read) > self.KEPT:
                del self._read[next(iter(self._read))]

    def vouch(self, batch_id: str, outcomes: Sequence[OutcomeRow]) -> Vouched | None:
        """The word to give for storing `outcomes` (None: they are looked up): taken from what was read, which is
        forgotten until `stored` says how the statement went."""
        with self._lock:
            kept = self._read.pop(batch_id, None)
        if kept is None:
            return None
        finals, stores = kept
        new = [o.key for o in outcomes if o.state.value != "pending"]
        if len(set(new)) != len(new) or not finals.isdisjoint(new):
            return None
        return Vouched(stores, finals, new)

    def stored(self, batch_id: str, vouched: Vouched, stores: int | None) -> None:
        """The statement given `vouched` stored its results and left the batch's count at `stores`: what it stored is
        known from here if its word held (the count is one more), else nothing is."""
        if stores is not None and stores == vouched.stores + 1:
            vouched.finals.update(vouched.new)
            self._keep(batch_id, (vouched.finals, stores))
