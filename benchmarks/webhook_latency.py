"""Time from a batch's end to the waiting call's answer, and status checks per batch: OpenAI's webhooks against fixed
and adaptive polling, side by side in one run, over sockets.

    python benchmarks/webhook_latency.py [--batches 10] [--processing-seconds 1] [--poll-interval 4]

The emulator serves the OpenAI API on a loopback socket (the system clock), its batches taking `--processing-seconds`.
Each way runs `--batches` calls one after another, each its own batch, on a fresh ledger:

- `webhook`: the emulator POSTs each batch's end, signed, to the receiver of `lowtide webhooks` (its route, served
  from a thread of this process on a socket); the actor's `webhook_poll_interval` is an hour, so only the webhook
  wakes it.
- `fixed`: a status check every `--poll-interval` seconds.
- `adaptive`: `poll_schedule: adaptive`, after three batches alike have taught the ledger how long they take (those
  three are not counted).

A batch's end is the emulator's own moment (`OpenAIBatch.ended_at`), the answer's the moment `actor.run` returns.
Prints one JSON line per way: median, 99th percentile and worst seconds from end to answer, status checks per batch.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.applications import Starlette

from lowtide import Actor
from lowtide.emulator import Emulator
from lowtide.emulator.server import serve_in_thread
from lowtide.http.server import app_in_thread
from lowtide.webhooks.receiver import webhook_route

_KEY = "sk-benchmark"
_SECRET = "whsec_" + base64.b64encode(b"benchmark webhook secret").decode()
_WARM_UP = 3


def _settings(way: str, poll_interval: float) -> dict[str, Any]:
    batch: dict[str, Any] = {"coalesce_window": 0, "poll_interval": poll_interval}
    if way == "webhook":
        batch |= {"poll_interval": 3600, "webhook_poll_interval": 3600}
    elif way == "adaptive":
        batch |= {"poll_schedule": "adaptive"}
    return {"name": way, "provider": "openai", "model": "gpt-5.4-mini", "batch_processing": "batch", "batch": batch}


async def _calls(actor: Actor, emulator: Emulator, count: int, warm_up: int) -> tuple[list[float], int]:
    waits: list[float] = []
    checks = 0
    for n in range(warm_up + count):
        before = emulator.calls["openai.batches.retrieve"]
        await actor.run(f"Tide table, question {n}", key=f"q{n}")
        answered = time.time()
        ended = emulator.openai.batches.oldest_first()[-1].ended_at  # this call's batch: the newest
        if n >= warm_up:
            waits.append(answered - ended)
            checks += emulator.calls["openai.batches.retrieve"] - before
    return waits, checks


def _way(way: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    emulator = Emulator(processing_seconds=args.processing_seconds)
    with serve_in_thread(emulator) as server:
        os.environ["OPENAI_BASE_URL"] = f"{server.url}/v1"
        ledger = str(folder / f"{way}.db")
        settings = _settings(way, args.poll_interval)
        receiving = Actor(settings, ledger=ledger) if way == "webhook" else None
        serving = app_in_thread(Starlette(routes=[webhook_route(receiving)])) if receiving is not None else None
        try:
            if serving is not None:
                url, _ = serving.__enter__()
                emulator.openai.add_webhook(f"{url}/webhooks/openai", _SECRET)
            actor = Actor(settings, ledger=ledger)

            async def go() -> tuple[list[float], int]:
                try:
                    warm_up = _WARM_UP if way == "adaptive" else 0
                    return await _calls(actor, emulator, args.batches, warm_up)
                finally:
                    await actor.aclose()

            waits, checks = asyncio.run(go())
        finally:
            if serving is not None:
                serving.__exit__(None, None, None)
    waits.sort()
    return {
        "way": way,
        "batches": len(waits),
        "median_s": round(statistics.median(waits), 3),
        "p99_s": round(waits[min(len(waits) - 1, int(0.99 * len(waits)))], 3),
        "worst_s": round(waits[-1], 3),
        "status_checks_per_batch": round(checks / len(waits), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--processing-seconds", type=float, default=1.0)
    parser.add_argument("--poll-interval", type=float, default=4.0)
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = _KEY
    os.environ["OPENAI_WEBHOOK_SECRET"] = _SECRET
    with tempfile.TemporaryDirectory() as folder:
        for way in ("webhook", "fixed", "adaptive"):
            print(json.dumps(_way(way, args, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
