"""A program that makes many live calls at once through one lowtide actor, as an agent platform would: run by
`live_rate_limits.robot` in a process of its own against `lowtide emulator` over a socket.

    python live_client.py BASE_URL COUNT [--use-up N] [--ledger PATH|URL] [--no-share] [--prefix TEXT] [--host-id ID]

`--use-up N` first spends N requests of the key directly with the SDK (another program on the same key), and that
program goes on spending what the key earns back (faster than it refills) until the actor has met a 429 (its quota
paused) or a minute has passed, and the actor's calls start once that program has met a 429 (the key is empty): so
the actor meets 429s it could not foresee, however long this machine took to start its calls. `--ledger` names the
actor's ledger (two clients on one ledger share one quota; a `postgresql://` URL shares it through PostgreSQL;
`--no-share` sets `live.share_quota: false`). `--host-id` names the "host" the process stands for (LOWTIDE_HOST_ID:
what the database sees it as). Prints one JSON line: answered, failed (by error type), seconds, pauses (how often
the actor's quota paused for a 429) and other_refused (the other program's 429s).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import time
from collections import Counter

import anthropic

from lowtide import Actor
from lowtide.live.events import LiveEvent, PauseStarted

KEY = "robot-live-key"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("count", type=int)
    parser.add_argument("--use-up", type=int, default=0)
    parser.add_argument("--ledger")
    parser.add_argument("--no-share", action="store_true")
    parser.add_argument("--prefix", default="Question")
    parser.add_argument("--host-id")
    args = parser.parse_args()
    if args.host_id:
        os.environ["LOWTIDE_HOST_ID"] = args.host_id
    paused = asyncio.Event()
    pauses = 0

    def observe(event: LiveEvent) -> None:
        nonlocal pauses
        if isinstance(event, PauseStarted):
            pauses += 1
            paused.set()

    actor = Actor(
        {
            "name": "live-robot",
            "model": "claude-sonnet-5-5",
            "max_tokens": 64,
            "batch_processing": "live",
            "base_url": args.base_url,
            "live": {"max_concurrency": 32, "retries": {"rate_limited": 20}, "share_quota": not args.no_share},
        },
        api_key=KEY,
        ledger=args.ledger,
        observers=[observe],
    )
    other = OtherProgram(args.base_url)
    if args.use_up:
        await other.spend(args.use_up)
        other.keep_spending(until=paused)
        await asyncio.wait_for(other.drained.wait(), 60)  # the key is empty when the actor's calls start
    started = time.monotonic()
    outcomes = await asyncio.gather(
        *(actor.run(f"{args.prefix} {n}") for n in range(args.count)), return_exceptions=True
    )
    seconds = time.monotonic() - started
    await actor.aclose()
    await other.close()
    failed = Counter(type(o).__name__ for o in outcomes if isinstance(o, BaseException))
    answered = sum(1 for o in outcomes if not isinstance(o, BaseException))
    print(
        json.dumps(
            {
                "answered": answered,
                "failed": dict(failed),
                "seconds": round(seconds, 2),
                "pauses": pauses,
                "other_refused": other.refused,
            }
        )
    )


class OtherProgram:
    """Another program on the same key, calling the API directly (no retries): it spends the key's budget."""

    def __init__(self, base_url: str) -> None:
        self._client = anthropic.AsyncAnthropic(api_key=KEY, base_url=base_url, max_retries=0)
        self._spenders: list[asyncio.Task[None]] = []
        self.drained = asyncio.Event()
        self.refused = 0
        """The 429s this program met (the actor's are its quota's `pauses`)."""

    async def spend(self, count: int) -> None:
        """Make `count` calls at once (all of them answered: `count` is at most the key's limit)."""
        await asyncio.gather(*(self._call(f"other {n}") for n in range(count)))

    def keep_spending(self, *, until: asyncio.Event) -> None:
        """Go on calling, two calls at a time each 50 ms after the last answer (a 429 ignored), until `until` is set or
        a minute has passed: a token the key earns back (one every half second at 120 a minute) is spent within
        about 50 ms, so the key stays empty. `drained` is set at the first 429: the key is empty now."""

        async def spending() -> None:
            deadline = time.monotonic() + 60
            while not until.is_set() and time.monotonic() < deadline:
                await self._call("other, again", refused_ok=True)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(until.wait(), 0.05)

        self._spenders = [asyncio.create_task(spending()) for _ in range(2)]

    async def _call(self, text: str, *, refused_ok: bool = False) -> None:
        try:
            await self._client.messages.create(
                model="claude-sonnet-5-5", max_tokens=16, messages=[{"role": "user", "content": text}]
            )
        except anthropic.RateLimitError:
            if not refused_ok:
                raise
            self.refused += 1
            self.drained.set()

    async def close(self) -> None:
        await asyncio.gather(*self._spenders)
        await self._client.close()


if __name__ == "__main__":
    asyncio.run(main())
