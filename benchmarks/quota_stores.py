"""What one live admission costs through each shared quota store: SQLite (`LedgerQuotaStore`) beside PostgreSQL
(`PostgresQuotaStore`, on a throwaway local cluster over TCP loopback), in the same run.

    pip install -e '.[postgres]'          # and a PostgreSQL server installed (apt-get install postgresql)
    python benchmarks/quota_stores.py --admissions 5000 --repeat 3

Per admission: the client's CPU (process time), the wall time, and for PostgreSQL the server backend's CPU (from
/proc), with the load average before and after. One quota, admissions one after another (as a busy process's are:
they are serial per scope), every limit far away so that none waits.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "features" / "support"))

from postgres import PostgresCluster  # features/support: the tests' throwaway cluster

from lowtide.core.clock import SystemClock
from lowtide.ledger.postgres.quotas import PostgresQuotaStore
from lowtide.ledger.quota_records import QuotaStore
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.sqlite.quotas import LedgerQuotaStore
from lowtide.live.quota import Quota, QuotaLimits

_WARM_UP = 200


def _backend_cpu(cluster: PostgresCluster | None) -> float:
    """Seconds of CPU the cluster's lowtide connections' backends have used."""
    if cluster is None:
        return 0.0
    pids = cluster.sql("SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'lowtide%'").split()
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def _admissions(store: QuotaStore, count: int, cluster: PostgresCluster | None) -> tuple[float, float, float]:
    """Client CPU, wall and server CPU per admission, in microseconds."""
    limits = QuotaLimits(max_concurrency=10**6, ramp_start=10**6, rpm=10**9)
    quota = Quota("benchmark|scope", limits, SystemClock(), store)
    for _ in range(_WARM_UP):
        quota.release(await quota.admit(input_tokens=10, output_tokens=10))
    cpu, wall, server = time.process_time(), time.perf_counter(), _backend_cpu(cluster)
    for _ in range(count):
        quota.release(await quota.admit(input_tokens=10, output_tokens=10))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    server = _backend_cpu(cluster) - server
    return cpu / count * 1e6, wall / count * 1e6, server / count * 1e6


async def _postgres(url: str, count: int, cluster: PostgresCluster) -> tuple[float, float, float]:
    store = PostgresQuotaStore(url)
    try:
        return await _admissions(store, count, cluster)
    finally:
        await store.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--admissions", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with PostgresCluster.start() as cluster, tempfile.TemporaryDirectory() as folder:
        url = cluster.create_database("benchmark")
        for run in range(1, args.repeat + 1):
            ledger = Ledger(Path(folder) / f"ledger-{run}.sqlite3")
            try:
                sqlite = asyncio.run(_admissions(LedgerQuotaStore(ledger), args.admissions, None))
            finally:
                ledger.close()
            postgres = asyncio.run(_postgres(url, args.admissions, cluster))
            print(
                f"run {run}: SQLite {sqlite[0]:6.1f} us CPU {sqlite[1]:7.1f} us wall | PostgreSQL {postgres[0]:6.1f}"
                f" us CPU (client) {postgres[2]:6.1f} us CPU (server) {postgres[1]:7.1f} us wall | load"
                f" {os.getloadavg()[0]:.2f}"
            )


if __name__ == "__main__":
    main()
