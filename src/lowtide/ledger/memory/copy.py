"""A `MemoryLedger`'s rows as `records.COPIED` names them, out (`rows_of`) and in (`load_into`): what `lowtide ledger
copy` and `copy_ledger` move, so that a test's ledger can be saved to a file or a database, or one loaded into memory.

Results are the latest of each (batch, key), in arrival order: the memory store keeps no older ones.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, Protocol, cast

import orjson

from lowtide.errors import ConfigurationError
from lowtide.ledger.journal_records import entry_of, entry_row, run_of, run_row
from lowtide.ledger.memory.journal import MemoryJournal
from lowtide.ledger.memory.runs import MemoryRunStore
from lowtide.ledger.memory.spending import MemorySpending
from lowtide.ledger.memory.tables import MemoryQuotaStore, MemoryTables, StoredBatch, StoredRequest
from lowtide.ledger.outbox_records import Notice
from lowtide.ledger.quota_records import ScopeState
from lowtide.ledger.records import COPIED, BatchState, RequestState, stored_json

__all__ = ["Held", "load_into", "rows_of"]

Row = tuple[object, ...]


class Held(Protocol):
    """What a `MemoryLedger` holds, as a copy reads and writes it (under the ledger's lock)."""

    @property
    def tables(self) -> MemoryTables: ...

    @property
    def run_store(self) -> MemoryRunStore: ...

    @property
    def quota_store(self) -> MemoryQuotaStore: ...

    @property
    def agent_journal(self) -> MemoryJournal: ...

    @property
    def spending(self) -> MemorySpending: ...
    def outbox_rows(self) -> list[Row]: ...

    def load_notice(self, notice: Notice, *, delivered_at: float | None, given_up_at: float | None) -> None: ...


def _money(value: Decimal | None) -> str | None:
    return str(value) if value is not None else None


def rows_of(ledger: Held, table: str) -> list[Row]:
    """Every row of `table`, its columns as `COPIED` lists them."""
    t = ledger.tables
    runs = ledger.run_store
    if table == "batches":
        return [
            (b.id, b.provider, b.endpoint, b.provider_batch_id, b.state.value, b.phase, b.request_count,
             b.request_bytes, b.intent_at, b.submitted_at, b.ended_at, b.collected_at,
             stored_json(b.counts) if b.counts is not None else None, b.request_id, b.owner, b.owner_until, b.note,
             stored_json(b.create_steps) if b.create_steps else None, b.trace)
            for b in t.batches.values()
        ]  # fmt: skip
    if table == "requests":
        return [
            (r.key, r.custom_id, r.actor, r.model, r.params, len(r.params), r.state.value, r.batch_id, r.attempts,
             r.max_attempts, float(r.worst_case_usd) if r.worst_case_usd is not None else None, r.created_at,
             r.updated_at, r.owner, r.owner_until)
            for r in t.requests.values()
        ]  # fmt: skip
    if table == "request_traces":
        return list(t.traces.items())
    if table == "batch_members":
        return [(batch_id, custom_id, key) for batch_id, held in t.members.items() for custom_id, key in held.items()]
    if table == "results":
        return [
            (o.batch_id, o.key, o.state.value, o.response, o.error, _money(o.cost_usd), _money(o.live_cost_usd), o.at)
            for o in sorted(t.latest.values(), key=lambda o: o.seq)
        ]
    if table == "runs":
        return [
            (r.id, r.actor, r.configuration, r.options, r.fingerprint, r.item_count, r.created_at, r.updated_at)
            for r in runs.stored_runs()
        ]
    if table == "run_items":
        return [
            (run_id, i.index, i.item_id, i.job, i.key, i.attempt, i.status, i.reason)
            for run_id, items in runs.stored_items()
            for i in items
        ]
    if table == "live_quotas":
        now = time.time()
        return [(scope, orjson.dumps(state.as_json()).decode(), now) for scope, state in ledger.quota_store.states()]
    if table == "agent_runs":
        return [run_row(r) for r in ledger.agent_journal.agent_runs()]
    if table == "agent_journal":
        return [entry_row(e) for _, e in sorted(ledger.agent_journal.journal.items())]
    if table in ("spend_caps", "spend_entries", "spend_audit"):
        return ledger.spending.rows(table)
    if table == "notice_outbox":
        return ledger.outbox_rows()
    raise ValueError(f"no table {table!r}")


def load_into(ledger: Held, tables: Iterable[tuple[str, Iterable[list[Row]]]]) -> dict[str, int]:
    """Write another ledger's rows into `ledger`, which must hold nothing; how many rows of each table."""
    if any(rows_of(ledger, table) for table in COPIED):
        raise ConfigurationError(
            "The in-memory ledger is not empty: a copy goes into a new ledger, and nothing was written.",
            field="ledger",
        )
    t = ledger.tables
    written: dict[str, int] = {}
    for table, chunks in tables:
        rows = [row for chunk in chunks for row in chunk]
        written[table] = len(rows)
        for row in rows:
            _load_row(ledger, table, dict(zip(COPIED[table], row, strict=True)))
    for b in t.batches.values():
        if b.provider_batch_id is not None:
            t.by_provider_id[b.provider_batch_id] = b.id
    return written


def _load_row(ledger: Held, table: str, v: dict[str, Any]) -> None:
    t = ledger.tables
    if table == "batches":
        t.batches[v["id"]] = StoredBatch(
            id=v["id"], provider=v["provider"], endpoint=v["endpoint"], provider_batch_id=v["provider_batch_id"],
            state=BatchState(v["state"]), request_count=int(v["request_count"]),
            request_bytes=int(v["request_bytes"]), intent_at=float(v["intent_at"]), owner=v["owner"],
            owner_until=v["owner_until"], phase=v["phase"], submitted_at=v["submitted_at"], ended_at=v["ended_at"],
            collected_at=v["collected_at"], counts=json.loads(v["counts"]) if v["counts"] else None,
            request_id=v["request_id"], note=v["note"],
            create_steps=json.loads(v["create_steps"]) if v["create_steps"] else {}, trace=v["trace"],
        )  # fmt: skip
    elif table == "requests":
        worst = v["worst_case_usd"]
        t.requests[v["key"]] = StoredRequest(
            key=v["key"], custom_id=v["custom_id"], actor=v["actor"], model=v["model"], params=v["params"],
            state=RequestState(v["state"]), batch_id=v["batch_id"], attempts=int(v["attempts"]),
            max_attempts=int(v["max_attempts"]), worst_case_usd=Decimal(str(worst)) if worst is not None else None,
            created_at=float(v["created_at"]), updated_at=float(v["updated_at"]), owner=v["owner"],
            owner_until=v["owner_until"],
        )  # fmt: skip
    elif table == "request_traces":
        t.traces[v["key"]] = v["context"]
    elif table == "batch_members":
        t.members.setdefault(v["batch_id"], {})[v["custom_id"]] = v["key"]
        t.batches_of_key.setdefault(v["key"], []).append(v["batch_id"])
    elif table == "results":
        cost, live = v["cost_usd"], v["live_cost_usd"]
        t.append(
            v["batch_id"], v["key"], RequestState(v["state"]), response=v["response"], error=v["error"],
            cost_usd=Decimal(cost) if cost is not None else None,
            live_cost_usd=Decimal(live) if live is not None else None, at=float(v["at"]),
        )  # fmt: skip
    elif table == "runs":
        ledger.run_store.load_run(v)
    elif table == "run_items":
        ledger.run_store.load_item(v)
    elif table == "agent_runs":
        ledger.agent_journal.open_run(run_of(tuple(v.values())))
    elif table == "agent_journal":
        ledger.agent_journal.put_entry(entry_of(tuple(v.values())))
    elif table.startswith("spend_"):
        ledger.spending.load_row(table, v)
    elif table == "notice_outbox":
        notice = Notice(
            str(v["event_id"]), str(v["kind"]), str(v["url"]), str(v["secret_env"]), bytes(v["body"]),
            float(v["made_at"]), float(v["give_up_at"]), int(v["tries"]), float(v["next_at"]),
        )  # fmt: skip
        ledger.load_notice(notice, delivered_at=v["delivered_at"], given_up_at=v["given_up_at"])
    elif table == "live_quotas":
        stored = cast("dict[str, object]", orjson.loads(str(v["state"])))
        ledger.quota_store.load(str(v["scope"]), ScopeState.from_json(stored))
