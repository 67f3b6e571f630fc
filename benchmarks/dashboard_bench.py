"""How fast `lowtide dashboard`'s pages are read from a large SQLite ledger: a run of N requests (default 1,000,000)
in batches of 10,000, most collected (2% failed), the last tenth still waiting; then every view the pages ask for,
timed cold (nothing cached) `--repeat` times, the median and the slowest printed; and the Runs page as the dashboard
serves it (its first read, the time to its first count, a fresh and a stale read), with the machine's load average
before and after (the machines are shared: read the times beside it).

    python benchmarks/dashboard_bench.py                       # 1,000,000 requests: a few minutes to build
    python benchmarks/dashboard_bench.py --requests 100000 --ledger /tmp/dash.sqlite3 --keep

The ledger is written through `LedgerStore`'s own methods, as lowtide writes it; the views are read through
`LedgerStore.views` and `DashboardData`, as the dashboard reads them (without HTTP).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from lowtide.dashboard.data import DashboardData
from lowtide.ledger.records import BatchCreated, BatchIntent, BatchState, NewRequest, OutcomeRow, RequestState
from lowtide.ledger.runs import NewItem
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import open_ledger

PER_BATCH = 10_000
OWNER = "bench-owner"
RUN = "bench-run"


def build(store: Ledger, n: int, now: float) -> None:
    identity = store.identity()
    keys = [f"bench-{i:07d}" for i in range(n)]
    store.run_store.create(
        RUN,
        actor="bench",
        configuration={"model": "model-small"},
        options={"max_cost_usd": "1000"},
        fingerprint=RUN,
        items=[NewItem(index=i, item_id=None, job={"prompt": key}, key=key) for i, key in enumerate(keys)],
        now=now - 7200,
    )
    batches = [keys[start : start + PER_BATCH] for start in range(0, n, PER_BATCH)]
    waiting_from = len(batches) - max(1, len(batches) // 10)
    for number, chunk in enumerate(batches):
        at = now - 7200 + number * (7000 / len(batches))
        store.claim_new(
            [
                NewRequest(
                    key=key,
                    custom_id=f"{key}_{identity}",
                    actor="bench",
                    model="model-small" if i % 3 else "model-large",
                    params={"model": "model-small", "max_tokens": 64, "messages": [{"role": "user", "content": key}]},
                    worst_case_usd=Decimal("0.001"),
                )
                for i, key in enumerate(chunk)
            ],
            owner=OWNER,
            until=at + 3600,
            now=at,
        )
        batch_id = f"bench-batch-{number:04d}"
        store.record_intent(
            BatchIntent(
                batch_id,
                provider="anthropic" if number % 2 else "openai",
                endpoint="http://127.0.0.1:9",
                members=[(key, f"{key}_{identity}") for key in chunk],
                request_bytes=100 * len(chunk),
                owner=OWNER,
                until=at + 3600,
                now=at,
            )
        )
        store.record_submitted(BatchCreated(batch_id, provider_batch_id=f"api-{batch_id}", phase="running", now=at))
        if number >= waiting_from:
            continue
        error = {"class": "BatchRequestErrored", "error_type": "overloaded_error", "message": "overloaded"}
        outcomes = [
            OutcomeRow(key, RequestState.FAILED, error=error)
            if i % 50 == 0
            else OutcomeRow(
                key, RequestState.SUCCEEDED, {"text": "ok"}, cost_usd=Decimal("0.0005"), live_cost_usd=Decimal("0.001")
            )
            for i, key in enumerate(chunk)
        ]
        store.record_status(batch_id, phase="ended", counts={"succeeded": len(chunk)}, ended_at=at + 300)
        store.record_outcomes(batch_id, outcomes, now=at + 300)
        store.record_collected(batch_id, state=BatchState.COLLECTED, now=at + 300)
        print(f"  batch {number + 1}/{len(batches)}", file=sys.stderr, end="\r")
    print(file=sys.stderr)


def timed(name: str, work: Callable[[], object], repeat: int) -> tuple[str, float, float, float]:
    """(name, median wall seconds, slowest, median CPU seconds): on a shared machine the wall time is mostly waiting
    for a core, and the CPU time what the view costs."""
    seconds: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        started, used = time.perf_counter(), time.process_time()
        work()
        seconds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    return name, statistics.median(seconds), max(seconds), statistics.median(cpu)


def as_a_browser_sees_it(location: Path, repeat: int) -> list[tuple[str, float, float, float]]:
    """The Runs page read as `lowtide dashboard` serves it, its stores opened as the command opens them (the process's
    store for the pages, one of its own for the counts): first read as the dashboard starts (answered within its
    patience, the run shown as being counted), then the time until the run is counted, then read fresh, then read
    once stale (handed out at once while the next count is made in the background). The CPU of a read is the reading
    thread's own (`thread_time`); of a count, the whole process's."""
    store = open_ledger(location, read_only=True)
    rows: list[tuple[str, float, float, float]] = []
    first: list[tuple[float, float]] = []
    counted: list[tuple[float, float]] = []
    fresh: list[tuple[float, float]] = []
    stale: list[tuple[float, float]] = []
    recount: list[tuple[float, float]] = []
    names = [f"run:{RUN}", f"timeline:{RUN}", f"run-batches:{RUN}"]  # what the Runs page counts of a run
    for _ in range(repeat):
        counting = open_ledger(location, read_only=True, own=True)
        ahead = [0.0]  # the dashboard's clock: the real one, moved on to make every count stale
        data = DashboardData(store, counting=counting, clock=lambda ahead=ahead: time.time() + ahead[0])
        asked, cpu, used = time.perf_counter(), time.process_time(), time.thread_time()
        data.runs()
        first.append((time.perf_counter() - asked, time.thread_time() - used))
        while any(data.cache.computed_at(name) is None for name in names):
            time.sleep(0.01)
            data.runs()  # as the page polls: the chart and the batches are counted once the run is
        counted.append((time.perf_counter() - asked, time.process_time() - cpu))
        started, used = time.perf_counter(), time.thread_time()
        data.runs()
        fresh.append((time.perf_counter() - started, time.thread_time() - used))
        ahead[0] += 3600  # every count stale
        before = [data.cache.computed_at(name) for name in names]
        asked, cpu = time.perf_counter(), time.process_time()
        used = time.thread_time()
        data.runs()
        stale.append((time.perf_counter() - asked, time.thread_time() - used))
        while any(data.cache.computed_at(name) == then for name, then in zip(names, before, strict=True)):
            time.sleep(0.01)
        recount.append((time.perf_counter() - asked, time.process_time() - cpu))
        counting.close()
    for name, measured in (
        ("runs page, first read as the dashboard starts (the run shown as being counted)", first),
        ("  from that read to the run counted: progress, chart, batches (the process's CPU)", counted),
        ("runs page, read fresh (as counted)", fresh),
        ("runs page, read stale (handed out; counted again in the background)", stale),
        ("  from that read to the run counted again: progress, chart, ETA (the process's CPU)", recount),
    ):
        walls = [w for w, _ in measured]
        rows.append((name, statistics.median(walls), max(walls), statistics.median(c for _, c in measured)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ledger", type=Path, help="build (or, if it exists, reuse) the ledger here")
    parser.add_argument("--keep", action="store_true", help="keep the ledger afterwards")
    args = parser.parse_args()
    path = args.ledger or Path(tempfile.mkdtemp(prefix="dashboard-bench-")) / "ledger.sqlite3"
    now = time.time()
    if not path.exists():
        started = time.perf_counter()
        store = Ledger(path)
        build(store, args.requests, now)
        store.close()
        print(f"built {args.requests:,} requests in {time.perf_counter() - started:.0f} s: {path}", file=sys.stderr)
    started = time.perf_counter()
    Ledger(path).close()  # brought to this lowtide's schema, where it was written by an older one
    print(f"opened (and migrated, if it had to be) in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    store = Ledger(path, read_only=True)
    views = store.views
    key = f"bench-{args.requests // 2:07d}"
    load_before = os.getloadavg()
    rows = [
        *as_a_browser_sees_it(path, args.repeat),
        timed("  views.run_progress", lambda: views.run_progress(RUN), args.repeat),
        timed("  views.timeline of the run", lambda: views.timeline(60.0, run_id=RUN), args.repeat),
        timed("batches page (first 50)", lambda: DashboardData(store).batches(page=0), args.repeat),
        timed(
            "batches page (last)",
            lambda: DashboardData(store).batches(page=(-(-args.requests // PER_BATCH) - 1) // 50),
            3,
        ),
        timed("money page", lambda: DashboardData(store).money(), args.repeat),
        timed("failures page", lambda: DashboardData(store).failures(), args.repeat),
        timed("one request, by key", lambda: DashboardData(store).request(key), args.repeat),
        timed(
            "one request, by custom id",
            lambda: DashboardData(store).request(f"{key}_{store.identity()}"),
            args.repeat,
        ),
        timed("one request, unknown", lambda: DashboardData(store).request("no-such-key"), args.repeat),
    ]
    load_after = os.getloadavg()
    store.close()
    print(
        f"\n{args.requests:,} requests, {args.requests // PER_BATCH} batches; cold reads (no cache), {args.repeat} runs"
    )
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f},", end=" ")
    print(f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} cores\n")
    print("| view | median | slowest | CPU, median |\n|---|---:|---:|---:|")
    for name, median, slowest, cpu in rows:
        print(f"| {name} | {median * 1000:,.0f} ms | {slowest * 1000:,.0f} ms | {cpu * 1000:,.0f} ms |")
    if not args.keep and args.ledger is None:
        for file in path.parent.iterdir():
            file.unlink()
        path.parent.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
