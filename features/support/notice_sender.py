"""A process of its own that answers one call in batch mode and tells the user's server (`batch.notify`), for
webhooks_out.feature's SIGKILL scenario: `python notice_sender.py SETTINGS_JSON LEDGER PROMPT KEY API_KEY`. The
emulated OpenAI API runs inside it, on the real clock; it prints "answered" once the call is, then closes the actor,
which waits on the notice the scenario's receiver holds open until the scenario kills it."""

from __future__ import annotations

import asyncio
import json
import sys

from lowtide import Actor
from lowtide.emulator import Emulator


async def main(settings: dict[str, object], ledger: str, prompt: str, key: str, api_key: str) -> None:
    emulator = Emulator(processing_seconds=0)
    client = emulator.openai_client(api_key=api_key)
    actor = Actor(settings, client=client, ledger=ledger)
    try:
        await actor.run(prompt, key=key)
        print("answered", flush=True)
    finally:
        await actor.aclose()
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1]), *sys.argv[2:6]))
