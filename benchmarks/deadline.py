"""A deadline run whose batch the emulator makes late, against the same items all by batch: the share of items
answered by the deadline (goal: all) and the extra cost against the all-batch price, in one run.

Each run is on a fresh in-process emulator and ledger, on a virtual clock (the time figures are the clock's, the
deadline's). The deadline run's ledger first holds a history of fast batches (three of 60 s), so the route is the
batch; then the emulator's batches take `--late-hours` (3 h), past the deadline (`--deadline`, 2 h): at the route's
move the batch is canceled, the requests it answered before the cancel are kept at batch prices, and only those its
results show canceled go live. Costs are genai-prices' prices of the usage the answers report; CPU and wall seconds
and the load average are printed beside them.

    python benchmarks/deadline.py [--items 2000] [--deadline 2h] [--late-hours 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import httpx2
from anthropic import AsyncAnthropic

from lowtide import Actor
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator
from lowtide.routing.deadlines import parse_deadline

_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True)
class Outcome:
    """What one run came to."""

    cost: Decimal
    answered: int
    """Items answered by the deadline (all of them, for the run without one)."""
    live: int
    """Items sent live."""
    batches: int


async def one(items: int, *, deadline: str | None, late_hours: float) -> Outcome:
    """A run of `items` prompts: with `deadline`, a late batch after a fast history; without, all by batch."""
    clock = ManualClock(settle=50)
    emulator = Emulator(clock=clock, processing_seconds=60.0)
    client = AsyncAnthropic(
        api_key="sk-ant-benchmark",
        base_url=emulator.base_url,
        http_client=httpx2.AsyncClient(transport=emulator.transport(), base_url=emulator.base_url),
        max_retries=0,
    )
    prompts = [f"Summarise the tides of port {n}." for n in range(items)]
    with tempfile.TemporaryDirectory() as folder:
        actor = Actor(
            {
                "name": "bench",
                "model": _MODEL,
                "max_tokens": 64,
                "batch_processing": "batch",
                "ledger": str(Path(folder) / "ledger.sqlite3"),
                "batch": {"poll_interval": 10},
            },
            client=client,
            clock=clock,
        )
        try:
            due = None
            if deadline is not None:
                await actor.map([f"Earlier {n}" for n in range(3)], items_per_batch=1, run_id="history")
                emulator.processing_seconds = late_hours * 3600
                due = parse_deadline(deadline, now=clock.now()).at
            live_before = emulator.calls["messages.create"]
            result = await actor.map(prompts, progress="none", deadline=deadline)
            ended = clock.now()
        finally:
            await actor.aclose()
    cost = result.cost_usd
    assert cost is not None, result.summary()
    on_time = sum(1 for item in result.items if item.ok) if due is None or ended <= due else 0
    return Outcome(cost, on_time, emulator.calls["messages.create"] - live_before, emulator.created_batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--deadline", default="2h")
    parser.add_argument("--late-hours", type=float, default=3.0)
    args = parser.parse_args()
    load = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    batch = asyncio.run(one(args.items, deadline=None, late_hours=args.late_hours))
    batch_wall, batch_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    late = asyncio.run(one(args.items, deadline=args.deadline, late_hours=args.late_hours))
    late_wall, late_cpu = time.perf_counter() - wall, time.process_time() - cpu
    batch_cost, late_cost = batch.cost, late.cost
    print(f"{args.items:,} items, {_MODEL}; deadline {args.deadline}; batches made {args.late_hours:g} h late")
    print(f"  load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"  all by batch:  ${batch_cost:.6f}, {batch.batches} batch(es); wall {batch_wall:.2f}s, CPU {batch_cpu:.2f}s"
    )
    print(
        f"  with deadline: ${late_cost:.6f}, {late.batches} batch(es) (3 of them the history), {late.live} item(s)"
        f" moved live; wall {late_wall:.2f}s, CPU {late_cpu:.2f}s"
    )
    print(f"  answered by the deadline: {late.answered}/{args.items} ({late.answered / args.items:.1%}; goal: all)")
    print(
        f"  extra cost against the all-batch price: {late_cost / batch_cost - 1:+.1%}"
        f" (CPU ratio {late_cpu / batch_cpu:.2f})"
    )


if __name__ == "__main__":
    main()
