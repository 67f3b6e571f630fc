"""Cache-aware batches on the emulator: a bulk run of N items (default 2,000) sharing a 6,000-token system prompt,
its cost per item with the cache primer (one request sent first, marked to be cached for an hour, the rest once it is
answered) against without (`batch.cache_primers: false`: every request pays the prompt whole), each run on a fresh
in-process emulator and ledger, on a virtual clock. The emulator models caching as Anthropic documents it (a write
seen by requests that start after it, within its lifetime; none of a batch's requests reading another's write; the
model's minimum length; usage's cache_creation and cache_read tokens), and costs are genai-prices' batch prices of
the usage the answers report: the saving is measured, not assumed.

    python benchmarks/cache_primer.py [--items 2000] [--model claude-sonnet-5-5]

Goal (issue 63): at least 35% lower cost per item with the primer. Each run's cache reads and writes as its answers
report them (what lowtide priced) are checked against the emulator's own accounting of what it read and wrote for
each batch's requests; wall and CPU time of each run, and the load average before and after, are printed beside
them (the machine is shared: the two runs compare within one invocation, never against another day's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import httpx2
from anthropic import AsyncAnthropic

from lowtide import Actor
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator

_SYSTEM_TOKENS = 6000
_SENTENCE = "You are the harbour master's assistant; you know every tide table of the coast by heart. "


def emulated_cache(emulator: Emulator) -> dict[str, int]:
    """What the emulator itself read from and wrote to its prompt cache for every batch's requests."""
    store = emulator.anthropic.batches
    read = created = 0
    for batch_id in store.newest_first():
        batch = store.get(batch_id)
        settlement = batch.settlement if batch is not None else None
        if settlement is not None:
            read += sum(usage.read for usage in settlement.cache.values())
            created += sum(usage.created for usage in settlement.cache.values())
    return {"cache_read_input_tokens": read, "cache_creation_input_tokens": created}


async def one(items: int, model: str, *, primers: bool) -> tuple[Decimal, dict[str, int], int, dict[str, int]]:
    """(cost per item, usage summed, batches, the emulator's cache accounting) of a run of `items` prompts sharing
    the system prompt."""
    clock = ManualClock()
    emulator = Emulator(clock=clock, processing_seconds=60.0)
    client = AsyncAnthropic(
        api_key="sk-ant-benchmark",
        base_url=emulator.base_url,
        http_client=httpx2.AsyncClient(transport=emulator.transport(), base_url=emulator.base_url),
        max_retries=0,
    )
    system = (_SENTENCE * (_SYSTEM_TOKENS * 4 // len(_SENTENCE) + 1))[: _SYSTEM_TOKENS * 4]
    with tempfile.TemporaryDirectory() as folder:
        actor = Actor(
            {
                "name": "bench",
                "model": model,
                "system_prompt": system,
                "max_tokens": 64,
                "batch_processing": "batch",
                "ledger": str(Path(folder) / "ledger.sqlite3"),
                "batch": {"poll_interval": 10, "cache_primers": primers},
            },
            client=client,
            clock=clock,
        )
        try:
            result = await actor.map([f"Summarise the tides of port {n}." for n in range(items)], progress="none")
        finally:
            await actor.aclose()
    cost = result.cost_usd
    assert cost is not None, result.summary()
    assert result.ok, result.summary()
    return cost / items, result.usage(), emulator.created_batches, emulated_cache(emulator)


def timed(
    items: int, model: str, *, primers: bool
) -> tuple[Decimal, dict[str, int], int, dict[str, int], float, float]:
    """`one`, with its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = asyncio.run(one(items, model, primers=primers))
    return (*outcome, time.perf_counter() - wall, time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--model", default="claude-sonnet-5-5")
    args = parser.parse_args()
    load_before = os.getloadavg()
    runs = {primers: timed(args.items, args.model, primers=primers) for primers in (False, True)}
    load_after = os.getloadavg()
    print(f"{args.items:,} items sharing a {_SYSTEM_TOKENS:,}-token system prompt, {args.model}, batch prices")
    for primers, (per_item, used, batches, emulated, wall, cpu) in runs.items():
        name = "with primer:   " if primers else "without primer:"
        reads, writes = used["cache_read_input_tokens"], used["cache_creation_input_tokens"]
        print(f"  {name} ${per_item:.6f} per item, {batches} batch(es), {wall:.2f} s wall / {cpu:.2f} s CPU")
        print(f"    cache per item: {reads / args.items:,.1f} tokens read, {writes / args.items:,.1f} written")
        print(f"    usage: {used}")
        agrees = all(used[name] == emulated[name] for name in emulated)
        print(f"    the emulator's own accounting: {emulated} ({'the same' if agrees else 'DIFFERENT'})")
        assert agrees, (used, emulated)
    lower = 1 - runs[True][0] / runs[False][0]
    print(f"  cost per item {lower:.1%} lower with the primer (goal: at least 35%)")
    print(f"  load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after"
          f" {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} CPU(s)")  # fmt: skip


if __name__ == "__main__":
    main()
