"""The durable LangChain agents of features/integrations/langchain_durable.feature, in a module of their own so that a
`lowtide agents resume` process imports them by reference as it would a user's: `helper`, a `DurableToolAgent` with
a weather tool and a note tool whose side effects append a line to a file (`DURABLE_HELPER_LOG`: "weather <city>",
"post_note"); `clerk`, whose one tool fails (appending "lookup" first); `hasty`, allowed one turn only.

Its actor is built from the environment (`DURABLE_HELPER_URL`: the emulator's socket; the key in
`DURABLE_HELPER_KEY`), as a program's would be. `DURABLE_HELPER_DIE_IN=<tool>` kills the process inside that tool,
before its side effect, with SIGKILL. Only the `langchain` nox session, which installs langchain-core, imports it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from langchain_core.tools import tool

from lowtide import Actor
from lowtide.integrations.langchain import DurableToolAgent

ACTORS: dict[str, Actor] = {}


def actor() -> Actor:
    if "helper" not in ACTORS:
        ACTORS["helper"] = Actor(
            {
                "name": "helper",
                "model": "claude-sonnet-5-5",
                "max_tokens": 512,
                "batch_processing": "batch",
                "batch": {"poll_interval": 0.05, "coalesce_window": 0.2},
                "base_url": os.environ["DURABLE_HELPER_URL"],
                "api_key_env": "DURABLE_HELPER_KEY",
            }
        )
    return ACTORS["helper"]


def _side_effect(name: str, line: str) -> None:
    if os.environ.get("DURABLE_HELPER_DIE_IN") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    with Path(os.environ["DURABLE_HELPER_LOG"]).open("a") as out:
        out.write(line + "\n")


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    _side_effect("weather", "weather")
    return f"Sunny in {city}. [[emulator:tool:post_note]]"  # the emulated model calls the tool a result names


async def post_note(text: str) -> str:
    """Post a note about the weather (a plain async function: made a LangChain tool by the agent)."""
    _side_effect("post_note", "post_note")
    return "Posted."


helper = DurableToolAgent(actor, [weather, post_note], name="helper", system_prompt="Say what the weather is.")


@tool
def lookup(order: str) -> str:
    """Where an order is."""
    _side_effect("lookup", "lookup")
    raise ValueError("the order service is down")


clerk = DurableToolAgent(actor, [lookup], name="clerk")
hasty = DurableToolAgent(actor, [weather, post_note], name="hasty", max_turns=1)
