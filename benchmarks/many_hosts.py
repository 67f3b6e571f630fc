"""Many processes, one ledger: N batch-mode calls answered by 1 process on a SQLite ledger, by 1 process on a
PostgreSQL ledger, and by P processes (each its own host, `LOWTIDE_HOST_ID`) sharing one PostgreSQL ledger, each
configuration against a fresh `lowtide emulator` and a fresh ledger.

    python benchmarks/many_hosts.py                       # 100,000 calls, 3 processes, 1 run of each
    python benchmarks/many_hosts.py --calls 20000 --repeat 3 --out docs/benchmarks.md

Reported per configuration: wall time from the first call to the last answer (the slowest process's), CPU time of
the lowtide processes (user + system, summed over them) and per call, the API's calls by route and the batches it
created (from the emulator), and the database server's CPU for the PostgreSQL ones (its processes' CPU from
/proc, before and after). The processes start their calls together (a barrier), after their imports (those the
first call would make too: the SDK's HTTP stack, the PostgreSQL driver). The load average
is recorded with each figure: these machines are shared.

The processes sharing a ledger run twice: with every process's window (`--window`, 0.5 s), and with a window longer
than their claims take (`--hosts-window`, 5 s): a process gathers, as its window closes, the calls the others have
committed by then, so their calls travel in one batch only when each window outlasts the claims of all of them.

Needs PostgreSQL installed (`apt-get install postgresql`): a throwaway cluster is started as the tests start theirs
(`features/support/postgres.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "features" / "support"))

from harness import (  # noqa: E402 - the benchmarks' shared harness, beside this file
    API_KEY,
    Emulator,
    cpu_seconds,
    machine,
    source_revision,
    subprocess_environment,
    write_report,
)
from statement_cpu import by_statement, read_from, statement_table  # noqa: E402 - beside this file

MODEL = "claude-sonnet-5-5"
MARKERS = ("<!-- benchmark-results-many-hosts:start -->", "<!-- benchmark-results-many-hosts:end -->")
_KEY_ENV = "LOWTIDE_BENCHMARK_KEY"
_ROWS = ("sqlite", "postgres", "hosts", "postgres-wide", "hosts-wide")


def meet(barrier: Path, parties: int) -> None:
    """Wait until `parties` workers are ready (imports done): their calls start together."""
    (barrier / f"ready-{os.getpid()}").touch()
    while len(list(barrier.glob("ready-*"))) < parties:
        time.sleep(0.005)


async def worker(base_url: str, ledger: str, first: int, count: int, window: float) -> dict[str, Any]:
    """`count` concurrent calls (keys `call-first` ..) of one batch-mode actor on `ledger`, gathered for `window`
    seconds."""
    from lowtide import Actor

    configuration: dict[str, Any] = {
        "name": "many-hosts",
        "model": MODEL,
        "max_tokens": 64,
        "batch_processing": "batch",
        "base_url": base_url,
        "api_key_env": _KEY_ENV,
        "ledger": ledger,
        "batch": {"poll_interval": 1.0, "coalesce_window": window},
    }
    async with Actor(configuration) as actor:
        cpu_before, started = cpu_seconds(), time.time()
        answers = await asyncio.gather(
            *(actor.run(f"Question {i}", key=f"call-{i}") for i in range(first, first + count))
        )
        ended = time.time()
    return {
        "started": started,
        "ended": ended,
        "cpu": cpu_seconds() - cpu_before,
        "answered": sum(1 for a in answers if a.text),
        "batches": sorted({a.ids.batch_id or "" for a in answers}),
    }


@dataclass
class Run:
    configuration: str
    calls: int
    wall: float
    cpu: float
    server_cpu: float | None
    api_calls: dict[str, int]
    batches: int
    load: float


def _server_cpu(cluster: Any) -> float:
    """CPU seconds the cluster has used so far: its postmaster's own and its reaped backends' (`cutime`, `cstime`:
    a backend's CPU is added to its parent's when it exits), and the backends still running."""
    ticks = os.sysconf("SC_CLK_TCK")
    postmaster = (cluster.data / "postmaster.pid").read_text().split()[0]

    def fields(pid: str) -> list[str]:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()

    own = fields(postmaster)
    total = sum(int(own[i]) for i in (11, 12, 13, 14))
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = fields(entry.name)
            except OSError:
                continue
            if stat[1] == postmaster:
                total += int(stat[11]) + int(stat[12])
    return total / ticks


def measure(
    name: str, calls: int, processes: int, ledger: str, environment: dict[str, str], cluster: Any, window: float
) -> Run:
    with Emulator(2.0, environment) as emulator, tempfile.TemporaryDirectory() as scratch:
        share, extra = divmod(calls, processes)
        before = _server_cpu(cluster) if cluster is not None else None
        children = []
        first = 0
        for p in range(processes):
            count = share + (1 if p < extra else 0)
            argv = [sys.executable, __file__, "--worker", emulator.url, ledger, str(first), str(count), scratch,
                    str(processes), str(window)]  # fmt: skip
            env = {**environment, _KEY_ENV: API_KEY, "LOWTIDE_HOST_ID": f"bench-host-{p}"}
            children.append(subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env))
            first += count
        results = []
        for child in children:
            out, _ = child.communicate(timeout=1800)
            if child.returncode != 0:
                raise SystemExit(f"a worker failed ({child.returncode}): {out}")
            results.append(json.loads(out.strip().splitlines()[-1]))
        server = _server_cpu(cluster) - before if cluster is not None and before is not None else None
        stats = emulator.stats()
    answered = sum(r["answered"] for r in results)
    if answered != calls:
        raise SystemExit(f"{name}: {answered} of {calls} answered")
    created = stats.get("created_custom_ids") or {}
    if len(created) != calls or set(created.values()) != {1}:
        raise SystemExit(f"{name}: the API did not create each request exactly once")
    routes = Counter({str(k): int(v) for k, v in (stats.get("calls") or {}).items()})
    return Run(
        configuration=name,
        calls=calls,
        wall=max(r["ended"] for r in results) - min(r["started"] for r in results),
        cpu=sum(r["cpu"] for r in results),
        server_cpu=server,
        api_calls={route: n for route, n in sorted(routes.items()) if "batches" in route},
        batches=int(stats.get("created_batches") or len({b for r in results for b in r["batches"]})),
        load=os.getloadavg()[0],
    )


def table(runs: list[Run]) -> list[str]:
    lines = [
        "| configuration | runs | wall, median | lowtide CPU | CPU per call | server CPU | batches | API calls |"
        " load (1 min) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for name in dict.fromkeys(r.configuration for r in runs):
        mine = [r for r in runs if r.configuration == name]
        wall, cpu = median(r.wall for r in mine), median(r.cpu for r in mine)
        servers = [r.server_cpu for r in mine if r.server_cpu is not None]
        server = f"{median(servers):.2f} s" if servers else "-"
        calls = ", ".join(f"{route} {n}" for route, n in mine[-1].api_calls.items())
        loads = f"{min(r.load for r in mine):.1f}-{max(r.load for r in mine):.1f}"
        lines.append(
            f"| {name} | {len(mine)} | {wall:.2f} s | {cpu:.2f} s | {cpu / mine[0].calls * 1e6:.0f} us | {server} |"
            f" {median(r.batches for r in mine):.0f} | {calls} | {loads} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--window", type=float, default=0.5, help="every process's coalesce window, in seconds")
    parser.add_argument(
        "--hosts-window",
        type=float,
        default=5.0,
        help="the processes sharing a ledger again, with this window: longer than their claims take, so that their"
        " calls can travel in one batch (the same as --window: no such row)",
    )
    parser.add_argument(
        "--rows",
        default=",".join(_ROWS),
        help="the configurations to run, of " + ", ".join(_ROWS) + " (the wide ones with --hosts-window: one process"
        " given the hosts' window is the like-for-like comparison for them)",
    )
    parser.add_argument(
        "--pg-locale",
        default=os.environ.get("LOWTIDE_PG_LOCALE") or "C",
        help="the PostgreSQL cluster's locale (initdb --locale): en_US.UTF-8, say, as many installations have it, where"
        " the system has it (`locale -a`); default $LOWTIDE_PG_LOCALE, else C",
    )
    parser.add_argument(
        "--statement-cpu",
        action="store_true",
        help="print (to stderr), for each PostgreSQL configuration, the statements that took the most of the"
        " server's CPU, as the server counts it (`log_statement_stats`: `statement_cpu.py`); its logging costs the"
        " server a little, so such a run's server CPU figures are not for comparing",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results into this file's marked block")
    parser.add_argument("--worker", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        base_url, ledger, first, count, barrier, parties, window = args.worker
        # Imported before the barrier, so that the calls start together: lowtide, and the provider's backend with its
        # SDK, which the first call would import (each host pays it once, on a machine of its own); and what the first
        # call imports besides: the HTTP stack the SDK's client imports when it is first built (httpcore2 and trio,
        # 0.4 s of a process's CPU) and the PostgreSQL driver and pool a ledger imports when first opened (0.2 s).
        import httpcore2  # noqa: F401
        import psycopg_pool  # noqa: F401

        import lowtide.providers.anthropic.backend  # noqa: F401

        meet(Path(barrier), int(parties))
        result = asyncio.run(worker(base_url, ledger, int(first), int(count), float(window)))
        print(json.dumps(result))
        return 0

    wanted = [row.strip() for row in args.rows.split(",") if row.strip()]
    if args.hosts_window == args.window:
        wanted = [row for row in wanted if not row.endswith("-wide")]
    unknown = sorted(set(wanted) - set(_ROWS))
    if unknown:
        parser.error(f"unknown rows: {', '.join(unknown)} (known: {', '.join(_ROWS)})")

    from postgres import PostgresCluster  # features/support: the tests' throwaway cluster

    environment = subprocess_environment("cached")
    started, load = time.time(), os.getloadavg()[0]
    runs: list[Run] = []
    with PostgresCluster.start(args.pg_locale) as cluster, tempfile.TemporaryDirectory() as scratch:
        if args.statement_cpu:
            cluster.sql("ALTER SYSTEM SET log_statement_stats = on")
            cluster.sql("SELECT pg_reload_conf()")
        for round_ in range(args.repeat):
            hosts = f"{args.processes} processes (hosts), PostgreSQL"
            wide = f"{args.hosts_window:g} s window"
            configurations = {
                "sqlite": ("1 process, SQLite", 1, str(Path(scratch) / f"ledger-{round_}.sqlite3"), None, args.window),
                "postgres": ("1 process, PostgreSQL", 1, f"one_{round_}", cluster, args.window),
                "hosts": (hosts, args.processes, f"many_{round_}", cluster, args.window),
                "postgres-wide": (f"1 process, PostgreSQL, {wide}", 1, f"onewide_{round_}", cluster, args.hosts_window),
                "hosts-wide": (f"{hosts}, {wide}", args.processes, f"wide_{round_}", cluster, args.hosts_window),
            }
            for row in wanted:
                name, processes, ledger, server, window = configurations[row]
                if server is not None:
                    ledger = cluster.create_database(ledger)
                print(f"{name}: {args.calls:,} calls ...", file=sys.stderr, flush=True)
                log = cluster.directory / "server.log"
                logged = log.stat().st_size if server is not None and args.statement_cpu else None
                run = measure(name, args.calls, processes, ledger, environment, server, window)
                if logged is not None:
                    table_ = statement_table(by_statement(read_from(log, logged)))
                    print(f"  the server's CPU by statement ({name}):", *table_, sep="\n  ", file=sys.stderr)
                print(f"  {run.wall:.2f} s wall, {run.cpu:.2f} s CPU, {run.batches} batch(es)", file=sys.stderr)
                runs.append(run)
    revision, _ = source_revision()
    text = "\n".join(
        [
            f"Run on {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, "
            f"{(time.time() - started) / 60:.1f} minutes in all.",
            "",
            f"- lowtide source: {revision}",
            *machine(),
            f"- load average (1 min) {load:.2f} at the start; each row gives it as measured after each run",
            f"- command: `python benchmarks/many_hosts.py --calls {args.calls} --processes {args.processes}"
            f" --repeat {args.repeat} --window {args.window:g} --hosts-window {args.hosts_window:g}"
            f" --rows {','.join(wanted)} --pg-locale {args.pg_locale}`",
            "- emulator: `lowtide emulator --port 0 --processing-seconds 2.0`, a fresh one per run; poll interval"
            f" 1.0 s, coalesce window {args.window:g} s (where a row names none); PostgreSQL: a throwaway cluster"
            f" (fsync off, locale {args.pg_locale}) on loopback",
            "",
            f"### {args.calls:,} calls",
            "",
            *table(runs),
            "",
        ]
    )
    print(text)
    if args.out is not None:
        write_report(args.out, text, markers=MARKERS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
