"""What keeping `result_totals` (the dashboard's sums, schema 9) costs the ledger's writer: one batch of N results
(default 100,000) stored in a SQLite ledger of its own in the chunks the collector uses (2,000 doubling to 10,000),
timed in CPU seconds with the totals kept and with them skipped (the same ledger code otherwise), alternating,
`--repeat` times each; the median of each and the difference printed.

    python benchmarks/result_totals_cost.py [--requests 100000] [--repeat 5]

Only `record_outcomes` is timed: the claim and intent before it are the same either way.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import lowtide.ledger.sqlite.batches as batches
from lowtide.ledger.records import BatchIntent, NewRequest, OutcomeRow, RequestState
from lowtide.ledger.sqlite import Ledger


def one(n: int, *, totals: bool) -> float:
    with tempfile.TemporaryDirectory() as folder:
        store = Ledger(Path(folder) / "ledger.sqlite3")
        identity = store.identity()
        keys = [f"k-{i:07d}" for i in range(n)]
        store.claim_new(
            [NewRequest(key=k, custom_id=f"{k}_{identity}", actor="bench", model="m", params={"p": k}) for k in keys],
            owner="o",
            until=1e10,
            now=1000.0,
        )
        store.record_intent(
            BatchIntent(
                "b",
                provider="p",
                endpoint="e",
                members=[(k, f"{k}_{identity}") for k in keys],
                request_bytes=1,
                owner="o",
                until=1e10,
                now=1000.0,
            )
        )
        rows = [
            OutcomeRow(
                k, RequestState.SUCCEEDED, '{"text":"ok"}', cost_usd=Decimal("0.0005"), live_cost_usd=Decimal("0.001")
            )
            for k in keys
        ]
        saved = batches.add_totals
        if not totals:
            vars(batches)["add_totals"] = lambda *_, **__: None  # the writer as it was before schema 9
        try:
            started = time.process_time()
            at, chunk = 0, 2000
            while at < n:
                store.record_outcomes("b", rows[at : at + chunk], now=2000.0)
                at += chunk
                chunk = min(2 * chunk, 10_000)
            took = time.process_time() - started
        finally:
            vars(batches)["add_totals"] = saved
        store.close()
        return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with_totals: list[float] = []
    without: list[float] = []
    for _ in range(args.repeat):
        without.append(one(args.requests, totals=False))
        with_totals.append(one(args.requests, totals=True))
    a, b = statistics.median(without), statistics.median(with_totals)
    print(f"record_outcomes of {args.requests:,} results, CPU median of {args.repeat}:")
    print(f"  without totals {a:.3f} s {sorted(round(x, 3) for x in without)}")
    print(f"  with totals    {b:.3f} s {sorted(round(x, 3) for x in with_totals)}")
    print(f"  difference     {b - a:+.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
