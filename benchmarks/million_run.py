"""A million items through `lowtide run`: cost per item as the run grows, memory over time, and a resume after SIGKILL.

    python benchmarks/million_run.py [--sizes 100000,300000,1000000] [--items-per-batch 50000]
                                     [--resume-items 1000000] [--out docs/benchmarks.md]

For each size: a JSONL file of `{"prompt": "question I"}` lines (streamed to disk, kept under `--work-dir` for the
next run), a fresh `lowtide emulator --port 0`, a fresh SQLite ledger, and `lowtide run INPUT --out results.jsonl
--items-per-batch N --max-parallel-batches P --progress none` as a child process. Measured: the child's wall time
(spawn to exit), its CPU time and peak RSS (`os.wait4`), its RSS sampled every `--sample-seconds` from
/proc/PID/status (with the items the ledger holds results for at that moment, read from a read-only connection), the
emulator's CPU time (/proc/PID/stat, before it is stopped) and the 1-minute load average before and after.

Then the resume: the `--resume-items` run is started against a fresh emulator and ledger, killed (SIGKILL) when the
ledger holds results for `--kill-at` of its items, and started again with the same command against the same
emulator. Checked from the emulator's side: every batch it holds, listed through the anthropic SDK, and every custom
id in their results counted (no custom id created twice, none missing), and every item has exactly one line, a
succeeded one, in the output. The resumed run's wall and CPU are set against what the uninterrupted run of the same
size (from the series) still had left at the moment of the kill.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from anthropic import Anthropic

from harness import (
    Emulator,
    log,
    lowtide_command,
    machine,
    source_revision,
    subprocess_environment,
    wait_within,
    write_report,
)

MODEL = "claude-sonnet-5-5"
API_KEY = "sk-ant-benchmark-not-a-real-key"
ROOT = Path(__file__).resolve().parent.parent
RESULTS_START = "<!-- million-results:start -->"
RESULTS_END = "<!-- million-results:end -->"
_TIMEOUT_SECONDS = 6 * 3600.0
_PAGE = 4096


@dataclass
class Sample:
    seconds: float
    rss_kib: int
    items_done: int


@dataclass
class Measurement:
    items: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss_kib: int
    emulator_cpu_seconds: float
    exit_code: int
    samples: list[Sample] = field(default_factory=list[Sample])
    load_before: float = 0.0
    load_after: float = 0.0
    killed_at: float | None = None
    killed_done: int = 0

    @property
    def cpu_us_per_item(self) -> float:
        return self.cpu_seconds / self.items * 1e6

    @property
    def wall_us_per_item(self) -> float:
        return self.wall_seconds / self.items * 1e6


def write_input(path: Path, n: int) -> Path:
    """The JSONL input of `n` prompts, streamed to disk; reused when a complete one is there already."""
    done = path.with_suffix(".complete")
    if path.exists() and done.exists() and done.read_text() == str(n):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for start in range(0, n, 10_000):
            out.write("".join(f'{{"prompt": "question {i}"}}\n' for i in range(start, min(n, start + 10_000))))
    done.write_text(str(n))
    return path


def actor_yaml(base_url: str, poll_interval: float) -> str:
    return "\n".join(
        [
            "name: million-benchmark",
            f"model: {MODEL}",
            "max_tokens: 256",
            "batch_processing: batch",
            f"base_url: {base_url}",
            "batch:",
            f"  poll_interval: {poll_interval}",
            "",
        ]
    )


def child_environment(args: argparse.Namespace, base_url: str) -> dict[str, str]:
    environment = {k: v for k, v in subprocess_environment(args.bytecode).items() if not k.startswith("ANTHROPIC_")}
    environment["ANTHROPIC_API_KEY"] = API_KEY
    environment["ANTHROPIC_BASE_URL"] = base_url
    return environment


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (its own, not its children's), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def items_done(ledger: Path) -> int:
    """Items whose final result the ledger holds (its per-minute totals: a read of a few rows), read-only."""
    if not ledger.exists():
        return 0
    try:
        connection = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=1)
        try:
            row = connection.execute("SELECT coalesce(sum(answers + failures), 0) FROM result_totals").fetchone()
            return int(row[0])
        finally:
            connection.close()
    except sqlite3.Error:
        return 0


def run_child(
    command: list[str],
    scratch: Path,
    environment: dict[str, str],
    *,
    n: int,
    sample_seconds: float,
    kill_at: float | None = None,
) -> tuple[int, float, Any, list[Sample], float | None, int]:
    """Run `command`, sampling its RSS and the ledger's progress; SIGKILL it once `kill_at` of `n` items are done.

    Returns its exit code, wall seconds, resource usage (`wait4`), the samples, and when it was killed (seconds
    from its start) with how many items were done then."""
    ledger = scratch / "ledger.sqlite3"
    samples: list[Sample] = []
    killed: list[tuple[float, int]] = []
    stop = threading.Event()
    with (scratch / "stdout.txt").open("a") as stdout, (scratch / "stderr.txt").open("a") as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=scratch, env=environment, stdout=stdout, stderr=stderr)

        def sample() -> None:
            while not stop.wait(sample_seconds):
                done = items_done(ledger)
                samples.append(Sample(time.perf_counter() - start, rss_kib(process.pid), done))
                if kill_at is not None and not killed and done >= kill_at * n:
                    killed.append((time.perf_counter() - start, done))
                    process.send_signal(signal.SIGKILL)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            code, usage = wait_within(process, _TIMEOUT_SECONDS)
        finally:
            stop.set()
            sampler.join()
        elapsed = time.perf_counter() - start
    killed_at, killed_done = killed[0] if killed else (None, 0)
    return code, elapsed, usage, samples, killed_at, killed_done


def lowtide_run(args: argparse.Namespace, input_file: Path, scratch: Path, base_url: str) -> list[str]:
    actor = scratch / "actor.yaml"
    actor.write_text(actor_yaml(base_url, args.poll_interval))
    return [
        *lowtide_command(), "run", str(input_file), "--actor", str(actor), "--out", str(scratch / "results.jsonl"),
        "--run-id", "million-benchmark", "--items-per-batch", str(args.items_per_batch),
        "--max-parallel-batches", str(args.max_parallel_batches), "--progress", "none",
        "--ledger", str(scratch / "ledger.sqlite3"),
    ]  # fmt: skip


def load_average() -> float:
    return os.getloadavg()[0]


def check_output(path: Path, n: int) -> None:
    """Every item has exactly one line in the output, a succeeded one, in input order."""
    seen = 0
    statuses: Counter[str] = Counter()
    with path.open() as lines:
        for at, line in enumerate(lines):
            row = json.loads(line)
            if row["index"] != at:
                raise RuntimeError(f"{path}: line {at + 1} is item {row['index']}")
            statuses[row["status"]] += 1
            seen += 1
    if seen != n or statuses["succeeded"] != n:
        raise RuntimeError(f"{path}: {seen} lines for {n} items: {dict(statuses)}")


def emulator_custom_ids(url: str) -> Counter[str]:
    """Every custom id in every batch the emulator holds: the batches listed through the anthropic SDK, each
    batch's results read line by line (the SDK's `results()` would build a model of each of a million lines)."""
    client = Anthropic(api_key=API_KEY, base_url=url, max_retries=0)
    counts: Counter[str] = Counter()
    headers = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
    with httpx.Client(timeout=600) as http:
        for batch in client.messages.batches.list(limit=100):
            if batch.results_url is None:
                raise RuntimeError(f"batch {batch.id} has no results ({batch.processing_status})")
            with http.stream("GET", batch.results_url, headers=headers) as answer:
                answer.raise_for_status()
                for line in answer.iter_lines():
                    if line.strip():
                        counts[json.loads(line)["custom_id"]] += 1
    client.close()
    return counts


def check_created_once(emulator: Emulator, n: int) -> str:
    stats = emulator.stats()
    created: dict[str, int] = stats.get("created_custom_ids", {})
    twice = sum(1 for count in created.values() if count != 1)
    in_results = emulator_custom_ids(emulator.url)
    answered_twice = sum(1 for count in in_results.values() if count != 1)
    if len(created) != n or twice or len(in_results) != n or answered_twice:
        raise RuntimeError(
            f"created {len(created)} distinct custom ids of {n} ({twice} more than once); the batches' results hold"
            f" {len(in_results)} ({answered_twice} more than once)"
        )
    batches = stats.get("calls", {})
    return f"{len(created):,} custom ids created once each, {len(in_results):,} answered once each; calls {batches}"


def _fresh(args: argparse.Namespace, name: str) -> tuple[Path, dict[str, str]]:
    """An empty scratch directory `name` under the work directory, and the environment the children run in."""
    scratch = args.work_dir / name
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    return scratch, subprocess_environment(args.bytecode)


def measure(args: argparse.Namespace, n: int, input_file: Path) -> Measurement:
    scratch, environment = _fresh(args, f"run-{n}")
    with Emulator(args.processing_seconds, environment) as emulator:
        command = lowtide_run(args, input_file, scratch, emulator.url)
        load_before = load_average()
        code, wall, usage, samples, _, _ = run_child(
            command, scratch, child_environment(args, emulator.url), n=n, sample_seconds=args.sample_seconds
        )
        load_after = load_average()
        assert emulator._process is not None  # pyright: ignore[reportPrivateUsage]
        emulator_cpu = process_cpu_seconds(emulator._process.pid)  # pyright: ignore[reportPrivateUsage]
        if code != 0:
            raise RuntimeError(f"lowtide run exited {code}:\n{(scratch / 'stderr.txt').read_text()[-4000:]}")
        check_output(scratch / "results.jsonl", n)
        checked = check_created_once(emulator, n) if args.check_ids else "not checked"
    log(f"  {n:,}: {checked}")
    if not args.keep:
        subprocess.run(["rm", "-rf", str(scratch)], check=True)
    return Measurement(
        items=n,
        wall_seconds=wall,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss_kib=usage.ru_maxrss,
        emulator_cpu_seconds=emulator_cpu,
        exit_code=code,
        samples=samples,
        load_before=load_before,
        load_after=load_after,
    )


@dataclass
class Resume:
    first: Measurement
    second: Measurement
    check: str


def resume(args: argparse.Namespace, n: int, input_file: Path) -> Resume:
    scratch, environment = _fresh(args, f"resume-{n}")
    with Emulator(args.processing_seconds, environment) as emulator:
        command = lowtide_run(args, input_file, scratch, emulator.url)
        assert emulator._process is not None  # pyright: ignore[reportPrivateUsage]
        emulator_pid = emulator._process.pid  # pyright: ignore[reportPrivateUsage]
        runs: list[Measurement] = []
        for kill_at in (args.kill_at, None):
            load_before = load_average()
            cpu_before = process_cpu_seconds(emulator_pid)
            code, wall, usage, samples, killed_at, killed_done = run_child(
                command, scratch, child_environment(args, emulator.url), n=n, sample_seconds=args.sample_seconds,
                kill_at=kill_at,
            )  # fmt: skip
            if kill_at is not None and killed_at is None:
                raise RuntimeError(f"the first run ended (exit code {code}) before {kill_at:.0%} of it was done")
            if kill_at is None and code != 0:
                raise RuntimeError(f"the resumed run exited {code}:\n{(scratch / 'stderr.txt').read_text()[-4000:]}")
            runs.append(
                Measurement(
                    items=n,
                    wall_seconds=wall,
                    cpu_seconds=usage.ru_utime + usage.ru_stime,
                    peak_rss_kib=usage.ru_maxrss,
                    emulator_cpu_seconds=process_cpu_seconds(emulator_pid) - cpu_before,
                    exit_code=code,
                    samples=samples,
                    load_before=load_before,
                    load_after=load_average(),
                    killed_at=killed_at,
                    killed_done=killed_done,
                )
            )
            log(f"  resume {'first' if kill_at else 'second'}: exit {code}, {wall:.1f}s wall, killed at {killed_at}")
        check_output(scratch / "results.jsonl", n)
        checked = check_created_once(emulator, n)
    log(f"  resume: {checked}")
    if not args.keep:
        subprocess.run(["rm", "-rf", str(scratch)], check=True)
    return Resume(runs[0], runs[1], checked)


# The report.


def mib(kib: int) -> str:
    return f"{kib / 1024:,.0f}"


def rss_profile(samples: list[Sample], n: int) -> str:
    """RSS at a quarter, half, three quarters and the end of the items' results: flat means bounded."""
    points: list[str] = []
    for share in (0.25, 0.5, 0.75, 1.0):
        at = next((s for s in samples if s.items_done >= share * n), samples[-1] if samples else None)
        points.append(mib(at.rss_kib) if at is not None else "-")
    return " / ".join(points)


def report(
    args: argparse.Namespace, series: list[Measurement], resumed: Resume | None, by_size: dict[int, Measurement]
) -> str:
    revision, _ = source_revision()
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {revision}.",
        *machine(),
        f"- `lowtide run` with `--items-per-batch {args.items_per_batch} --max-parallel-batches"
        f" {args.max_parallel_batches} --progress none`, a SQLite ledger, `--out results.jsonl`; the emulator's"
        f" processing time {args.processing_seconds:g} s, poll interval {args.poll_interval:g} s",
        "",
        "| items | wall s | CPU s | CPU us/item | wall us/item | CPU/item vs smallest | peak RSS MiB"
        " | RSS at 1/4, 1/2, 3/4, all results (MiB) | emulator CPU s | load 1-min before/after |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    base = series[0].cpu_us_per_item if series else 0.0
    for m in series:
        lines.append(
            f"| {m.items:,} | {m.wall_seconds:,.1f} | {m.cpu_seconds:,.1f} | {m.cpu_us_per_item:,.0f}"
            f" | {m.wall_us_per_item:,.0f} | {m.cpu_us_per_item / base:.2f}x | {mib(m.peak_rss_kib)}"
            f" | {rss_profile(m.samples, m.items)} | {m.emulator_cpu_seconds:,.1f}"
            f" | {m.load_before:.2f} / {m.load_after:.2f} |"
        )
    if resumed is not None:
        first, second = resumed.first, resumed.second
        n = first.items
        assert first.killed_at is not None
        lines += [
            "",
            f"Resume at {n:,} items: the first run SIGKILLed {first.killed_at:,.1f} s after its start, when the"
            f" ledger held results for {first.killed_done:,} items ({first.killed_done / n:.0%}); then the same"
            " command again against the same emulator.",
            "",
            "| | wall s | CPU s | peak RSS MiB | emulator CPU s | load 1-min before/after |",
            "|---|---:|---:|---:|---:|---|",
            f"| first run, to the kill | {first.wall_seconds:,.1f} | {first.cpu_seconds:,.1f}"
            f" | {mib(first.peak_rss_kib)} | {first.emulator_cpu_seconds:,.1f}"
            f" | {first.load_before:.2f} / {first.load_after:.2f} |",
            f"| resumed run | {second.wall_seconds:,.1f} | {second.cpu_seconds:,.1f} | {mib(second.peak_rss_kib)}"
            f" | {second.emulator_cpu_seconds:,.1f} | {second.load_before:.2f} / {second.load_after:.2f} |",
        ]
        full = by_size.get(n)
        if full is not None:
            left = full.wall_seconds - first.killed_at
            cpu_left = full.cpu_seconds - first.cpu_seconds
            lines.append(
                f"| what the uninterrupted run (above) had left at that moment | {left:,.1f} | {cpu_left:,.1f} | | | |"
            )
            walls = (
                f"{second.wall_seconds / left:.2f}x"
                if left > 0
                else "none (the first run took longer to its kill than the whole uninterrupted run: the load moved)"
            )
            lines += [
                "",
                f"Resumed wall / what was left: {walls}; resumed CPU / CPU left (the uninterrupted run's CPU less the"
                f" first run's to the kill): {second.cpu_seconds / cpu_left:.2f}x.",
            ]
        lines += ["", f"Checked on the emulator's side: {resumed.check}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--items-per-batch", type=int, default=50_000)
    parser.add_argument("--max-parallel-batches", type=int, default=4)
    parser.add_argument("--processing-seconds", type=float, default=1.0)
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--sample-seconds", type=float, default=1.0)
    parser.add_argument("--resume-items", type=int, default=1_000_000, help="0 skips the resume")
    parser.add_argument("--kill-at", type=float, default=0.5)
    parser.add_argument(
        "--no-check-ids",
        dest="check_ids",
        action="store_false",
        help="skip listing every batch's custom ids for the series (the resume always checks)",
    )
    parser.add_argument("--work-dir", type=Path, default=ROOT / "build" / "bench" / "million")
    parser.add_argument("--keep", action="store_true", help="keep each run's ledger and results")
    parser.add_argument("--bytecode", choices=("cached", "as-is"), default="cached")
    parser.add_argument("--samples-json", type=Path, help="also write every RSS sample here")
    parser.add_argument("--no-warm", dest="warm", action="store_false", help="skip the small uncounted run first")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.work_dir = args.work_dir.resolve()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    series: list[Measurement] = []
    if args.warm:  # one small uncounted run first: bytecode and disk caches warm
        log("warming up")
        warm = argparse.Namespace(**{**vars(args), "keep": False, "check_ids": False})
        measure(warm, 1000, write_input(args.work_dir / "input-1000.jsonl", 1000))
    for n in sizes:
        input_file = write_input(args.work_dir / f"input-{n}.jsonl", n)
        log(f"lowtide run of {n:,} items (load {load_average():.2f})")
        m = measure(args, n, input_file)
        log(f"  {m.wall_seconds:.1f}s wall, {m.cpu_seconds:.1f}s CPU ({m.cpu_us_per_item:.0f} us/item),"
            f" peak RSS {mib(m.peak_rss_kib)} MiB, emulator {m.emulator_cpu_seconds:.1f}s CPU")  # fmt: skip
        series.append(m)
    resumed = None
    if args.resume_items:
        input_file = write_input(args.work_dir / f"input-{args.resume_items}.jsonl", args.resume_items)
        log(f"resume of {args.resume_items:,} items, killed at {args.kill_at:.0%}")
        resumed = resume(args, args.resume_items, input_file)
    text = report(args, series, resumed, {m.items: m for m in series})
    print(text)
    if args.samples_json is not None:
        everything = {str(m.items): [vars(s) for s in m.samples] for m in series}
        if resumed is not None:
            everything["resume-first"] = [vars(s) for s in resumed.first.samples]
            everything["resume-second"] = [vars(s) for s in resumed.second.samples]
        args.samples_json.write_text(json.dumps(everything))
    if args.out is not None:
        write_report(args.out, text, markers=(RESULTS_START, RESULTS_END))
    return 0


if __name__ == "__main__":
    sys.exit(main())
