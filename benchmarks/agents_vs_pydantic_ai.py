"""N concurrent pydantic-ai agent runs in batch mode: lowtide's model beside pydantic-ai's own `BatchModelRequests`,
over a socket to `lowtide emulator`.

    python benchmarks/agents_vs_pydantic_ai.py [--runs 1000] [--repeat 3] [--processing-seconds 1]
                                               [--poll-interval 1] [--profile DIR] [--out docs/benchmarks.md]

Every measurement gets a fresh `lowtide emulator --processing-seconds S` subprocess, and every contender runs in a
subprocess of its own. Both build the same `Agent` (string output, no instructions: pydantic-ai's Anthropic model
sends a system prompt as a list of blocks, lowtide as a string, and the emulator's answer depends on the request's
exact shape) and run N `agent.run(...)` calls at once with `asyncio.gather`, one short prompt each:

- `lowtide`: `Agent(LowtideModel(actor))`, the actor in batch mode (`batch.poll_interval` = the poll interval,
  `batch.coalesce_window` 0.5 s, a fresh ledger).
- `pydantic-ai`: `Agent(AnthropicModel(...), capabilities=[BatchModelRequests(...)])` pointed at the emulator's base
  URL (`max_requests` 100,000, the API's limit, as lowtide's; `max_wait` 0.5 s; `poll_interval` and
  `max_poll_interval` = the poll interval, so neither side's polling grows).

Each contender prints one JSON line: wall seconds from the first run to every answer in hand, CPU seconds (user +
sys, `resource.getrusage`) and peak RSS of that work, answers, failures, and a checksum of the answer texts (equal
checksums: the same answers). The emulator's `/_emulator/stats` gives the API calls each route received. With
`--profile DIR` each contender runs once more under cProfile and the top functions by own time are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (  # beside this file, not a package
    API_KEY,
    Emulator,
    checksum,
    cpu_seconds,
    key,
    log,
    lowtide_command,
    machine,
    peak_rss_kib,
    prompt,
    source_revision,
    subprocess_environment,
    write_report,
)

MODEL = "claude-sonnet-5-5"
MAX_TOKENS = 64
COALESCE_SECONDS = 0.5
Contender = Literal["lowtide", "pydantic-ai"]
CONTENDERS: tuple[Contender, ...] = ("lowtide", "pydantic-ai")
RESULTS_START = "<!-- agents-results:start -->"
RESULTS_END = "<!-- agents-results:end -->"
_CONTENDER_TIMEOUT_SECONDS = 3600.0


@dataclass
class Outcome:
    texts: dict[str, str] = field(default_factory=dict[str, str])
    failures: dict[str, int] = field(default_factory=dict[str, int])


async def gather_runs(agent: Any, runs: int, outcome: Outcome, **options: Any) -> None:
    async def one(i: int) -> None:
        try:
            result = await agent.run(prompt(i), **options)
        except Exception as error:
            outcome.failures[type(error).__name__] = outcome.failures.get(type(error).__name__, 0) + 1
            return
        outcome.texts[key(i)] = str(result.output)

    await asyncio.gather(*(one(i) for i in range(runs)))


async def lowtide_agents(args: argparse.Namespace, ledger: Path) -> tuple[float, Outcome]:
    """N agent runs over `LowtideModel(actor)`, the actor in batch mode."""
    from pydantic_ai import Agent
    from pydantic_ai.settings import ModelSettings

    from lowtide import Actor
    from lowtide.integrations.pydantic_ai import LowtideModel

    configuration = {
        "name": "benchmark",
        "provider": "anthropic",
        "model": MODEL,
        "max_tokens": MAX_TOKENS,
        "batch_processing": "batch",
        "base_url": args.base_url,
        "ledger": str(ledger),
        "batch": {"poll_interval": args.poll_interval, "coalesce_window": COALESCE_SECONDS},
    }
    outcome = Outcome()
    async with Actor(configuration, api_key=API_KEY) as actor:
        agent = Agent(LowtideModel(actor))
        start = time.perf_counter()
        await gather_runs(agent, args.runs, outcome, model_settings=ModelSettings(max_tokens=MAX_TOKENS))
        return time.perf_counter() - start, outcome


async def pydantic_ai_agents(args: argparse.Namespace) -> tuple[float, Outcome]:
    """N agent runs over pydantic-ai's `AnthropicModel` with its `BatchModelRequests` capability."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import BatchModelRequests
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.settings import ModelSettings

    poll = timedelta(seconds=args.poll_interval)
    batching = BatchModelRequests(
        max_requests=100_000,
        max_wait=timedelta(seconds=COALESCE_SECONDS),
        poll_interval=poll,
        max_poll_interval=poll,
    )
    model = AnthropicModel(MODEL, provider=AnthropicProvider(base_url=args.base_url, api_key=API_KEY))
    agent = Agent(model, capabilities=[batching])
    outcome = Outcome()
    async with batching:
        start = time.perf_counter()
        await gather_runs(agent, args.runs, outcome, model_settings=ModelSettings(max_tokens=MAX_TOKENS))
        return time.perf_counter() - start, outcome


def run_contender(args: argparse.Namespace) -> int:
    """Run one contender in this process and print its measurement as one JSON line."""
    contender: Contender = args.contender
    # Both contenders import the SDK and pydantic-ai (and their own adapter) before the baseline.
    preloads = ["anthropic", "pydantic_ai"]
    preloads += (
        ["lowtide.integrations.pydantic_ai", "lowtide.providers.anthropic"]
        if contender == "lowtide"
        else ["pydantic_ai.models.anthropic"]
    )
    for module in preloads:
        importlib.import_module(module)
    rss_at_start = peak_rss_kib()
    cpu_at_start = cpu_seconds()
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory(prefix="lowtide-bench-") as scratch:
        work = lowtide_agents(args, Path(scratch) / "ledger.sqlite3") if contender == "lowtide" else None
        work = work or pydantic_ai_agents(args)
        if profiler is not None:
            profiler.enable()
        elapsed, outcome = asyncio.run(work)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
    result = {
        "contender": contender,
        "runs": args.runs,
        "wall_seconds": round(elapsed, 4),
        "cpu_seconds": round(cpu_seconds() - cpu_at_start, 3),
        "peak_rss_kib": peak_rss_kib(),
        "rss_at_start_kib": rss_at_start,
        "answers": len(outcome.texts),
        "failures": outcome.failures,
        "checksum": checksum(outcome.texts, args.runs),
    }
    print(json.dumps(result), flush=True)
    return 0


# The orchestrator: one emulator per measurement, one subprocess per contender.


@dataclass
class Measurement:
    contender: Contender
    runs: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss_kib: int
    rss_at_start_kib: int
    answers: int
    failures: dict[str, int]
    checksum: str
    calls: dict[str, int] = field(default_factory=dict[str, int])
    """API calls the emulator received, by route."""
    load: tuple[float, float] = (0.0, 0.0)
    """The 1-minute load average before and after the measurement."""


def measure(contender: Contender, args: argparse.Namespace, runs: int, *, profile: str | None = None) -> Measurement:
    environment = subprocess_environment("cached")
    load_before = os.getloadavg()[0]
    with Emulator(args.processing_seconds, environment) as emulator:
        command = [sys.executable, str(Path(__file__).resolve()), "--contender", contender]
        command += ["--base-url", emulator.url, "--runs", str(runs), "--poll-interval", str(args.poll_interval)]
        if profile is not None:
            command += ["--profile", profile]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_CONTENDER_TIMEOUT_SECONDS, check=False, env=environment
        )
        if done.returncode != 0:
            raise RuntimeError(f"{contender} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        stats = emulator.stats()
    measurement = Measurement(**result)
    measurement.calls = {str(route): int(count) for route, count in stats.get("calls", {}).items()}
    measurement.load = (load_before, os.getloadavg()[0])
    log(
        f"  {contender:<12} {runs:>6} runs {measurement.wall_seconds:7.2f} s  cpu {measurement.cpu_seconds:6.2f} s"
        f"  {measurement.peak_rss_kib / 1024:6.1f} MiB  answers {measurement.answers}  failures {measurement.failures}"
        f"  calls {measurement.calls}  load {measurement.load[0]:.2f}-{measurement.load[1]:.2f}"
    )
    if measurement.answers + sum(measurement.failures.values()) != runs:
        raise RuntimeError(f"{contender} accounted for {measurement.answers} answers and {measurement.failures}")
    return measurement


def run_series(args: argparse.Namespace, runs: int, repeat: int) -> list[Measurement]:
    """`repeat` rounds of both contenders, the order alternating from one round to the next."""
    measurements: list[Measurement] = []
    for round_ in range(repeat):
        order = CONTENDERS if round_ % 2 == 0 else CONTENDERS[::-1]
        log(f"round {round_ + 1}/{repeat} at {runs:,} runs: {' then '.join(order)}")
        measurements.extend(measure(contender, args, runs) for contender in order)
    checksums = {m.checksum for m in measurements if not m.failures}
    if len(checksums) > 1:
        raise RuntimeError(f"The contenders' answers differ (checksums {sorted(checksums)}): not the same work.")
    return measurements


# The report.


def calls_text(calls: dict[str, int]) -> str:
    return ", ".join(f"{route} {count:,}" for route, count in sorted(calls.items())) or "none"


def table(measurements: Sequence[Measurement]) -> list[str]:
    lines = [
        "| runs | contender | rounds | wall time, median (min-max) | CPU time | peak RSS | API calls (last round)"
        " | answers / failures | checksum | load average (1 min) around each run |",
        "|---:|---|---:|---|---:|---:|---|---:|---|---|",
    ]
    by_size: dict[int, dict[Contender, list[Measurement]]] = {}
    for m in measurements:
        by_size.setdefault(m.runs, {}).setdefault(m.contender, []).append(m)
    for runs, by_contender in by_size.items():
        medians: dict[Contender, tuple[float, float, float]] = {}
        for contender, mine in by_contender.items():
            walls = [m.wall_seconds for m in mine]
            wall = statistics.median(walls)
            cpu = statistics.median(m.cpu_seconds for m in mine)
            rss = statistics.median(m.peak_rss_kib for m in mine) / 1024
            medians[contender] = (wall, cpu, rss)
            loads = ", ".join(f"{m.load[0]:.2f}-{m.load[1]:.2f}" for m in mine)
            failures = max(sum(m.failures.values()) for m in mine)
            lines.append(
                f"| {runs:,} | {contender} | {len(mine)} | **{wall:.2f} s** ({min(walls):.2f}-{max(walls):.2f})"
                f" | **{cpu:.2f} s** | **{rss:.0f} MiB** | {calls_text(mine[-1].calls)}"
                f" | {mine[-1].answers:,} / {failures} | `{mine[-1].checksum}` | {loads} |"
            )
        if "lowtide" in medians and "pydantic-ai" in medians:
            ours, theirs = medians["lowtide"], medians["pydantic-ai"]
            lines.append(
                f"| {runs:,} | *pydantic-ai / lowtide* | | **{theirs[0] / ours[0]:.2f}x**"
                f" | **{theirs[1] / ours[1]:.2f}x** | **{theirs[2] / ours[2]:.2f}x** | | | | |"
            )
    return lines


def report(args: argparse.Namespace, measurements: Sequence[Measurement], started: float) -> str:
    from importlib.metadata import version

    command = " ".join(["python benchmarks/agents_vs_pydantic_ai.py", *sys.argv[1:]])
    revision, _ = source_revision()
    lines = [
        f"Run on {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))},"
        f" {(time.time() - started) / 60:.1f} minutes in all.",
        "",
        f"- lowtide source: {revision}; pydantic-ai-slim {version('pydantic-ai-slim')},"
        f" anthropic {version('anthropic')}",
        *machine(),
        f"- command: `{command}`",
        f"- emulator: `lowtide emulator --port 0 --processing-seconds {args.processing_seconds:g}`, a fresh one per"
        f" measurement; poll interval {args.poll_interval:g} s and a {COALESCE_SECONDS:g} s gathering window for both",
        "- ratios: pydantic-ai's median over lowtide's (above 1: lowtide faster or lighter)",
        "",
        *table(measurements),
    ]
    return "\n".join(lines) + "\n"


def profile_both(args: argparse.Namespace) -> None:
    """One more run of each contender under cProfile (not counted above): the top 10 by own time, and by cumulative."""
    directory = Path(args.profile)
    directory.mkdir(parents=True, exist_ok=True)
    for contender in CONTENDERS:
        target = directory / f"{contender}.prof"
        log(f"profiling {contender} at {args.profile_runs:,} runs into {target}")
        measure(contender, args, args.profile_runs, profile=str(target))
        out = io.StringIO()
        stats = pstats.Stats(str(target), stream=out)
        stats.sort_stats("tottime").print_stats(10)
        stats.sort_stats("cumulative").print_stats(25)
        print(f"## {contender}\n{out.getvalue()}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000, help="agent runs per measurement (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, the order alternating (default 3)")
    parser.add_argument(
        "--processing-seconds", type=float, default=1.0, help="the emulator's batch processing time (default 1)"
    )
    parser.add_argument("--poll-interval", type=float, default=1.0, help="both contenders' poll interval (default 1)")
    parser.add_argument("--out", type=Path, default=None, help="write the results into this Markdown file")
    parser.add_argument("--profile", default=None, help="afterwards, each contender once under cProfile into DIR")
    parser.add_argument("--profile-runs", type=int, default=1000, help="agent runs of the profiled run")
    # Internal: run one contender in this process.
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.contender is not None:
        return run_contender(args)
    lowtide_command()  # fails early when the emulator's command is missing
    started = time.time()
    log("warming up (one small uncounted run of each contender: bytecode and disk caches)")
    for contender in CONTENDERS:
        measure(contender, args, 20)
    measurements = run_series(args, args.runs, args.repeat)
    text = report(args, measurements, started)
    print(text)
    if args.out is not None:
        write_report(args.out, text, markers=(RESULTS_START, RESULTS_END))
        log(f"results written to {args.out}")
    if args.profile:
        profile_both(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
