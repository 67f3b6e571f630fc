"""lowtide's live mode beside async-batch-llm and the official SDK with a semaphore, over a socket to a rate-limited
`lowtide emulator`.

    python benchmarks/live_vs_peers.py [--calls 2000] [--rpm 1200] [--latency 0.5,0.005] [--max-tokens 16]
                                       [--concurrency 64] [--repeat 3] [--abl-venv /tmp/ablenv]
                                       [--out docs/benchmarks.md]

Every measurement gets a fresh `lowtide emulator --rpm R --latency F,P` subprocess (the same limits and latency for
every contender), and every contender runs in a subprocess of its own. The contenders:

- `sdk-semaphore` (the floor): `anthropic.AsyncAnthropic`, an `asyncio.Semaphore(concurrency)` around each
  `messages.create`, `asyncio.gather` of them all; no limiter, the SDK's own retries (`--sdk-max-retries`), which
  honour `retry-after`.
- `lowtide`: one `Actor` in live mode (`live.max_concurrency` = concurrency, `live.rpm` = the limit, a fresh ledger:
  the defaults otherwise, so the quota is shared through the ledger), `asyncio.gather` of N `actor.run(...)`.
- `lowtide-map`: the same actor, `actor.map(prompts, mode="live")`: a bulk run, each answer stored in the ledger.
- `async-batch-llm` (0.28, in its own virtual environment, `--abl-venv`, unmodified): `process_prompts` over a
  `CallableStrategy` calling the same SDK (`max_retries=0`: async-batch-llm retries), `ProcessorConfig(concurrency,
  max_requests_per_minute = the limit, rate_limit=RateLimitConfig(cooldown_seconds=--abl-cooldown))`. Its default
  cooldown after a 429 is 300 s, which no rate limit of a minute needs; the server's `retry-after` is still its floor.

Each contender prints one JSON line: wall seconds from its first call to every answer in hand, CPU seconds and peak
RSS, answers, failures (and how many were 429s) and a checksum of the answer texts (all must match: same work). The
emulator's `/_emulator/stats` gives the calls it received, the 429s it sent (`rate_limited`) and the answers it
delivered. The order rotates across rounds; medians are reported, each with the load average around it.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import math
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
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
Contender = Literal["sdk-semaphore", "lowtide", "lowtide-map", "async-batch-llm"]
CONTENDERS: tuple[Contender, ...] = ("sdk-semaphore", "lowtide", "lowtide-map", "async-batch-llm")
FLOOR: Contender = "sdk-semaphore"
ABL_VERSION = "0.28"
RESULTS_START = "<!-- live-results:start -->"
RESULTS_END = "<!-- live-results:end -->"
_CONTENDER_TIMEOUT_SECONDS = 3600.0


@dataclass
class Outcome:
    """What a contender saw: the answers, and each failure by kind."""

    texts: dict[str, str] = field(default_factory=dict[str, str])
    failures: dict[str, int] = field(default_factory=dict[str, int])
    rate_limited: int = 0
    """Failures the caller received that were 429s."""
    first_answer: float = 0.0
    """Seconds from the first call to the first answer in hand (where the contender lets us see it)."""

    def fail(self, kind: str, *, rate_limit: bool) -> None:
        self.failures[kind] = self.failures.get(kind, 0) + 1
        self.rate_limited += rate_limit


# The contenders, each run in its own process (`--contender NAME`).


async def sdk_semaphore(args: argparse.Namespace) -> tuple[float, Outcome]:
    """What a careful user of the official SDK writes: a semaphore, a gather, and the SDK's retries."""
    from anthropic import AsyncAnthropic, RateLimitError

    outcome = Outcome()
    limit = asyncio.Semaphore(args.concurrency)
    async with AsyncAnthropic(base_url=args.base_url, api_key=API_KEY, max_retries=args.sdk_max_retries) as client:

        async def one(i: int) -> None:
            async with limit:
                try:
                    message = await client.messages.create(
                        model=MODEL, max_tokens=args.max_tokens, messages=[{"role": "user", "content": prompt(i)}]
                    )
                except Exception as error:
                    outcome.fail(type(error).__name__, rate_limit=isinstance(error, RateLimitError))
                    return
            outcome.texts[key(i)] = "".join(block.text for block in message.content if block.type == "text")
            outcome.first_answer = outcome.first_answer or time.perf_counter() - start

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(args.calls)))
        return time.perf_counter() - start, outcome


def _lowtide_configuration(args: argparse.Namespace, ledger: Path) -> dict[str, Any]:
    return {
        "name": "benchmark",
        "provider": "anthropic",
        "model": MODEL,
        "max_tokens": args.max_tokens,
        "batch_processing": "live",
        "base_url": args.base_url,
        "ledger": str(ledger),
        "live": {
            "max_concurrency": args.concurrency,
            "rpm": args.rpm,
            **({"ramp_start": args.lowtide_ramp_start} if args.lowtide_ramp_start else {}),
        },
    }


async def lowtide_run(args: argparse.Namespace, ledger: Path) -> tuple[float, Outcome]:
    """N concurrent `actor.run(..., mode="live")` calls of one actor."""
    from lowtide import Actor
    from lowtide.errors import RateLimitError

    outcome = Outcome()
    async with Actor(_lowtide_configuration(args, ledger), api_key=API_KEY) as actor:

        async def one(i: int) -> None:
            try:
                response = await actor.run(prompt(i), mode="live")
            except Exception as error:
                outcome.fail(type(error).__name__, rate_limit=isinstance(error, RateLimitError))
                return
            outcome.texts[key(i)] = response.text
            outcome.first_answer = outcome.first_answer or time.perf_counter() - start

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(args.calls)))
        return time.perf_counter() - start, outcome


async def lowtide_map(args: argparse.Namespace, ledger: Path) -> tuple[float, Outcome]:
    """One live bulk run, `actor.map(prompts, mode="live")`: each answer stored in the ledger before it is handed on."""
    from lowtide import Actor
    from lowtide.errors import RateLimitError

    outcome = Outcome()
    async with Actor(_lowtide_configuration(args, ledger), api_key=API_KEY) as actor:
        start = time.perf_counter()
        result = await actor.map([prompt(i) for i in range(args.calls)], mode="live", run_id="benchmark")
        elapsed = time.perf_counter() - start
    for i, item in enumerate(result):
        if item.response is not None and item.ok:
            outcome.texts[key(i)] = item.response.text
        else:
            error = item.error
            outcome.fail(type(error).__name__ if error is not None else str(item.status), rate_limit=False)
            outcome.rate_limited += isinstance(error, RateLimitError)
    return elapsed, outcome


async def abl_process_prompts(args: argparse.Namespace) -> tuple[float, Outcome]:
    """async-batch-llm's `process_prompts` over the same SDK call, at the same limits (run under `--abl-venv`)."""
    from anthropic import AsyncAnthropic
    from async_batch_llm import (  # pyright: ignore[reportMissingImports]  (its own environment)
        CallableStrategy,
        CallOutcome,
        ProcessorConfig,
        RateLimitConfig,
        process_prompts,
    )

    outcome = Outcome()
    async with AsyncAnthropic(base_url=args.base_url, api_key=API_KEY, max_retries=0) as client:

        async def invoke(text: str, *, attempt: int, timeout: float, state: object) -> Any:  # noqa: ASYNC109
            message = await client.messages.create(
                model=MODEL,
                max_tokens=args.max_tokens,
                messages=[{"role": "user", "content": text}],
                timeout=timeout,
            )
            answer = "".join(block.text for block in message.content if block.type == "text")
            usage = {"input_tokens": message.usage.input_tokens, "output_tokens": message.usage.output_tokens}
            return CallOutcome(answer, token_usage=usage)

        config = ProcessorConfig(
            concurrency=args.concurrency,
            max_requests_per_minute=args.rpm,
            rate_limit=RateLimitConfig(cooldown_seconds=args.abl_cooldown),
        )
        start = time.perf_counter()
        batch = await process_prompts(
            CallableStrategy(invoke), [(key(i), prompt(i)) for i in range(args.calls)], config=config
        )
        elapsed = time.perf_counter() - start
    for result in batch.results:
        if result.success:
            outcome.texts[result.item_id] = result.output
        else:
            error = str(result.error)
            outcome.fail(error.split(":", 1)[0][:60], rate_limit="429" in error or "rate limit" in error.lower())
    return elapsed, outcome


def run_contender(args: argparse.Namespace) -> int:
    """Run one contender in this process and print its measurement as one JSON line."""
    contender: Contender = args.contender
    import anthropic  # noqa: F401  (every contender imports the SDK before the baseline)

    if contender.startswith("lowtide"):
        import lowtide.providers.anthropic  # noqa: F401
    elif contender == "async-batch-llm":
        import async_batch_llm  # pyright: ignore[reportMissingImports]

        del async_batch_llm
    rss_at_start = peak_rss_kib()
    cpu_at_start = cpu_seconds()
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory(prefix="lowtide-bench-") as scratch:
        ledger = Path(scratch) / "ledger.sqlite3"
        if contender == "sdk-semaphore":
            work = sdk_semaphore(args)
        elif contender == "lowtide":
            work = lowtide_run(args, ledger)
        elif contender == "lowtide-map":
            work = lowtide_map(args, ledger)
        else:
            work = abl_process_prompts(args)
        if profiler is not None:
            profiler.enable()
        elapsed, outcome = asyncio.run(work)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
    result = {
        "contender": contender,
        "calls": args.calls,
        "wall_seconds": round(elapsed, 4),
        "cpu_seconds": round(cpu_seconds() - cpu_at_start, 3),
        "peak_rss_kib": peak_rss_kib(),
        "rss_at_start_kib": rss_at_start,
        "answers": len(outcome.texts),
        "failures": outcome.failures,
        "surfaced_429": outcome.rate_limited,
        "first_answer_seconds": round(outcome.first_answer, 3),
        "checksum": checksum(outcome.texts, args.calls),
    }
    print(json.dumps(result), flush=True)
    return 0


# The orchestrator: one emulator per measurement, one subprocess per contender.


@dataclass
class Measurement:
    contender: Contender
    calls: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss_kib: int
    rss_at_start_kib: int
    answers: int
    failures: dict[str, int]
    surfaced_429: int
    checksum: str
    first_answer_seconds: float = 0.0
    process_cpu_seconds: float = 0.0
    """The contender's whole process (interpreter start and imports included), from `os.wait4`."""
    requests: int = 0
    """Calls the emulator received (429s included)."""
    server_429: int = 0
    delivered: int = 0
    """Answers the emulator delivered."""
    load: tuple[float, float] = (0.0, 0.0)
    """The 1-minute load average before and after the measurement."""

    @property
    def retries(self) -> int:
        return self.requests - self.calls


def contender_command(contender: Contender, args: argparse.Namespace, base_url: str) -> list[str]:
    python = sys.executable if contender != "async-batch-llm" else str(Path(args.abl_venv) / "bin" / "python")
    command = [python, str(Path(__file__).resolve()), "--contender", contender, "--base-url", base_url]
    for option in (
        "calls",
        "rpm",
        "max_tokens",
        "concurrency",
        "sdk_max_retries",
        "abl_cooldown",
        "lowtide_ramp_start",
    ):
        command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    return command


def measure(contender: Contender, args: argparse.Namespace, *, calls: int | None = None) -> Measurement:
    environment = subprocess_environment(args.bytecode)
    settings = argparse.Namespace(**{**vars(args), "calls": calls if calls is not None else args.calls})
    load_before = os.getloadavg()[0]
    with Emulator(0, environment, options=emulator_options(args)) as emulator:
        command = contender_command(contender, settings, emulator.url)
        if args.profile_into is not None:
            command += ["--profile", args.profile_into]
        # Nothing else is reaped while the contender runs (the emulator outlives it): the children's CPU time grows
        # by the contender's alone.
        children_before = children_cpu_seconds()
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_CONTENDER_TIMEOUT_SECONDS, check=False, env=environment
        )
        usage = round(children_cpu_seconds() - children_before, 3)
        stdout, stderr = done.stdout, done.stderr
        if done.returncode != 0:
            raise RuntimeError(f"{contender} failed ({done.returncode}):\n{stderr[-4000:]}")
        result = json.loads(stdout.strip().splitlines()[-1])
        stats = emulator.stats()
    measurement = Measurement(**result)
    measurement.process_cpu_seconds = usage
    measurement.requests = int(stats.get("calls", {}).get("messages.create", 0))
    measurement.server_429 = int(stats.get("rate_limited", 0))
    measurement.delivered = sum(int(n) for n in stats.get("live_answers", {}).values())
    measurement.load = (load_before, os.getloadavg()[0])
    log(
        f"  {contender:<15} {measurement.wall_seconds:7.2f} s  cpu {measurement.cpu_seconds:6.2f} s"
        f" ({measurement.process_cpu_seconds:.2f} s process)  {measurement.peak_rss_kib / 1024:6.1f} MiB"
        f"  requests {measurement.requests}  429s {measurement.server_429}  failures {measurement.failures}"
        f"  first answer {measurement.first_answer_seconds:.2f} s"
        f"  load {measurement.load[0]:.2f}-{measurement.load[1]:.2f}"
    )
    if measurement.answers + sum(measurement.failures.values()) != measurement.calls:
        raise RuntimeError(f"{contender} accounted for {measurement.answers} answers and {measurement.failures}")
    return measurement


def children_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's children reaped so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def emulator_options(args: argparse.Namespace) -> list[str]:
    return ["--rpm", str(args.rpm), "--latency", args.latency]


def run_series(contenders: Sequence[Contender], args: argparse.Namespace) -> list[Measurement]:
    """`repeat` rounds of every contender, the order rotating from one round to the next."""
    measurements: list[Measurement] = []
    for round_ in range(args.repeat):
        shift = round_ % len(contenders)
        order = [*contenders[shift:], *contenders[:shift]]
        if round_ % 2:
            order.reverse()
        log(f"round {round_ + 1}/{args.repeat} at {args.calls} calls: {' then '.join(order)}")
        measurements.extend(measure(contender, args) for contender in order)
    checksums = {m.checksum for m in measurements if not m.failures}
    if len(checksums) > 1:
        raise RuntimeError(f"The contenders' answers differ (checksums {sorted(checksums)}): not the same work.")
    return measurements


# The report.


def ideal_seconds(args: argparse.Namespace) -> float:
    """The least wall time any client can take: the emulator's bucket starts full (`rpm` calls at once), then
    refills at `rpm / 60` a second; plus one call's latency at `max_tokens` (answers are at most that long). Or, when
    the concurrency binds first, the calls in waves of `concurrency`, each taking that latency."""
    fixed, per_token = (float(part) for part in args.latency.split(","))
    latency = fixed + per_token * args.max_tokens
    by_rate = max(0, args.calls - args.rpm) * 60.0 / args.rpm + latency
    return max(by_rate, math.ceil(args.calls / args.concurrency) * latency)


@dataclass(frozen=True)
class Summary:
    contender: Contender
    runs: int
    wall_seconds: float
    wall_range: tuple[float, float]
    cpu_seconds: float
    process_cpu_seconds: float
    peak_rss_mib: float
    server_429: float
    retries: float
    surfaced_429: float
    failures: float
    loads: list[tuple[float, float]]


def summarize(measurements: Sequence[Measurement], contender: Contender) -> Summary:
    mine = [m for m in measurements if m.contender == contender]
    walls = [m.wall_seconds for m in mine]
    return Summary(
        contender=contender,
        runs=len(mine),
        wall_seconds=statistics.median(walls),
        wall_range=(min(walls), max(walls)),
        cpu_seconds=statistics.median(m.cpu_seconds for m in mine),
        process_cpu_seconds=statistics.median(m.process_cpu_seconds for m in mine),
        peak_rss_mib=statistics.median(m.peak_rss_kib for m in mine) / 1024,
        server_429=statistics.median(m.server_429 for m in mine),
        retries=statistics.median(m.retries for m in mine),
        surfaced_429=max(m.surfaced_429 for m in mine),
        failures=max(sum(m.failures.values()) for m in mine),
        loads=[m.load for m in mine],
    )


def table(summaries: Sequence[Summary], args: argparse.Namespace) -> list[str]:
    ideal = ideal_seconds(args)
    lines = [
        "| contender | runs | wall time, median (min-max) | share of the limit | 429s from the server | retries"
        " | 429s / failures to the caller | CPU time (process) | peak RSS | load average (1 min) around each run |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in summaries:
        loads = ", ".join(f"{before:.2f}-{after:.2f}" for before, after in s.loads)
        lines.append(
            f"| {s.contender} | {s.runs} | **{s.wall_seconds:.2f} s** ({s.wall_range[0]:.2f}-{s.wall_range[1]:.2f})"
            f" | **{ideal / s.wall_seconds:.1%}** | {s.server_429:g} | {s.retries:g}"
            f" | {s.surfaced_429:g} / {s.failures:g} | **{s.cpu_seconds:.2f} s** ({s.process_cpu_seconds:.2f} s)"
            f" | {s.peak_rss_mib:.0f} MiB | {loads} |"
        )
    lines += ["", *verdicts(summaries, ideal)]
    return lines


def verdicts(summaries: Sequence[Summary], ideal: float) -> list[str]:
    by_name = {s.contender: s for s in summaries}
    floor, abl = by_name.get(FLOOR), by_name.get("async-batch-llm")
    lines: list[str] = []
    for s in summaries:
        if not s.contender.startswith("lowtide"):
            continue
        share = ideal / s.wall_seconds
        parts = [
            f"throughput {share:.1%} of the limit's (target 95%: {met(share >= 0.95)})",
            f"{s.surfaced_429:g} 429s to the caller (target 0: {met(s.surfaced_429 == 0)})",
        ]
        if abl is not None:
            parts.append(
                f"{s.server_429:g} 429s from the server against async-batch-llm's {abl.server_429:g}"
                f" (target fewer: {met(s.server_429 < abl.server_429 or s.server_429 == abl.server_429 == 0)})"
            )
        if floor is not None:
            ratio = s.cpu_seconds / floor.cpu_seconds
            parts.append(f"CPU time {ratio:.2f}x the floor's (target 1.3x: {met(ratio <= 1.3)})")
            parts.append(f"peak memory {s.peak_rss_mib / floor.peak_rss_mib:.2f}x the floor's")
        lines.append(f"- {s.contender}: " + ", ".join(parts) + ".")
    if floor is not None and abl is not None:
        lines.append(
            f"- async-batch-llm: throughput {ideal / abl.wall_seconds:.1%} of the limit's, CPU time"
            f" {abl.cpu_seconds / floor.cpu_seconds:.2f}x the floor's, peak memory"
            f" {abl.peak_rss_mib / floor.peak_rss_mib:.2f}x the floor's."
        )
    return lines


def met(ok: bool) -> str:
    return "met" if ok else "missed"


def report(
    args: argparse.Namespace, measurements: Sequence[Measurement], contenders: Sequence[Contender], started: float
) -> str:
    command = " ".join(["python benchmarks/live_vs_peers.py", *sys.argv[1:]])
    revision, _ = source_revision()
    notes = [f"- async-batch-llm: {args.abl_note}"] if args.abl_note else []
    lines = [
        f"Run on {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))},"
        f" {(time.time() - started) / 60:.1f} minutes in all.",
        "",
        f"- lowtide source: {revision}",
        *machine(),
        f"- command: `{command}`",
        f"- emulator: `lowtide emulator --port 0 {' '.join(emulator_options(args))}`, a fresh one per measurement;"
        f" {args.calls:,} calls of `max_tokens` {args.max_tokens}, concurrency {args.concurrency} for every contender",
        f"- lowtide's `live.ramp_start`: {args.lowtide_ramp_start or 'the default (4)'};"
        f" the floor's SDK retries: `max_retries={args.sdk_max_retries}`; async-batch-llm's"
        f" `RateLimitConfig(cooldown_seconds={args.abl_cooldown:g})`, its other settings the defaults",
        f"- share of the limit: the least possible wall time ({ideal_seconds(args):.2f} s: the emulator's bucket starts"
        f" full, {args.rpm:,} calls, then refills at {args.rpm / 60:g} a second, plus one call's latency; or waves of"
        f" {args.concurrency} calls if the concurrency binds first) over the wall time",
        *notes,
        "",
        f"### {args.calls:,} live calls, {args.repeat} run(s) each, order rotating",
        "",
        *table([summarize(measurements, c) for c in contenders], args),
    ]
    return "\n".join(lines) + "\n"


def profile_lowtide(args: argparse.Namespace) -> None:
    target = Path(args.profile)
    log(f"profiling lowtide at {args.calls} calls into {target}")
    args.profile_into = str(target)
    measure("lowtide", args)
    args.profile_into = None
    stats = pstats.Stats(str(target))
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="live calls per measurement (default 2000)")
    parser.add_argument("--rpm", type=int, default=1200, help="the emulator's requests per minute (default 1200)")
    parser.add_argument("--latency", default="0.5,0.005", help="the emulator's latency: FIXED,PER_OUTPUT_TOKEN seconds")
    parser.add_argument("--max-tokens", type=int, default=16, help="max_tokens of every call (default 16)")
    parser.add_argument("--concurrency", type=int, default=64, help="calls in flight at most, for every contender")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each contender (default 3)")
    parser.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help=f"which to run, comma-separated (default all: {','.join(CONTENDERS)})",
    )
    parser.add_argument(
        "--abl-venv",
        default="/tmp/ablenv",
        help=f"a virtual environment holding async-batch-llm {ABL_VERSION} and anthropic; skipped if absent",
    )
    parser.add_argument(
        "--abl-cooldown", type=float, default=1.0, help="async-batch-llm's cooldown after a 429, seconds (default 1)"
    )
    parser.add_argument(
        "--lowtide-ramp-start",
        type=int,
        default=0,
        help="lowtide's live.ramp_start (default 0: lowtide's own default, 4, growing by one per success)",
    )
    parser.add_argument("--sdk-max-retries", type=int, default=10, help="the floor's SDK max_retries (default 10)")
    parser.add_argument("--bytecode", choices=("cached", "as-is"), default="cached", help="as in batch_vs_sdk.py")
    parser.add_argument("--out", type=Path, default=None, help="write the results into this Markdown file")
    parser.add_argument("--profile", default=None, help="afterwards, one lowtide run under cProfile into this file")
    # Internal: run one contender in this process.
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.profile_into = None
    args.abl_note = ""
    return args


def abl_available(args: argparse.Namespace) -> str:
    """Why async-batch-llm cannot run ('' when it can)."""
    python = Path(args.abl_venv) / "bin" / "python"
    if not python.exists():
        return f"skipped: no virtual environment at {args.abl_venv} (`--abl-venv`)"
    found = subprocess.run(
        [
            str(python),
            "-c",
            "import anthropic; from importlib.metadata import version; print(version('async-batch-llm'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    version = found.stdout.strip()
    if found.returncode != 0 or not version.startswith(ABL_VERSION + "."):
        found_text = version or found.stderr[-200:]
        return f"skipped: {args.abl_venv} does not hold async-batch-llm {ABL_VERSION}.* and anthropic ({found_text})"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.contender is not None:
        return run_contender(args)
    lowtide_command()  # fails early when the emulator's command is missing
    contenders = [c for c in CONTENDERS if c in args.contenders.split(",")]
    if "async-batch-llm" in contenders:
        reason = abl_available(args)
        if reason:
            log(f"async-batch-llm {reason}")
            args.abl_note = reason
            contenders.remove("async-batch-llm")
        else:
            args.abl_note = f"{ABL_VERSION} from {args.abl_venv}, unmodified"
    started = time.time()
    log("warming up (one small uncounted run of each contender: bytecode and disk caches)")
    for contender in contenders:
        measure(contender, args, calls=50)
    measurements = run_series(contenders, args)
    text = report(args, measurements, contenders, started)
    print(text)
    if args.out is not None:
        write_report(args.out, text, markers=(RESULTS_START, RESULTS_END))
        log(f"results written to {args.out}")
    if args.profile:
        profile_lowtide(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
