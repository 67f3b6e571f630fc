"""A program that makes many live calls at once through one lowtide actor, as an agent platform would: run by
`live_rate_limits.robot` in a process of its own against `lowtide emulator` over a socket.

    python live_client.py BASE_URL COUNT [--use-up N] [--ledger PATH|URL] [--no-share] [--prefix TEXT] [--host-id ID]

`--use-up N` first spends N requests of the key directly with the SDK (another program on the same key), so that
the actor meets 429s it could not foresee. `--ledger` names the actor's ledger (two clients on one ledger share one
quota; a `postgresql://` URL shares it through PostgreSQL; `--no-share` sets `live.share_quota: false`).
`--host-id` names the "host" the process stands for (LOWTIDE_HOST_ID: what the database sees it as). Prints one
JSON line: answered, failed (by error type), seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import Counter

import anthropic

from lowtide import Actor

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
    if args.use_up:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=args.base_url, max_retries=0) as other:
            await asyncio.gather(
                *(
                    other.messages.create(
                        model="claude-sonnet-5-5", max_tokens=16, messages=[{"role": "user", "content": f"other {n}"}]
                    )
                    for n in range(args.use_up)
                )
            )
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
    )
    started = time.monotonic()
    outcomes = await asyncio.gather(
        *(actor.run(f"{args.prefix} {n}") for n in range(args.count)), return_exceptions=True
    )
    seconds = time.monotonic() - started
    await actor.aclose()
    failed = Counter(type(o).__name__ for o in outcomes if isinstance(o, BaseException))
    answered = sum(1 for o in outcomes if not isinstance(o, BaseException))
    print(json.dumps({"answered": answered, "failed": dict(failed), "seconds": round(seconds, 2)}))


if __name__ == "__main__":
    asyncio.run(main())
