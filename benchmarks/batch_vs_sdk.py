"""lowtide in batch mode beside the official SDK doing the same batch by hand, both over a socket to `lowtide emulator`.

    python benchmarks/batch_vs_sdk.py [--requests 10000] [--repeat 3] [--memory-requests 100000]
                                      [--processing-seconds 2] [--poll-interval 1] [--out docs/benchmarks.md]

Every measurement gets a fresh `lowtide emulator` subprocess (same processing time), and every contender runs in a
subprocess of its own, so that its peak memory (`VmHWM`: `harness.peak_rss_kib`) is its own. The contenders:

- `raw-sdk`: the provider's official SDK by hand (`by_hand/<provider>_batches.py`): one batch of N requests created,
  polled every `--poll-interval` seconds until it ends, its results streamed into a dict keyed by custom id.
- `floor` (where the provider's module has one): the least a durable client must do with the same API calls.
- `lowtide`: one `Actor` in batch mode (same model, max_tokens and poll interval, a fresh ledger in a temporary
  directory), `asyncio.gather` of N `actor.run(...)` calls.
- `lowtide-many`: the same actor answering one `actor.run_many(prompts, keys=...)`: N requests at once without N
  tasks of the caller's own. Reported beside `lowtide`, never in its place.
- `bare-gather`: no API and no answers, only what the caller's own `asyncio.gather` of N tasks costs (each awaiting
  a future, all resolved once every task has started), which lowtide's contender pays and the SDK's by hand does
  not; shown beside the others (and raw-sdk plus it), never subtracted.

Each contender prints one JSON line: wall seconds from its first call to every answer in hand, peak RSS, CPU seconds,
the number of answers and a checksum of their texts (both must match: same work). The emulator's `/_emulator/stats`
gives the API calls each made. The order alternates across repeats; medians and lowtide/raw ratios are reported.
Performance is judged as ratios against the baseline measured in the same run, never as absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from by_hand import PROVIDERS, BatchTimes, ByHand, by_hand
from by_hand.floor import Respond
from harness import (
    API_KEY,
    MAX_TOKENS,
    Emulator,
    checksum,
    cpu_seconds,
    key,
    log,
    machine,
    peak_rss_kib,
    prompt,
    source_revision,
    subprocess_environment,
    write_report,
)

Contender = Literal[
    "raw-sdk", "floor", "floor-responses", "lowtide", "lowtide-many", "bare-gather", "raw-sdk-bulk", "lowtide-bulk"
]
CONTENDERS: tuple[Contender, ...] = ("raw-sdk", "floor", "floor-responses", "lowtide", "lowtide-many", "bare-gather")
"""The one-batch contenders; `floor` and `floor-responses` only where the provider's module has a floor."""
FLOORS: tuple[Contender, ...] = ("floor", "floor-responses")
RESPONSES: Contender = "floor-responses"
"""The floor doing what lowtide's contract asks of each answer as well (`by_hand.floor.Respond`, lowtide's codec)."""
MANY: Contender = "lowtide-many"
"""lowtide answering the N requests with one `actor.run_many` (no task of the caller's per request)."""
GATHER: Contender = "bare-gather"
"""The caller's own gathered tasks alone: no API, no answers (excluded from the checksum and the answer count)."""
BULK_CONTENDERS: tuple[Contender, ...] = ("raw-sdk-bulk", "lowtide-bulk")
"""The bulk run's contenders: many batches, a few at once."""
_CONTENDER_TIMEOUT_SECONDS = 4 * 3600.0


async def lowtide_actor(
    base_url: str,
    n: int,
    poll_interval: float,
    coalesce_window: float,
    ledger: Path,
    provider: ByHand,
    *,
    many: bool = False,
) -> tuple[float, float, dict[str, str]]:
    """N concurrent `actor.run` calls of one batch-mode actor; with `many`, one `actor.run_many` of the N."""
    from lowtide import Actor, ActorError

    configuration: dict[str, Any] = {
        "name": "benchmark",
        "provider": provider.provider,
        "model": provider.model,
        "max_tokens": MAX_TOKENS,
        "batch_processing": "batch",
        "base_url": base_url + provider.base_path,
        "ledger": str(ledger),
        "batch": {"poll_interval": poll_interval, "coalesce_window": coalesce_window},
    }
    if provider.provider_options:
        configuration["provider_options"] = provider.provider_options
    async with Actor(configuration, api_key=API_KEY) as actor:
        started_at, start = time.time(), time.perf_counter()
        if many:
            outcomes = await actor.run_many([prompt(i) for i in range(n)], keys=[key(i) for i in range(n)])
            responses = [outcome for outcome in outcomes if not isinstance(outcome, ActorError)]
            if len(responses) != n:
                raise RuntimeError(f"run_many: {n - len(responses)} of {n} requests failed")
        else:
            responses = await asyncio.gather(*(actor.run(prompt(i), key=key(i)) for i in range(n)))
        elapsed = time.perf_counter() - start
    return started_at, elapsed, {key(i): response.text for i, response in enumerate(responses)}


def contract_responder(provider: str) -> Respond:
    """What `floor-responses` adds to the floor for each line: the outcome `run_many` hands back for it (an
    `ActorResponse`, priced, or the request's `ActorError`), made by the provider's own batch codec, found as an actor
    finds it (the provider registry: no SDK client, no key). Made before the contender's baseline, with the prices'
    table loaded (`genai-prices`' snapshot, which lowtide loads in a thread of its own on its first claim): the bound
    counts the work on each answer, never a cost paid once a process."""
    from genai_prices.data_snapshot import get_snapshot

    from lowtide.batching.backend import BatchCodec
    from lowtide.core.modes import BatchProcessingMode
    from lowtide.messages.structured import parsed_outcome
    from lowtide.registry import default_registry

    codec = getattr(default_registry().resolve(provider, BatchProcessingMode.BATCH).factory, "codec", None)
    if not isinstance(codec, BatchCodec):
        raise SystemExit(f"{provider}: no batch codec for floor-responses")
    get_snapshot()

    def respond(line: dict[str, Any], batch_id: str) -> object:
        outcome, _ = codec.line_outcome(line, batch_id=batch_id, request_id=None)
        return parsed_outcome(outcome, None)

    return respond


async def bare_gather(n: int) -> tuple[float, float, dict[str, str]]:
    """What the caller's own `asyncio.gather` of N tasks costs: each task awaits a future of its own, and the futures
    are resolved once every task has started (as a batch's answers come after all its calls were made)."""
    loop = asyncio.get_running_loop()
    started_at, start = time.time(), time.perf_counter()
    futures: list[asyncio.Future[str]] = [loop.create_future() for _ in range(n)]

    async def wait(future: asyncio.Future[str]) -> str:
        return await future

    gathered = asyncio.gather(*(wait(future) for future in futures))
    await asyncio.sleep(0)  # every task runs up to its await
    for future in futures:
        future.set_result("")
    await gathered
    return started_at, time.perf_counter() - start, {}


async def lowtide_bulk(
    base_url: str,
    n: int,
    poll_interval: float,
    ledger: Path,
    batches: int,
    parallel: int,
) -> tuple[float, float, dict[str, str]]:
    """The bulk run through `actor.map`: `n` prompts, `n / batches` items per batch, `parallel` batches at once."""
    from lowtide import Actor

    configuration: dict[str, Any] = {
        "name": "benchmark",
        "provider": "anthropic",
        "model": by_hand("anthropic").model,
        "max_tokens": MAX_TOKENS,
        "batch_processing": "batch",
        "base_url": base_url,
        "ledger": str(ledger),
        "batch": {"poll_interval": poll_interval},
    }
    async with Actor(configuration, api_key=API_KEY) as actor:
        started_at, start = time.time(), time.perf_counter()
        result = await actor.map(
            [prompt(i) for i in range(n)],
            run_id="benchmark",
            items_per_batch=-(-n // batches),
            max_parallel_batches=parallel,
            progress="none",
        )
        elapsed = time.perf_counter() - start
    return started_at, elapsed, {key(item.index): item.text for item in result if item.text is not None}


def run_contender(args: argparse.Namespace) -> int:
    """Run one contender in this process and print its measurement as one JSON line."""
    contender: Contender = args.contender
    # Import what the contender needs before measuring the baseline, so that "at start" includes the imports.
    # Both import the provider's SDK, and lowtide its provider module (which the registry would import on first use).
    provider = by_hand(args.provider)
    importlib.import_module(provider.sdk)
    if contender.startswith("lowtide") or contender in (GATHER, RESPONSES):
        importlib.import_module(f"lowtide.providers.{args.provider}")
    # The bound's codec (and the provider's batch module with it) before the baseline too: what it measures is the
    # work on each answer, never an import lowtide's contenders pay in their run.
    respond = contract_responder(args.provider) if contender == RESPONSES else None
    rss_at_start = peak_rss_kib()
    cpu_at_start = cpu_seconds()
    full_collections = gc.get_stats()[2]["collections"]
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory(prefix="lowtide-bench-") as scratch:
        ledger = Path(scratch) / "ledger.sqlite3"
        work: Coroutine[Any, Any, tuple[float, float, dict[str, str]]]
        if contender == GATHER:
            work = bare_gather(args.requests)
        elif contender == "raw-sdk":
            work = provider.raw_sdk(args.base_url, args.requests, args.poll_interval)
        elif contender in FLOORS:
            assert provider.floor is not None, f"{provider.provider} has no floor"
            work = provider.floor(args.base_url, args.requests, args.poll_interval, ledger, respond=respond)
        elif contender == "raw-sdk-bulk":
            assert provider.bulk is not None, f"{provider.provider} has no bulk run by hand"
            work = provider.bulk(
                args.base_url, args.requests, args.poll_interval, args.bulk_batches, args.bulk_parallel
            )
        elif contender == "lowtide-bulk":
            work = lowtide_bulk(
                args.base_url, args.requests, args.poll_interval, ledger, args.bulk_batches, args.bulk_parallel
            )
        else:
            work = lowtide_actor(
                args.base_url,
                args.requests,
                args.poll_interval,
                args.coalesce_window,
                ledger,
                provider,
                many=contender == MANY,
            )
        if profiler is not None:
            profiler.enable()
        started_at, elapsed, texts = asyncio.run(work)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
    result = {
        "contender": contender,
        "requests": args.requests,
        "wall_seconds": round(elapsed, 4),
        "started_at": started_at,
        "peak_rss_kib": peak_rss_kib(),
        "rss_at_start_kib": rss_at_start,
        "cpu_seconds": round(cpu_seconds() - cpu_at_start, 3),
        "answers": len(texts),
        "checksum": checksum(texts, args.requests) if contender != GATHER else "",
        "full_collections": gc.get_stats()[2]["collections"] - full_collections,
    }
    print(json.dumps(result), flush=True)
    return 0


# The orchestrator: one emulator per measurement, one subprocess per contender.


@dataclass
class Measurement:
    contender: Contender
    requests: int
    wall_seconds: float
    started_at: float
    peak_rss_kib: int
    rss_at_start_kib: int
    cpu_seconds: float
    answers: int
    checksum: str
    full_collections: int = 0
    calls: dict[str, int] = field(default_factory=dict[str, int])
    phases: Phases | None = None

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


@dataclass(frozen=True)
class Phases:
    """Where a contender's wall time went, from the emulator's batch timestamps (same machine, same clock)."""

    to_create: float
    """From the first call until the emulator had created the batch (building, recording and uploading it)."""
    in_batch: float
    """From creation until the batch ended (the emulator's processing time)."""
    after_end: float
    """From the batch's end until every answer was in hand (noticing the end by polling, downloading, storing)."""


def phases_of(batches: Sequence[BatchTimes], started_at: float, wall_seconds: float) -> Phases | None:
    """The phases of a run that made one batch; None when it made several (then they overlap)."""
    if len(batches) != 1 or batches[0].ended_at is None:
        return None
    created, ended = batches[0].created_at, batches[0].ended_at
    return Phases(to_create=created - started_at, in_batch=ended - created, after_end=started_at + wall_seconds - ended)


def check_custom_ids(stats: dict[str, Any], contender: str, n: int, provider: ByHand) -> None:
    """Every request was created exactly once (when the emulator counts the provider's custom ids)."""
    created = stats.get(provider.created_ids_stat) if provider.created_ids_stat else None
    if created is None:
        return
    twice = sum(1 for count in created.values() if count != 1)
    if len(created) != n or twice:
        raise RuntimeError(f"{contender} created {len(created)} distinct custom_ids of {n}, {twice} more than once")


def measure(
    contender: Contender, n: int, args: argparse.Namespace, *, profile: str | None = None, quiet: bool = False
) -> Measurement:
    environment = subprocess_environment(args.bytecode)
    provider = by_hand(args.provider)
    with Emulator(args.processing_seconds, environment) as emulator:
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--contender",
            contender,
            "--base-url",
            emulator.url,
            "--requests",
            str(n),
            "--poll-interval",
            str(args.poll_interval),
            "--coalesce-window",
            str(args.coalesce_window),
            "--provider",
            args.provider,
            "--bulk-batches",
            str(args.bulk_batches),
            "--bulk-parallel",
            str(args.bulk_parallel),
        ]
        if profile is not None:
            command += ["--profile", profile]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=_CONTENDER_TIMEOUT_SECONDS,
            check=False,
            env={**environment, **provider.environment},
        )
        if done.returncode != 0:
            raise RuntimeError(f"{contender} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        stats = emulator.stats()
        if contender != GATHER:
            check_custom_ids(stats, contender, n, provider)
        calls = {str(route): int(count) for route, count in stats.get("calls", {}).items()}
        measurement = Measurement(**result, calls=calls)
        batches = provider.batch_times(emulator)
        measurement.phases = phases_of(batches, measurement.started_at, measurement.wall_seconds)
    phases = measurement.phases
    if quiet:
        return measurement
    log(
        f"  {contender:<12} n={n:<6} {measurement.wall_seconds:8.2f} s  {measurement.peak_rss_kib / 1024:8.1f} MiB"
        f"  cpu {measurement.cpu_seconds:7.2f} s  full gc {measurement.full_collections}  calls {measurement.calls}"
        + (
            f"  phases {phases.to_create:.2f} + {phases.in_batch:.2f} + {phases.after_end:.2f} s"
            if phases is not None
            else ""
        )
    )
    if measurement.answers != n and contender != GATHER:
        raise RuntimeError(f"{contender} got {measurement.answers} answers of {n}")
    return measurement


def run_series(
    n: int, repeat: int, args: argparse.Namespace, contenders: Sequence[Contender] = CONTENDERS
) -> list[Measurement]:
    """`repeat` rounds of the contenders, the order alternating (reversed) from one round to the next."""
    measurements: list[Measurement] = []
    for round_ in range(repeat):
        order = list(contenders) if round_ % 2 == 0 else list(contenders)[::-1]
        log(f"round {round_ + 1}/{repeat} at {n} requests: {' then '.join(order)}")
        measurements.extend(measure(contender, n, args) for contender in order)
    checksums = {m.checksum for m in measurements if m.contender != GATHER}
    if len(checksums) != 1:
        raise RuntimeError(f"The contenders' answers differ (checksums {sorted(checksums)}): not the same work.")
    return measurements


def sizes_of(text: str, repeat: int) -> list[tuple[int, int]]:
    """`--sizes`: comma-separated request counts, each with its own number of runs after a colon if given; empty for
    none (the bulk run alone)."""
    sizes: list[tuple[int, int]] = []
    for part in filter(None, (part.strip() for part in text.split(","))):
        count, _, runs = part.strip().partition(":")
        sizes.append((int(count.replace("_", "")), int(runs) if runs else repeat))
    return sizes


@dataclass(frozen=True)
class Summary:
    contender: Contender
    requests: int
    runs: int
    wall_seconds: float
    wall_range: tuple[float, float]
    peak_rss_mib: float
    rss_at_start_mib: float
    cpu_seconds: float
    calls: dict[str, int]
    phases: Phases | None
    full_collections: int = 0

    @property
    def cpu_us_per_request(self) -> float:
        return self.cpu_seconds / self.requests * 1e6

    @property
    def growth_mib(self) -> float:
        return self.peak_rss_mib - self.rss_at_start_mib


def summarize(measurements: Sequence[Measurement], contender: Contender) -> Summary:
    mine = [m for m in measurements if m.contender == contender]
    walls = [m.wall_seconds for m in mine]
    routes = sorted({route for m in mine for route in m.calls})
    return Summary(
        contender=contender,
        requests=mine[0].requests,
        runs=len(mine),
        wall_seconds=statistics.median(walls),
        wall_range=(min(walls), max(walls)),
        peak_rss_mib=statistics.median(m.peak_rss_kib for m in mine) / 1024,
        rss_at_start_mib=statistics.median(m.rss_at_start_kib for m in mine) / 1024,
        cpu_seconds=statistics.median(m.cpu_seconds for m in mine),
        calls={route: int(statistics.median(m.calls.get(route, 0) for m in mine)) for route in routes},
        phases=median_phases([m.phases for m in mine]),
        full_collections=int(statistics.median(m.full_collections for m in mine)),
    )


def median_phases(all_phases: Sequence[Phases | None]) -> Phases | None:
    known = [p for p in all_phases if p is not None]
    if not known:
        return None
    return Phases(
        to_create=statistics.median(p.to_create for p in known),
        in_batch=statistics.median(p.in_batch for p in known),
        after_end=statistics.median(p.after_end for p in known),
    )


def calls_text(calls: dict[str, int]) -> str:
    short = {"batches.create": "create", "batches.retrieve": "retrieve", "batches.results": "results"}
    parts = [f"{short.get(route, route)} {count}" for route, count in sorted(calls.items(), key=lambda kv: kv[0])]
    return f"{sum(calls.values())} ({', '.join(parts)})"


def table(summaries: Sequence[Summary]) -> list[str]:
    """One size's results, and where each contender's wall time went."""
    lines = [
        "| contender | runs | wall time, median (min-max) | peak RSS | RSS at start | growth | CPU time"
        " | CPU per request | full GCs | API calls |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in summaries:
        lines.append(
            f"| {s.contender} | {s.runs} | **{s.wall_seconds:.2f} s** ({s.wall_range[0]:.2f}-{s.wall_range[1]:.2f})"
            f" | **{s.peak_rss_mib:.0f} MiB** | {s.rss_at_start_mib:.0f} MiB | {s.growth_mib:.0f} MiB"
            f" | **{s.cpu_seconds:.2f} s** | {s.cpu_us_per_request:.0f} us | {s.full_collections}"
            f" | {calls_text(s.calls)} |"
        )
    with_phases = [s for s in summaries if s.phases is not None]
    if with_phases and all(s.phases is not None for s in summaries if s.contender != GATHER):
        lines += [
            "",
            "| contender | first call to batch created | created to ended | ended to all answers in hand |",
            "|---|---:|---:|---:|",
        ]
        for s in with_phases:
            assert s.phases is not None
            lines.append(
                f"| {s.contender} | {s.phases.to_create:.2f} s | {s.phases.in_batch:.2f} s"
                f" | {s.phases.after_end:.2f} s |"
            )
    return lines


@dataclass(frozen=True)
class Targets:
    cpu: float
    wall: float | None
    memory: float


ONE_BATCH_TARGETS = Targets(cpu=1.3, wall=1.2, memory=1.5)
ONE_BATCH_TARGETS_OF: dict[str, Targets] = {"anthropic": Targets(cpu=1.0, wall=1.1, memory=1.4)}
"""Issue 36's one-batch targets where a provider has its own (Anthropic's: durable at the SDK's cost)."""
BULK_TARGETS = Targets(cpu=1.5, wall=None, memory=2.0)


def ratio_text(ratio: float, target: float | None) -> str:
    return f"{ratio:.2f}x" if target is None else f"**{ratio:.2f}x** ({met(ratio, target)})"


def ratios(
    by_size: Sequence[Sequence[Summary]], ours: Contender, raw: Contender, targets: Targets, *, gathered: bool = True
) -> list[str]:
    """`ours` against `raw` (and against the floor, when measured) at every size, with the targets; with `gathered`,
    also against `raw` plus the caller's own gathered tasks (`bare-gather`), when measured."""
    with_floor = any(s.contender == "floor" for sizes in by_size for s in sizes)
    wall_target = f" (target {targets.wall}x)" if targets.wall is not None else ""
    header = (
        f"| requests | CPU, {ours} / {raw} (target {targets.cpu}x) | wall{wall_target}"
        f" | peak RSS (target {targets.memory}x) | CPU per request: {raw}"
        + (" / floor" if with_floor else "")
        + f" / {ours} |"
        + (f" {ours} / floor, CPU | {ours}'s CPU above the floor |" if with_floor else "")
    )
    lines = [header, "|---:|---:|---:|---:|---:|" + ("---:|---:|" if with_floor else "")]
    for sizes in by_size:
        mine = {s.contender: s for s in sizes}
        a, b = mine[ours], mine[raw]
        per_request = [f"{b.cpu_us_per_request:.0f}"]
        floor = mine.get("floor")
        if floor is not None:
            per_request.append(f"{floor.cpu_us_per_request:.0f}")
        per_request.append(f"{a.cpu_us_per_request:.0f} us")
        row = (
            f"| {a.requests:,} | {ratio_text(a.cpu_seconds / b.cpu_seconds, targets.cpu)}"
            f" | {ratio_text(a.wall_seconds / b.wall_seconds, targets.wall)}"
            f" | {ratio_text(a.peak_rss_mib / b.peak_rss_mib, targets.memory)} | {' / '.join(per_request)} |"
        )
        if with_floor:
            row += (
                f" {a.cpu_seconds / floor.cpu_seconds:.2f}x | {a.cpu_seconds - floor.cpu_seconds:+.2f} s |"
                if floor is not None
                else " | |"
            )
        lines.append(row)
    gathers = [{s.contender: s for s in sizes} for sizes in by_size]
    if gathered and all(GATHER in mine for mine in gathers):
        lines += [
            "",
            f"The caller's own gathered tasks (`{GATHER}`: N tasks awaiting futures, no API), which {ours} pays and"
            f" {raw} does not, measured alone and shown beside (not subtracted from {ours}):",
            "",
            f"| requests | {GATHER}: CPU, RSS growth | CPU, {ours} / ({raw} + {GATHER}) |"
            f" peak RSS, {ours} / ({raw} + {GATHER}'s growth) |",
            "|---:|---:|---:|---:|",
        ]
        for mine in gathers:
            a, b, g = mine[ours], mine[raw], mine[GATHER]
            lines.append(
                f"| {a.requests:,} | {g.cpu_seconds:.2f} s, {g.growth_mib:.0f} MiB"
                f" | {a.cpu_seconds / (b.cpu_seconds + g.cpu_seconds):.2f}x"
                f" | {a.peak_rss_mib / (b.peak_rss_mib + g.growth_mib):.2f}x |"
            )
    return lines


def contract_floor(by_size: Sequence[Sequence[Summary]], targets: Targets) -> list[str]:
    """The floor under lowtide's contract (`floor-responses`) against the SDK by hand, with the targets: what any
    durable client handing back lowtide's responses pays at least, made by lowtide's own codec; and `run_many` (or
    gathered calls) against it: what lowtide's engine costs above that."""
    sized = [{s.contender: s for s in sizes} for sizes in by_size]
    if not all(RESPONSES in mine for mine in sized):
        return []
    ours: Contender = MANY if all(MANY in mine for mine in sized) else "lowtide"
    lines = [
        "",
        f"`{RESPONSES}`: the floor doing what lowtide's contract asks of every answer as well (each line made into the"
        " priced `ActorResponse`, or the request's `ActorError`, by the provider's own batch codec, and every one kept"
        " until the run returns), nothing of lowtide's engine: the least any durable client handing back lowtide's"
        " responses pays, with lowtide's mapping. Above it, what the engine costs:",
        "",
        f"| requests | CPU, {RESPONSES} / raw-sdk (target {targets.cpu}x) | peak RSS (target {targets.memory}x)"
        f" | CPU per request: raw-sdk / floor / {RESPONSES} / {ours} | {ours} / {RESPONSES}: CPU, peak RSS |",
        "|---:|---:|---:|---:|---:|",
    ]
    for mine in sized:
        bound, raw, engine = mine[RESPONSES], mine["raw-sdk"], mine[ours]
        per_request = [raw, *([mine["floor"]] if "floor" in mine else []), bound, engine]
        lines.append(
            f"| {bound.requests:,} | {ratio_text(bound.cpu_seconds / raw.cpu_seconds, targets.cpu)}"
            f" | {ratio_text(bound.peak_rss_mib / raw.peak_rss_mib, targets.memory)}"
            f" | {' / '.join(f'{s.cpu_us_per_request:.0f}' for s in per_request)} us"
            f" | {engine.cpu_seconds / bound.cpu_seconds:.2f}x, {engine.peak_rss_mib / bound.peak_rss_mib:.2f}x |"
        )
    return lines


def met(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "missed"


def report(
    args: argparse.Namespace,
    runs: Sequence[Sequence[Measurement]],
    bulk_run: Sequence[Measurement],
    started: float,
    loads: Sequence[float],
    revision: str,
) -> str:
    command = " ".join(["python benchmarks/batch_vs_sdk.py", *sys.argv[1:]])
    contenders = one_batch_contenders(args.provider)
    by_size = [[summarize(measurements, c) for c in contenders] for measurements in runs]
    targets = ONE_BATCH_TARGETS_OF.get(args.provider, ONE_BATCH_TARGETS)
    lines = [
        f"Run on {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))},"
        f" {(time.time() - started) / 60:.1f} minutes in all.",
        "",
        f"- lowtide source: {revision}",
        *machine(),
        f"- load average (1 min) {loads[0]:.2f} at the start, {max(loads):.2f} at most between measurements,"
        f" {loads[-1]:.2f} at the end: the machine is shared",
        f"- bytecode: {args.bytecode}",
        f"- provider: {args.provider} ({by_hand(args.provider).model}; raw-sdk is the official"
        f" `{by_hand(args.provider).sdk}` SDK)",
        f"- command: `{command}`",
        f"- emulator: `lowtide emulator --port 0 --processing-seconds {args.processing_seconds}`, a fresh one per"
        f" measurement; poll interval {args.poll_interval} s for all, lowtide's coalesce window"
        f" {args.coalesce_window} s",
        "",
        "### One batch: lowtide / raw-sdk at each size (medians)",
        "",
        *ratios(by_size, "lowtide", "raw-sdk", targets),
    ]
    if MANY in contenders:
        lines += [
            "",
            f"`{MANY}`: the same N requests as one `actor.run_many(prompts, keys=...)`, no task of the caller's per"
            " request (beside `lowtide`, not in its place):",
            "",
            *ratios(by_size, MANY, "raw-sdk", targets, gathered=False),
        ]
    lines += contract_floor(by_size, targets)
    for sizes in by_size:
        lines += [
            "",
            f"### {sizes[0].requests:,} requests in one batch, {sizes[0].runs} run(s) each, order alternating",
            "",
            *table(sizes),
        ]
    if bulk_run:
        bulk = [summarize(bulk_run, c) for c in BULK_CONTENDERS]
        lines += [
            "",
            f"### Bulk: {args.bulk_requests:,} requests in {args.bulk_batches} batches, {args.bulk_parallel} at once,"
            f" {bulk[0].runs} run(s) each, order alternating",
            "",
            "`raw-sdk-bulk` creates, polls and collects the batches by hand, a semaphore letting"
            f" {args.bulk_parallel} run at once; `lowtide-bulk` is `actor.map(prompts,"
            f" items_per_batch={-(-args.bulk_requests // args.bulk_batches)},"
            f" max_parallel_batches={args.bulk_parallel})`.",
            "",
            *ratios([bulk], "lowtide-bulk", "raw-sdk-bulk", BULK_TARGETS),
            "",
            *table(bulk),
        ]
    lines += [
        "",
        "`retrieve` counts the polls; the raw SDK's also counts the one `messages.batches.results()` makes to find"
        " the results URL, which lowtide and the floor read from the ended batch they polled. Full GCs: the"
        " collector's generation-2 collections during the run.",
    ]
    return "\n".join(lines) + "\n"


def one_batch_contenders(provider: str) -> tuple[Contender, ...]:
    return tuple(c for c in CONTENDERS if c not in FLOORS or by_hand(provider).floor is not None)


def profile_lowtide(args: argparse.Namespace, out: TextIO) -> None:
    """One more lowtide run under cProfile (not counted above); the top functions by own time and cumulative time."""
    target = Path(args.profile)
    log(f"profiling {args.profile_contender} at {args.requests} requests into {target}")
    measure(args.profile_contender, args.requests, args, profile=str(target))
    stats = pstats.Stats(str(target), stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes",
        default="1000,10000,50000,100000",
        help="requests in one batch, comma-separated; `N:R` runs size N R times instead of --repeat"
        " (default 1000,10000,50000,100000)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each contender at each size (default 3)")
    parser.add_argument(
        "--bulk-requests", type=int, default=100_000, help="requests in the bulk run; 0 skips it (default 100000)"
    )
    parser.add_argument("--bulk-batches", type=int, default=20, help="batches the bulk run splits into (default 20)")
    parser.add_argument("--bulk-parallel", type=int, default=5, help="bulk batches at once (default 5)")
    parser.add_argument("--bulk-repeat", type=int, default=3, help="runs of each bulk contender (default 3)")
    parser.add_argument(
        "--requests", type=int, default=10_000, help="requests of the --profile run (and of one --contender run)"
    )
    parser.add_argument(
        "--processing-seconds", type=float, default=2.0, help="how long the emulator keeps each batch in progress"
    )
    parser.add_argument(
        "--poll-interval", type=float, default=1.0, help="seconds between status checks, for both (default 1)"
    )
    parser.add_argument("--coalesce-window", type=float, default=0.2, help="lowtide's batch.coalesce_window")
    parser.add_argument(
        "--bytecode",
        choices=("cached", "as-is"),
        default="cached",
        help="let Python cache bytecode as after a pip install (cached, default), or keep the environment's setting",
    )
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        default="anthropic",
        help="whose batch API the contenders use (by_hand/<provider>_batches.py): Anthropic's Message Batches"
        " (default), OpenAI's, Azure OpenAI's, Groq's, Together's or Mistral's Batch API, Gemini's batch mode or"
        " Bedrock's batch inference",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results into this Markdown file")
    parser.add_argument(
        "--profile", default=None, help="also profile one lowtide run at --requests with cProfile, into this file"
    )
    parser.add_argument(
        "--profile-contender",
        choices=("lowtide", MANY),
        default="lowtide",
        help="the contender --profile runs (default lowtide: the gathered `actor.run` calls)",
    )
    # Internal: run one contender in this process.
    parser.add_argument("--contender", choices=(*CONTENDERS, *BULK_CONTENDERS), help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.contender is not None:
        return run_contender(args)
    started = time.time()
    loads = [os.getloadavg()[0]]
    revision, fingerprint = source_revision()
    contenders = one_batch_contenders(args.provider)
    bulk = args.bulk_requests > 0 and by_hand(args.provider).bulk is not None
    log("warming up (one small uncounted run of each contender: bytecode and disk caches)")
    for contender in (*contenders, *(BULK_CONTENDERS if bulk else ())):
        measure(contender, 100, args, quiet=True)
    runs: list[list[Measurement]] = []
    for n, repeat in sizes_of(args.sizes, args.repeat):
        runs.append(run_series(n, repeat, args, contenders))
        loads.append(os.getloadavg()[0])
    bulk_run = run_series(args.bulk_requests, args.bulk_repeat, args, BULK_CONTENDERS) if bulk else []
    loads.append(os.getloadavg()[0])
    now, latest = source_revision()
    if latest != fingerprint:
        revision += f"; **src/ changed during the run** (now {now}): the runs may mix versions"
    text = report(args, runs, bulk_run, started, loads, revision)
    print(text)
    if args.out is not None:
        write_report(args.out, text, args.provider)
        log(f"results written to {args.out}")
    if args.profile:
        profile_lowtide(args, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
