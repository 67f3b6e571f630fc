"""Cache-aware batches on the emulator: a bulk run of N items (default 2,000) sharing a 6,000-token system prompt,
its cost per item with the cache primer (one request sent first, marked to be cached for an hour, the rest once it is
answered) against without (`batch.cache_primers: false`: every request pays the prompt whole), each run on a fresh
in-process emulator and ledger, on a virtual clock. The emulator models caching as Anthropic documents it (a write
seen by requests that start after it, within its lifetime; none of a batch's requests reading another's write; the
model's minimum length; usage's cache_creation and cache_read tokens), and costs are genai-prices' batch prices of
the usage the answers report: the saving is measured, not assumed.

    python benchmarks/cache_primer.py [--items 2000] [--model claude-sonnet-5-5]

Goal (issue 63): at least 35% lower cost per item with the primer.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from decimal import Decimal
from pathlib import Path

import httpx2
from anthropic import AsyncAnthropic

from lowtide import Actor
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator

_SYSTEM_TOKENS = 6000
_SENTENCE = "You are the harbour master's assistant; you know every tide table of the coast by heart. "


async def one(items: int, model: str, *, primers: bool) -> tuple[Decimal, dict[str, int], int]:
    """(cost per item, usage summed, batches) of a run of `items` prompts sharing the system prompt."""
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
    return cost / items, result.usage(), emulator.created_batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--model", default="claude-sonnet-5-5")
    args = parser.parse_args()
    without, used_without, batches_without = asyncio.run(one(args.items, args.model, primers=False))
    primed, used_primed, batches_primed = asyncio.run(one(args.items, args.model, primers=True))
    lower = 1 - primed / without
    print(f"{args.items:,} items sharing a {_SYSTEM_TOKENS:,}-token system prompt, {args.model}, batch prices")
    print(f"  without primer: ${without:.6f} per item, {batches_without} batch(es), usage {used_without}")
    print(f"  with primer:    ${primed:.6f} per item, {batches_primed} batch(es), usage {used_primed}")
    print(f"  cost per item {lower:.1%} lower with the primer (goal: at least 35%)")


if __name__ == "__main__":
    main()
