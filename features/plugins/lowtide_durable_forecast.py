"""The durable pydantic-ai agent of features/integrations/pydantic_ai_durable.feature, in a module of its own so that a
`lowtide agents resume` process imports it by reference as it would a user's: an unchanged pydantic-ai `Agent` with a
weather tool and a tool that needs a person's approval (`post_note`), whose side effects append a line to a file
(`DURABLE_FORECAST_LOG`: "weather", "post_note <text>"), made durable by `DurableAgent`.

Its actor is the scenario's when it set one (`ACTORS`), else built from the environment (`DURABLE_FORECAST_URL`: the
emulator's socket; the key in `DURABLE_FORECAST_KEY`), as a program's would be. `DURABLE_FORECAST_DIE_IN=<tool>`
kills the process inside that tool, before its side effect, with SIGKILL; `DURABLE_FORECAST_RETRY=1` makes the
weather tool ask the model to call it again (`ModelRetry`) the first time in a run. Only the `pydantic_ai` nox
session, which installs pydantic-ai, imports it. `tides` is a second agent, whose tool a person answers
(`CallDeferred`); `harbour` a third, whose tool reads the run's deps (a JSON value, or `Harbour` made by
`harbour_deps`, which no journal can store) and logs "tide_for <port>"."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent, CallDeferred, ModelRetry, RunContext

from lowtide import Actor
from lowtide.integrations.pydantic_ai import DurableAgent

ACTORS: dict[str, Actor] = {}


class Forecast(BaseModel):
    city: str
    summary: str
    temperature_c: int


def actor() -> Actor:
    if "forecaster" not in ACTORS:
        ACTORS["forecaster"] = Actor(
            {
                "name": "forecaster",
                "model": "claude-sonnet-5-5",
                "max_tokens": 1024,
                "batch_processing": "batch",
                "batch": {"poll_interval": 0.05, "coalesce_window": 0.2},
                "base_url": os.environ["DURABLE_FORECAST_URL"],
                "api_key_env": "DURABLE_FORECAST_KEY",
            }
        )
    return ACTORS["forecaster"]


def _side_effect(tool: str, line: str) -> None:
    if os.environ.get("DURABLE_FORECAST_DIE_IN") == tool:
        os.kill(os.getpid(), signal.SIGKILL)
    with Path(os.environ["DURABLE_FORECAST_LOG"]).open("a") as out:
        out.write(line + "\n")


# No model of its own: `DurableAgent` answers its requests through the actor (an agent's own model is replaced).
plain = Agent(output_type=Forecast, instructions="Give the forecast.")


def _logged(line: str) -> bool:
    log = Path(os.environ["DURABLE_FORECAST_LOG"])
    return log.exists() and line in log.read_text().splitlines()


@plain.tool_plain
async def weather(city: str) -> str:
    """Today's weather in a city."""
    if os.environ.get("DURABLE_FORECAST_RETRY") and not _logged("weather retry"):
        # Once a run (the log tells): the model is asked to call it again, as a flaky API's tool would.
        _side_effect("weather", "weather retry")
        raise ModelRetry("The weather service was busy: call it again. [[emulator:tool:weather]]")
    _side_effect("weather", "weather")
    # The emulated model calls the tool a tool's result names: the note next.
    return f"Sunny in {city}. [[emulator:tool:post_note]]"


@plain.tool_plain(requires_approval=True)
async def post_note(text: str) -> str:
    """Post a note about the forecast (a person approves it first)."""
    _side_effect("post_note", f"post_note {text}")
    return "Posted. [[emulator:tool:final_result]]"


forecast = DurableAgent(plain, actor, name="forecast")


# A second agent, whose one tool is answered from outside the run (`CallDeferred`): a person gives its result.
tide_reader = Agent(instructions="Say when high water is.")


@tide_reader.tool_plain
async def tide_table(port: str) -> str:
    """Today's tides at a port: read by a person from the harbour's board."""
    raise CallDeferred()


tides = DurableAgent(tide_reader, actor, name="tides")


@dataclass
class Harbour:
    """Deps a journal cannot store (as a client or a connection would be): made in each process by `harbour_deps`."""

    port: str


def harbour_deps() -> Harbour:
    return Harbour(os.environ.get("DURABLE_FORECAST_PORT", "Brest"))


# A third agent, whose tool reads the run's deps: a JSON value ({"port": ...}) or a `Harbour`.
harbour_master = Agent(deps_type=Any, instructions="Say when high water is at the harbour.")


@harbour_master.tool
async def tide_for(ctx: RunContext[Any]) -> str:
    """Today's high water at the run's harbour."""
    port = ctx.deps.port if isinstance(ctx.deps, Harbour) else ctx.deps["port"]
    _side_effect("tide_for", f"tide_for {port}")
    return f"High water at {port} at 06:12."


harbour = DurableAgent(harbour_master, actor, name="harbour")
