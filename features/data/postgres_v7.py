"""How `postgres-v7-tables.json` and `postgres-v7.json` were made: run with lowtide at commit 8cd2383 (PostgreSQL
schema 7) on the path, from the checkout's root,

    PYTHONPATH=<checkout>/src:features/support:features/data python features/data/postgres_v7.py features/data

In a throwaway cluster (`features/support/postgres.py`), it writes the ledger of `postgres_v6.py` (requests in every
place a request can be) and beside it batches whose results are still to come: "b9" of two actors and models ("k",
"m"), "b10" of one ("l", "n", the answer of "l" stored already), and a request of the second actor claimed and
pending ("p"), so that the sums of what is stored after the migration can be checked; then keeps every row of every
table (`postgres-v7-tables.json`: the schema itself is migrations 1 to 7, which are never edited) and what schema 7's
lowtide read from it (`postgres-v7.json`, by `ledger_v5.what_it_reads`).
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
from postgres_v6 import fill

from lowtide.ledger.postgres.ledger import PostgresLedger
from lowtide.ledger.postgres.schema import SCHEMA_VERSION
from lowtide.ledger.records import NewRequest, OutcomeRow, RequestState

TABLES = (
    "identity", "batches", "requests", "request_traces", "batch_members", "pending_requests", "results",
    "result_totals", "owners", "runs", "run_items", "live_quotas",
)  # fmt: skip
"""Every table of schema 7, in an order its references allow."""

KINDS = {"k": ("other", "claude-sonnet-4-5"), "l": ("other", "claude-sonnet-4-5"), "m": ("old", "claude-haiku-4-5"),
         "n": ("other", "claude-sonnet-4-5"), "p": ("other", "claude-sonnet-4-5")}  # fmt: skip
"""The requests added to `postgres_v6.fill`'s, each with its actor and model."""


def fill_more(ledger: PostgresLedger) -> None:
    new = [
        NewRequest(key=k, custom_id=f"c-{k}", actor=actor, model=model, params={"prompt": k}, max_attempts=3,
                   worst_case_usd=Decimal("0.01"), scope="scope-2")
        for k, (actor, model) in KINDS.items()
    ]  # fmt: skip
    ledger.claim(new, owner="host:1", until=100.0, now=15.0)
    for batch, keys, now in (("b9", "km", 16.0), ("b10", "ln", 17.0)):
        ledger.record_intent(batch, provider="anthropic", endpoint="https://api.anthropic.com",
                             members=[(k, f"c-{k}") for k in keys], request_bytes=10, owner="host:1", until=100.0,
                             now=now)  # fmt: skip
        ledger.record_submitted(batch, provider_batch_id=f"msgbatch_{batch}", phase="running", now=now + 0.5)
    ledger.record_outcomes(
        "b10", [OutcomeRow("l", RequestState.SUCCEEDED, answer("l"), cost_usd=Decimal("0.25"),
                           live_cost_usd=Decimal("0.5"))], now=18.0
    )  # fmt: skip


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
    assert SCHEMA_VERSION == 7, f"run this with the lowtide of PostgreSQL schema 7, not {SCHEMA_VERSION}"
    with PostgresCluster.start() as cluster:
        url = cluster.create_database("ledger_v7")
        ledger = PostgresLedger(url)
        fill(ledger)
        fill_more(ledger)
        expected = what_it_reads(cast(Any, ledger))  # typed for the SQLite ledger it was written for
        ledger.close()
        tables = rows_of(url)
    (folder / "postgres-v7-tables.json").write_text(json.dumps(tables, indent=1) + "\n")
    (folder / "postgres-v7.json").write_text(json.dumps(expected, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
