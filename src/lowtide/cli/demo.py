"""`lowtide demo`: a few actors from the bundled configuration run concurrent batch-mode calls against the
in-process emulator, and the answers, batch ids and costs (batch price beside live price) are printed; then one
actor runs a small bulk run (a data set of reviews, split into batches) and its summary is printed."""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from decimal import Decimal
from importlib.resources import files
from pathlib import Path
from typing import TextIO

from lowtide.actor import Actor
from lowtide.bulk.outputs.results import RunResult
from lowtide.config.actors import BatchProcessingMode, load_actors
from lowtide.core.clock import Clock
from lowtide.core.run_reports import usd
from lowtide.emulator import Emulator
from lowtide.errors import ActorError
from lowtide.ledger.sqlite import Ledger
from lowtide.types import ActorResponse

__all__ = ["DEMO_CALLS", "DemoCall", "run_demo"]


@dataclass(frozen=True)
class DemoCall:
    actor: str
    prompt: str


DEMO_CALLS = (
    DemoCall("planner", "Plan the move of our nightly report job from cron to a task queue."),
    DemoCall("planner", "Plan adding retries with backoff to the payment webhook handler."),
    DemoCall("reviewer", "Review: a migration that renames the users.email column in place."),
    DemoCall("reviewer", "Review: a change that caches feature flags for ten minutes."),
    DemoCall("summarizer", "Summarize why batch APIs cost half as much as live calls."),
    DemoCall("summarizer", "Summarize the trade-off between latency and price for agent calls."),
)


def bundled_configuration() -> Path:
    return Path(str(files("lowtide") / "data" / "demo_actors.yaml"))


async def run_demo(
    out: TextIO,
    *,
    config: Path | None = None,
    processing_seconds: float = 1.0,
    calls: tuple[DemoCall, ...] = DEMO_CALLS,
    clock: Clock | None = None,
    bulk_items: int = 200,
) -> int:
    """Run the demo, writing a report to `out`; returns the number of calls (and bulk items) that failed.

    `clock` is shared by the emulator and the actors (a `ManualClock` makes the demo instant in tests).
    """
    path = config or bundled_configuration()
    configurations = load_actors(path)
    emulator = Emulator(clock=clock, processing_seconds=processing_seconds)
    client = emulator.client()
    # The emulator's batches are the demo's alone: a ledger of its own, gone when it ends.
    scratch = tempfile.TemporaryDirectory(prefix="lowtide-demo-")
    ledger = Ledger(Path(scratch.name) / "ledger.sqlite3")
    actors = {name: Actor(cfg, client=client, clock=clock, ledger=ledger) for name, cfg in configurations.items()}
    selected = [call for call in calls if call.actor in actors] or [
        DemoCall(name, f"Introduce yourself, {name}.") for name in actors
    ]
    out.write(
        f"lowtide demo: {len(selected)} concurrent calls from {len(actors)} actors ({path.name}), "
        "in batch mode against the in-process emulator: no API key, no network.\n\n"
    )
    started = time.perf_counter()
    bulk: RunResult | None = None
    try:
        outcomes = await asyncio.gather(
            *(_run(actors[call.actor], call.prompt) for call in selected), return_exceptions=False
        )
        elapsed = time.perf_counter() - started
        if bulk_items > 0 and not any(isinstance(outcome, ActorError) for outcome in outcomes):
            bulk = await _bulk_run(actors.get("summarizer") or next(iter(actors.values())), bulk_items)
    finally:
        for actor in actors.values():
            await actor.aclose()
        await client.close()
        ledger.close()
        scratch.cleanup()

    batch_total = live_total = Decimal(0)
    batches: set[str] = set()
    failures = 0
    for call, outcome in zip(selected, outcomes, strict=True):
        out.write(f"[{call.actor}] {call.prompt}\n")
        if isinstance(outcome, ActorError):
            failures += 1
            out.write(f"  failed: {outcome}\n\n")
            continue
        batches.add(outcome.ids.batch_id or "?")
        out.write(f"  answer: {outcome.text}\n")
        out.write(
            f"  batch {outcome.ids.batch_id}  custom_id {outcome.ids.custom_id}  mode {outcome.mode.value}  "
            f"tokens {outcome.usage.input_tokens} in / {outcome.usage.output_tokens} out\n"
        )
        cost = outcome.cost
        if cost is not None:
            batch_total += cost.total_usd
            live_total += cost.live_equivalent_usd
            out.write(f"  cost ${cost.total_usd:.6f} at batch prices (live: ${cost.live_equivalent_usd:.6f})\n")
        out.write("\n")
    saved = live_total - batch_total
    share = f" ({saved / live_total:.0%})" if live_total else ""
    out.write(
        f"{len(selected) - failures} of {len(selected)} calls answered through {len(batches)} batch(es) "
        f"in {elapsed:.1f} s.\n"
        f"Cost at batch prices: ${batch_total:.6f}. The same calls live: ${live_total:.6f}. "
        f"Saved ${saved:.6f}{share}.\n"
    )
    if bulk is not None:
        failures += len(bulk) - len(bulk.completed)
        batch_ids = {item.response.ids.batch_id for item in bulk.completed if item.response is not None}
        out.write(
            f"\nBulk run {bulk.run_id}: {len(bulk.completed)} of {len(bulk)} reviews summarized through"
            f" {len(batch_ids)} batch(es) of at most {_BULK_PER_BATCH}, in input order; {usd(bulk.cost_usd)} at batch"
            f" prices (live: {usd(bulk.live_cost_usd)}).\n"
        )
        for item in bulk.items[:3]:
            out.write(f"  #{item.index} {item.text}\n")
    return failures


_BULK_PER_BATCH = 50


async def _bulk_run(actor: Actor, count: int) -> RunResult:
    """A small data set through `actor.map`: one result per input, in order, split into batches."""
    reviews = [
        f"Summarize review {n}: the harbour ferry was {('late', 'on time', 'full')[n % 3]}." for n in range(count)
    ]
    return await actor.map(reviews, items_per_batch=_BULK_PER_BATCH)


async def _run(actor: Actor, prompt: str) -> ActorResponse[object] | ActorError:
    try:
        return await actor.run(prompt, mode=BatchProcessingMode.BATCH)
    except ActorError as exc:
        return exc
