"""Steps of the call's one path (telemetry.feature): what a batch call keeps of lowtide's while it waits on its batch,
read from its task's chain of awaited coroutines, traced and not."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from types import CoroutineType
from typing import Any, Protocol

from _otel_globals import reset_otel_globals
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor


class Context(StepContext, Protocol):
    telemetry_actor: Actor
    waiting_chain: list[tuple[str, int]]
    waiting_on: object


@given("no tracer provider is configured any more")
def step_tracing_off(context: Context) -> None:
    reset_otel_globals()  # the API's own state before any provider was set: `tracing()` says off


def _chain(task: asyncio.Task[object]) -> tuple[list[tuple[str, int]], object]:
    """The coroutines a task's call runs through, outermost first (name, bytes), and the future it waits on, when the
    innermost awaits one itself (the task's own record of it: a Future's `__await__` is an iterator, not the future)."""
    chain: list[tuple[str, int]] = []
    awaited: object = task.get_coro()
    while isinstance(awaited, CoroutineType):
        step: CoroutineType[Any, Any, object] = awaited  # pyright: ignore[reportUnknownVariableType]
        chain.append((step.cr_code.co_qualname, sys.getsizeof(step)))
        awaited = step.cr_await
    waiter: object = getattr(task, "_fut_waiter", None)
    return chain, waiter if awaited is not None and not isinstance(awaited, Coroutine) else None


@when('the telemetry actor has answered "{first}", and its call of "{prompt}" is looked at while it waits on its batch')
def step_look_at_waiting(context: Context, first: str, prompt: str) -> None:
    actor = context.telemetry_actor

    async def look() -> None:
        await actor.run(first)  # its provider built and its template checked: the next call is claimed at once
        task = asyncio.ensure_future(actor.run(prompt))
        try:
            # Each turn of the loop, until the call waits on a future: claimed at its first step, it cannot be
            # answered before its batch's coalescing window has passed and the batch been created and polled.
            for _ in range(1000):
                await asyncio.sleep(0)
                context.waiting_chain, context.waiting_on = _chain(task)
                if isinstance(context.waiting_on, asyncio.Future) or task.done():
                    break
            assert not task.done(), "the call was answered before it was seen waiting"
        finally:
            await task  # answered: nothing left waiting when the scenario ends

    context.runner.run(look())


@then("the waiting call keeps {count:d} {coroutines:w} of lowtide's, {most:d} bytes at most, none entered twice")
def step_waiting_chain(context: Context, count: int, coroutines: str, most: int) -> None:
    chain = context.waiting_chain
    names = [name for name, _ in chain]
    assert len(chain) == count, chain
    assert len(set(names)) == len(names), f"a coroutine entered twice: {chain}"
    assert sum(size for _, size in chain) <= most, chain


@then("the innermost awaits the batch's answer itself")
def step_awaits_future(context: Context) -> None:
    waiting = context.waiting_on
    assert isinstance(waiting, asyncio.Future), (waiting, context.waiting_chain)
    assert not isinstance(waiting, asyncio.Task), (waiting, context.waiting_chain)
