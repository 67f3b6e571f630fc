"""Steps of provider_loading.feature: a provider registered by name whose module is slow to import, its first calls,
and another task of the same event loop ticking meanwhile."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from typing import Any

from _support import plugins_importable, world
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode, ProviderRegistry
from lowtide.providers import LazyProvider

_MODULE = "lowtide_slow_plugin"


@given('a third-party provider "{name}" registered by name, whose module takes {seconds:g} seconds to import')
def step_slow_provider(context: Context, name: str, seconds: float) -> None:
    w = world(context)
    plugins_importable()
    sys.modules.pop(_MODULE, None)  # each scenario imports it anew, as a new process would
    w.cleanups.append(lambda: sys.modules.pop(_MODULE, None))
    factory = LazyProvider(_MODULE, "SlowLoadingProvider")
    built: list[object] = []

    def counted(options: Any) -> Any:
        provider = factory(options)
        built.append(provider)
        return provider

    w.registry = ProviderRegistry()
    w.registry.register(name, BatchProcessingMode.LIVE, counted)
    w.witnessed["built"] = built
    w.witnessed["provider"] = [name]
    w.witnessed["load seconds"] = [seconds]


@given("a live actor of it, its quota its own")
def step_slow_actor(context: Context) -> None:
    """Its quota kept in the process (no ledger shared): nothing else of its call touches the disk."""
    w = world(context)
    [name] = w.witnessed["provider"]
    w.add_actor({"name": "slow", "provider": name, "model": "m", "live": {"share_quota": False}})


@when("a task ticking every 10 milliseconds runs while the actor's first call is made")
def step_tick_during_first_call(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()
    ticks: list[float] = []

    async def tick(done: asyncio.Event) -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    async def call() -> tuple[ActorResponse[Any], float, float]:
        done = asyncio.Event()
        ticker = asyncio.create_task(tick(done))
        await asyncio.sleep(0)  # the ticker's first tick before the call starts
        started = time.monotonic()
        try:
            response = await actor.run("Hello there")
        finally:
            ended = time.monotonic()
            done.set()
            await ticker
        return response, started, ended

    response, started, ended = w.run(call())
    w.response = response
    w.witnessed["ticks"] = [*ticks, ended]
    w.witnessed["call"] = [started, ended]


@then("the first call was answered after at least {seconds:g} seconds")
def step_first_call_took(context: Context, seconds: float) -> None:
    w = world(context)
    started, ended = w.witnessed["call"]
    assert w.response is not None
    assert w.response.text == "echo: Hello there", w.response
    assert ended - started >= seconds, ended - started


@then("the ticking task ticked throughout the call, never waiting more than {seconds:g} seconds between ticks")
def step_ticked(context: Context, seconds: float) -> None:
    w = world(context)
    ticks = w.witnessed["ticks"]
    gaps = [later - earlier for earlier, later in itertools.pairwise(ticks)]
    assert max(gaps) <= seconds, f"the event loop stalled {max(gaps):.2f} s ({len(ticks)} ticks)"


@when("the actor is asked {count:d} prompts at once before its provider is loaded")
def step_many_first_calls(context: Context, count: int) -> None:
    w = world(context)
    actor = w.current_actor()

    async def many() -> list[ActorResponse[Any]]:
        return list(await asyncio.gather(*(actor.run(f"Prompt {index}") for index in range(count))))

    w.answers = w.run(many())


@then("all {count:d} were answered")
def step_all_answered(context: Context, count: int) -> None:
    w = world(context)
    assert [answer.text for answer in w.answers] == [f"echo: Prompt {index}" for index in range(count)], w.answers


@then("the actor's provider was built once")
def step_built_once(context: Context) -> None:
    w = world(context)
    assert len(w.witnessed["built"]) == 1, w.witnessed["built"]
