"""What a batch's trace costs: batches sent and collected one after another with telemetry off (the baseline), and on
(an SDK tracer provider whose exporter drops every span), measured in the same run; beside them, what keeping a
batch's trace context with its intent costs alone (`propagation.carrier_of` of one span).

    python benchmarks/batch_trace.py [--batches 200] [--runs 5] [--src PATH]

`--src` runs the rows on another checkout's `src/` (put first on the children's path): the same two rows on the
code before a change give its cost as the difference of the two runs' ratios.

Each row is a fresh interpreter (telemetry is switched on once per process, by its global tracer provider), run
`--runs` times in turn with the other (so that a change in the machine's load falls on both alike): one actor in batch
mode on an in-process emulator and an in-memory ledger sends `--batches` calls one after the other, each its own
batch (intent, create, poll, results). The table gives each row's median CPU (the child's process time) and wall
seconds per batch (the batches alone, timed in the child: its start and a warm-up call left out), and its ratio to
the baseline's. The load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_RUN = """
import asyncio, json, sys, time
traced = {traced}
if traced:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
from lowtide import Actor
from lowtide.emulator import Emulator
from lowtide.ledger.memory.ledger import MemoryLedger

async def batches():
    actor = Actor(
        {{"name": "bench", "model": "claude-haiku-4-5", "batch_processing": "batch", "max_tokens": 16,
         "batch": {{"poll_interval": 0.001, "coalesce_window": 0.0}}}},
        client=Emulator().client(), ledger=MemoryLedger(),
    )
    async with actor:
        await actor.run("warm up", key="warm")
        cpu, wall = time.process_time(), time.perf_counter()
        for n in range({batches}):
            await actor.run(f"question {{n}}", key=f"q-{{n}}")
        return time.process_time() - cpu, time.perf_counter() - wall

cpu, wall = asyncio.run(batches())
carrier = None
try:
    from lowtide.telemetry.propagation import carrier_of
except ImportError:  # a checkout from before batches kept their trace context (`--src`)
    traced = False
if traced:
    from lowtide.telemetry.scope import tracer
    span = tracer().start_span("probe")
    start = time.process_time()
    for _ in range(10_000):
        carrier_of(span)
    carrier = (time.process_time() - start) / 10_000
    span.end()
print(json.dumps({{"carrier": carrier, "cpu": cpu, "wall": wall}}))
"""

ROWS = {"telemetry off (the baseline)": False, "telemetry on, spans dropped": True}
BASELINE = "telemetry off (the baseline)"


def measure(traced: bool, batches: int, src: str | None) -> tuple[float, float, float | None]:
    """(CPU, wall) seconds of one run's batches, and the CPU seconds of one `carrier_of` (on only)."""
    code = _RUN.format(traced=traced, batches=batches)
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env).stdout
    found = json.loads(out.strip().splitlines()[-1])
    return found["cpu"], found["wall"], found["carrier"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=200, help="batches sent one after the other in each run")
    parser.add_argument("--runs", type=int, default=5, help="runs of each row (medians)")
    parser.add_argument("--src", help="another checkout's src/ to run the rows on")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    samples: dict[str, list[tuple[float, float, float | None]]] = {name: [] for name in ROWS}
    for _ in range(args.runs):
        for name, traced in ROWS.items():
            samples[name].append(measure(traced, args.batches, args.src))
    end = os.getloadavg()[0]
    print(
        f"Python {sys.version.split()[0]}; {args.batches} batches a run, {args.runs} runs a row; src {args.src or '.'}"
    )
    print(f"load average (1 min) {load:.2f} at the start, {end:.2f} at the end")
    print()
    per = {name: [(c / args.batches, w / args.batches) for c, w, _ in rows] for name, rows in samples.items()}
    base_cpu = statistics.median(c for c, _ in per[BASELINE])
    base_wall = statistics.median(w for _, w in per[BASELINE])
    print("| row | CPU ms a batch | wall ms a batch | CPU ratio | wall ratio |")
    print("|---|---|---|---|---|")
    for name, rows in per.items():
        cpu = statistics.median(c for c, _ in rows)
        wall = statistics.median(w for _, w in rows)
        print(f"| {name} | {cpu * 1000:.2f} | {wall * 1000:.2f} | {cpu / base_cpu:.2f} | {wall / base_wall:.2f} |")
    carriers = [c for _, _, c in samples["telemetry on, spans dropped"] if c is not None]
    if carriers:
        print()
        print(f"carrier_of(span), the context an intent keeps: {statistics.median(carriers) * 1e6:.1f} us of CPU")


if __name__ == "__main__":
    main()
