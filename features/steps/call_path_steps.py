"""Steps of the call's one path (telemetry.feature): what a batch call keeps of lowtide's while it waits on its batch,
read from its task's chain of awaited coroutines, traced and not."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from pathlib import Path
from types import CoroutineType
from typing import Any, Protocol

from _otel_globals import reset_otel_globals
from step_context import Context as StepContext
from step_context import given, then, when

import lowtide
from lowtide import Actor


class Context(StepContext, Protocol):
    telemetry_actor: Actor
    waiting_chain: list[tuple[str, int]]
    waiting_on: object
    telemetry_gate: asyncio.Event


@given("no tracer provider is configured any more")
def step_tracing_off(context: Context) -> None:
    reset_otel_globals()  # the API's own state before any provider was set: `tracing()` says off


_LOWTIDE = str(Path(lowtide.__file__).parent)


def _chain(task: asyncio.Task[object]) -> tuple[list[tuple[str, int]], object]:
    """The coroutines of lowtide's a task's call runs through, outermost first (name, bytes), and the future it waits
    on, when the innermost awaits one itself (the task's own record of it: a Future's `__await__` is an iterator, not
    the future). A user's middleware, and asyncio's own coroutines, are walked through, not counted."""
    chain: list[tuple[str, int]] = []
    awaited: object = task.get_coro()
    while isinstance(awaited, CoroutineType):
        step: CoroutineType[Any, Any, object] = awaited  # pyright: ignore[reportUnknownVariableType]
        if step.cr_code.co_filename.startswith(_LOWTIDE):
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
            # Claimed at its first step, the call cannot be answered before its batch's coalescing window has passed
            # and the batch been created and polled.
            await _look_while_waiting(context, task)
        finally:
            await task  # answered: nothing left waiting when the scenario ends

    context.runner.run(look())


@when('the actor\'s live caller is asked "{prompt}", and the call is looked at while its middleware holds it')
def step_look_at_held(context: Context, prompt: str) -> None:
    actor = context.telemetry_actor

    async def look() -> None:
        await actor.ready("live")
        # What a live bulk run's item is sent through: no actor's call, so no span around it but the caller's own.
        task = asyncio.ensure_future(actor.live_caller().call(actor.request(prompt)))
        try:
            await _look_while_waiting(context, task)
        finally:
            context.telemetry_gate.set()
            await task

    context.runner.run(look())


async def _look_while_waiting(context: Context, task: asyncio.Task[Any]) -> None:
    """Each turn of the loop, until `task`'s call waits on a future: its chain of coroutines read then."""
    for _ in range(1000):
        await asyncio.sleep(0)
        context.waiting_chain, context.waiting_on = _chain(task)
        if isinstance(context.waiting_on, asyncio.Future) or task.done():
            break
    assert not task.done(), "the call was answered before it was seen waiting"


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
