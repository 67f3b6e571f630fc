"""Time from a batch's end to the waiting call's answer, and status checks per batch: OpenAI's webhooks and Gemini's
per-job webhooks against fixed and adaptive polling, side by side in one run, over sockets.

    python benchmarks/webhook_latency.py [--batches 10] [--processing-seconds 1] [--poll-interval 4]

The emulator serves the OpenAI API on a loopback socket (the system clock), its batches taking `--processing-seconds`.
Each way runs `--batches` calls one after another, each its own batch, on a fresh ledger:

- `webhook`: the emulator POSTs each batch's end, signed, to the receiver of `lowtide webhooks` (its route, served
  from a thread of this process on a socket); the actor's `webhook_poll_interval` is an hour, so only the webhook
  wakes it.
- `gemini-job`: Gemini jobs created with the receiver's URL as their own webhook (`batch_webhook_url`); the emulator
  POSTs each job's end there, its RS256 token verified against the emulator's JWKS (`GEMINI_WEBHOOK_JWKS_URL`); the
  poll underneath an hour apart as for `webhook`.
- `fixed`: a status check every `--poll-interval` seconds.
- `adaptive`: `poll_schedule: adaptive`, after three batches alike have taught the ledger how long they take (those
  three are not counted).

A batch's end is the emulator's own moment (`ended_at` of its batch or job), the answer's the moment `actor.run`
returns. Prints one JSON line per way: median, 99th percentile and worst seconds from end to answer, status checks per
batch, and the machine's load average at the way's end (CPU seconds of this process beside the wall time).
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
from lowtide.emulator.gemini.emulation import GeminiEmulation
from lowtide.emulator.server import serve_in_thread
from lowtide.http.server import app_in_thread
from lowtide.webhooks.receiver import webhook_route

_KEY = "sk-benchmark"
_SECRET = "whsec_" + base64.b64encode(b"benchmark webhook secret").decode()
_WARM_UP = 3
_GEMINI_KEY_ENV = "LOWTIDE_BENCHMARK_GEMINI_KEY"


def _settings(way: str, poll_interval: float) -> dict[str, Any]:
    batch: dict[str, Any] = {"coalesce_window": 0, "poll_interval": poll_interval}
    if way == "webhook":
        batch |= {"poll_interval": 3600, "webhook_poll_interval": 3600}
    elif way == "adaptive":
        batch |= {"poll_schedule": "adaptive"}
    return {"name": way, "provider": "openai", "model": "gpt-5.4-mini", "batch_processing": "batch", "batch": batch}


async def _calls(actor: Actor, emulator: Emulator, gemini: bool, count: int, warm_up: int) -> tuple[list[float], int]:
    route = "gemini.batches.get" if gemini else "openai.batches.retrieve"
    waits: list[float] = []
    checks = 0
    for n in range(warm_up + count):
        before = emulator.calls[route]
        await actor.run(f"Tide table, question {n}", key=f"q{n}")
        answered = time.time()
        store = emulator.emulation(GeminiEmulation).batches if gemini else emulator.openai.batches
        ended = store.oldest_first()[-1].ended_at  # this call's batch: the newest
        if n >= warm_up:
            waits.append(answered - ended)
            checks += emulator.calls[route] - before
    return waits, checks


def _gemini_settings(url: str, receiver: str) -> dict[str, Any]:
    batch = {"coalesce_window": 0, "poll_interval": 3600, "webhook_poll_interval": 3600, "watch_interval": 0.05}
    return {"name": "gemini-job", "provider": "gemini", "model": "gemini-2.5-flash", "max_tokens": 64,
            "batch_processing": "batch", "base_url": url, "api_key_env": _GEMINI_KEY_ENV, "batch": batch,
            "provider_options": {"gemini": {"batch_webhook_url": receiver}}}  # fmt: skip


def _way(way: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    emulator = Emulator(processing_seconds=args.processing_seconds)
    started, cpu = time.time(), time.process_time()
    with serve_in_thread(emulator) as server:
        os.environ["OPENAI_BASE_URL"] = f"{server.url}/v1"
        os.environ["GEMINI_WEBHOOK_JWKS_URL"] = f"{server.url}/_emulator/jwks/gemini"
        ledger = str(folder / f"{way}.db")
        app = Starlette()
        serving = app_in_thread(app) if way in ("webhook", "gemini-job") else None
        try:
            settings = _settings(way, args.poll_interval)
            if serving is not None:
                url, _ = serving.__enter__()
                if way == "gemini-job":  # the jobs name the receiver, whose URL is known once it listens
                    settings = _gemini_settings(server.url, f"{url}/webhooks/gemini")
                else:
                    emulator.openai.add_webhook(f"{url}/webhooks/openai", _SECRET)
                app.router.routes.append(webhook_route(Actor(settings, ledger=ledger)))
            actor = Actor(settings, ledger=ledger)

            async def go() -> tuple[list[float], int]:
                try:
                    warm_up = _WARM_UP if way == "adaptive" else 0
                    return await _calls(actor, emulator, way == "gemini-job", args.batches, warm_up)
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
        "wall_s": round(time.time() - started, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--processing-seconds", type=float, default=1.0)
    parser.add_argument("--poll-interval", type=float, default=4.0)
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = _KEY
    os.environ["OPENAI_WEBHOOK_SECRET"] = _SECRET
    os.environ[_GEMINI_KEY_ENV] = "gemini-benchmark-key"
    os.environ.pop("GEMINI_WEBHOOK_SECRET", None)  # Gemini's per-job tokens alone
    with tempfile.TemporaryDirectory() as folder:
        for way in ("webhook", "gemini-job", "fixed", "adaptive"):
            print(json.dumps(_way(way, args, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
