"""How `postgres-v6-tables.json` and `postgres-v6.json` were made: run with lowtide at commit 9fe0f5a (PostgreSQL
schema 6) on the path, from the checkout's root,

    PYTHONPATH=<checkout>/src:features/support:features/data python features/data/postgres_v6.py features/data

In a throwaway cluster (`features/support/postgres.py`), it writes a PostgreSQL ledger whose requests are in every
place a request can be, as `ledger_v5.py` does for the SQLite ledger (answered, failed, in a batch the API has, in an
intent, requeued for a retry and sent again, requeued and waiting, back from a refused create, back from an intent
given up, claimed and pending, answered live in a run), then keeps every row of every table
(`postgres-v6-tables.json`: the schema itself is migrations 1 to 6, which are never edited) and what schema 6's
lowtide read from it (`postgres-v6.json`, by `ledger_v5.what_it_reads`). The migration scenario loads the rows into
a database at schema 6 and reads the same from it with the current lowtide.
"""

# pyright: reportCallIssue=false
# (Written against the lowtide of the commit above, whose `record_intent` took its fields as keywords: it is run with
# that lowtide, never this one.)

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

from ledger_v5 import answer, what_it_reads
from postgres import PostgresCluster

from lowtide.ledger.postgres.ledger import PostgresLedger
from lowtide.ledger.postgres.schema import SCHEMA_VERSION
from lowtide.ledger.records import BatchState, NewRequest, OutcomeRow, RequestState
from lowtide.ledger.runs import LiveAnswer, NewItem

TABLES = (
    "identity", "batches", "requests", "request_traces", "batch_members", "results", "result_totals", "owners", "runs",
    "run_items", "live_quotas",
)  # fmt: skip
"""Every table of schema 6, in an order its references allow."""


def fill(ledger: PostgresLedger) -> None:
    """The requests of `ledger_v5.py`, in the same places."""
    keys = "abcdefghi"
    new = [
        NewRequest(key=k, custom_id=f"c-{k}", actor="old", model="claude-haiku-4-5", params={"prompt": k},
                   max_attempts=3, worst_case_usd=Decimal("0.01"), scope="scope-1")
        for k in keys
    ]  # fmt: skip
    ledger.claim(new, owner="host:1", until=100.0, now=1.0)
    member = {k: f"c-{k}" for k in keys}

    def intent(batch: str, ks: str, now: float) -> None:
        ledger.record_intent(batch, provider="anthropic", endpoint="https://api.anthropic.com",
                             members=[(k, member[k]) for k in ks], request_bytes=10, owner="host:1", until=100.0,
                             now=now)  # fmt: skip

    intent("b1", "abci", 2.0)
    ledger.record_submitted("b1", provider_batch_id="msgbatch_1", phase="running", now=3.0)
    ledger.record_status("b1", phase="ended", counts={"succeeded": 1}, ended_at=4.0)
    ledger.record_outcomes(
        "b1",
        [
            OutcomeRow("a", RequestState.SUCCEEDED, answer("a"), cost_usd=Decimal("0.001"),
                       live_cost_usd=Decimal("0.002")),
            OutcomeRow("b", RequestState.PENDING, error={"type": "overloaded_error"}),
            OutcomeRow("c", RequestState.FAILED, error={"type": "invalid_request_error", "message": "bad"}),
            OutcomeRow("i", RequestState.PENDING, error={"type": "expired"}),
        ],
        now=5.0,
    )  # fmt: skip
    ledger.requeue(["b", "i"], owner="host:1", until=100.0, now=5.0)
    ledger.record_collected("b1", state=BatchState.COLLECTED, now=5.0)
    intent("b2", "bd", 6.0)
    ledger.record_submitted("b2", provider_batch_id="msgbatch_2", phase="running", now=7.0)
    intent("b3", "e", 8.0)
    ledger.record_refused("b3", note="refused: 400", now=9.0)
    intent("b4", "f", 10.0)
    ledger.record_unknown("b4", note="the create's answer was lost")
    intent("b5", "h", 11.0)
    ledger.record_unknown("b5", note="the create's answer was lost")
    ledger.give_up_intent("b5", note="no batch found", owner="host:2", until=200.0, now=12.0)
    runs = ledger.run_store
    runs.create("run-1", actor="old", configuration={}, options={}, fingerprint="f",
                items=[NewItem(i, None, {"prompt": k}, k) for i, k in enumerate(keys + "j")], now=13.0)  # fmt: skip
    runs.record_live("run-1", [LiveAnswer(9, "j", "old", "claude-haiku-4-5", {"prompt": "j"}, RequestState.SUCCEEDED,
                                          answer("j"), None, Decimal("0.002"))], now=14.0)  # fmt: skip


def rows_of(url: str) -> dict[str, dict[str, Any]]:
    """Every table's columns and rows (in a stable order), as JSON holds them."""
    import psycopg

    tables: dict[str, dict[str, Any]] = {}
    with psycopg.connect(url) as db:
        for table in TABLES:
            cursor = db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
            columns = [c.name for c in cursor.description or ()]
            tables[table] = {"columns": columns, "rows": [list(row) for row in cursor.fetchall()]}
    return json.loads(json.dumps(tables, default=str))


def main(folder: Path) -> None:
    assert SCHEMA_VERSION == 6, f"run this with the lowtide of PostgreSQL schema 6, not {SCHEMA_VERSION}"
    with PostgresCluster.start() as cluster:
        url = cluster.create_database("ledger_v6")
        ledger = PostgresLedger(url)
        fill(ledger)
        expected = what_it_reads(cast(Any, ledger))  # typed for the SQLite ledger it was written for
        ledger.close()
        tables = rows_of(url)
    (folder / "postgres-v6-tables.json").write_text(json.dumps(tables, indent=1) + "\n")
    (folder / "postgres-v6.json").write_text(json.dumps(expected, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
