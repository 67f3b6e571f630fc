"""Steps of `pydantic_ai_examples.feature`: pydantic-ai's documented examples (`pydantic_ai_examples/`), each loaded
afresh with `_example_model.model` a `LowtideModel` over the scenario's actor, its `main()` run and what it printed
read."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol, cast

import _example_model
from _world import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.integrations.pydantic_ai import LowtideModel

EXAMPLES = Path(__file__).resolve().parents[1] / "pydantic_ai_examples"


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    printed: list[str]


@given("pydantic-ai's examples' model is a LowtideModel over an actor in {mode} mode")
def step_example_model(context: Context, mode: str) -> None:
    _example_model.model = LowtideModel(world(context).new_actor(mode))


@when('pydantic-ai\'s example "{name}" runs')
def step_run_example(context: Context, name: str) -> None:
    namespace = runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")
    main = cast("Callable[[], Awaitable[None]]", namespace["main"])
    out = io.StringIO()

    async def run() -> None:
        with contextlib.redirect_stdout(out):
            await main()

    world(context).run(run())
    context.printed = out.getvalue().splitlines()


@then("it printed {count} line(s), the last matching {pattern}")
def step_printed(context: Context, count: str, pattern: str) -> None:
    printed = context.printed
    if count.startswith("more than "):
        assert len(printed) > int(count.removeprefix("more than ")), printed
    else:
        assert len(printed) == int(count), printed
    assert re.fullmatch(pattern.strip("`"), printed[-1]), (pattern, printed)


@then("its printed line {number:d} matches {pattern}")
def step_printed_line(context: Context, number: int, pattern: str) -> None:
    line = context.printed[number - 1]
    assert re.fullmatch(pattern.strip("`"), line), (pattern, context.printed)
