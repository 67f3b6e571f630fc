"""Steps for choosing live or batch mode: registries with plugins, run_sync, and how a provider gets its client."""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx2
from _support import API_KEY, emulated_reply_to, entry_point, names, plugins_importable, remember_env, world
from step_context import Context, given, then, when

from lowtide import Actor, ActorClosedError, ActorResponse, ProviderRegistry


@contextmanager
def caught_logs() -> Iterator[list[str]]:
    """Every line lowtide logs meanwhile, from any thread, at any level."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler, logger = Keep(logging.DEBUG), logging.getLogger("lowtide")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@given('a provider registry with the plugin "{spec}"')
def step_registry_with_plugin(context: Context, spec: str) -> None:
    plugins_importable()
    registry = ProviderRegistry()
    registry.load_entry_points([entry_point(spec)])
    world(context).registry = registry


_HANG_SECONDS = 20.0
"""Real seconds a dropped actor's thread may take to end before the scenario calls it left running."""

# -- run_sync --------------------------------------------------------------------------------------------------------


@when('the script asks the actor "{prompt}" with run_sync')
def step_run_sync(context: Context, prompt: str) -> None:
    w = world(context)
    actor = w.current_actor()
    response = actor.run_sync(prompt)
    w.outcomes.append(response)
    loops = w.value if isinstance(w.value, list) else []
    loops.append(actor._sync_loop.loop)
    w.value = loops


@then('the script got the emulated replies to "{prompts}"')
def step_run_sync_replies(context: Context, prompts: str) -> None:
    w = world(context)
    expected = names(prompts)
    assert len(w.outcomes) == len(expected), w.outcomes
    for outcome, prompt in zip(w.outcomes, expected, strict=True):
        assert isinstance(outcome, ActorResponse), outcome
        assert outcome.text.startswith(emulated_reply_to(prompt)), outcome


@then("both run_sync calls ran on the same event loop")
def step_run_sync_same_loop(context: Context) -> None:
    first, second = world(context).value
    assert first is not None
    assert first is second


@when("the script closes the actor")
def step_close(context: Context) -> None:
    world(context).current_actor().close()


@then("the actor's run_sync loop is closed")
def step_run_sync_closed(context: Context) -> None:
    [loop, *_] = world(context).value
    assert loop.is_closed()


@when('a script makes {count:d} actors, asks each "{prompt}" with run_sync and drops them without closing them')
def step_run_sync_dropped(context: Context, count: int, prompt: str) -> None:
    w = world(context)
    threads: list[threading.Thread] = []
    loops: list[Any] = []
    answers: list[ActorResponse[object]] = []
    for number in range(count):
        before = set(threading.enumerate())
        # Made as a script makes one: nothing of the scenario's keeps it (no cleanup, not the current actor).
        actor = Actor(
            {
                "name": f"dropped-{number}",
                "provider": "anthropic",
                "model": "claude-sonnet-5-5",
                "batch_processing": "live",
            },
            client=w.client,
            clock=w.clock,
            registry=w.registry,
        )
        answers.append(actor.run_sync(prompt))
        threads.extend(thread for thread in threading.enumerate() if thread not in before)
        loops.append(actor._sync_loop.loop)
        del actor
    w.outcomes.extend(answers)
    w.value = (threads, loops)


@then('each got the emulated reply to "{prompt}"')
def step_each_reply(context: Context, prompt: str) -> None:
    w = world(context)
    assert w.outcomes, "no answer"
    for outcome in w.outcomes:
        assert isinstance(outcome, ActorResponse), outcome
        assert outcome.text.startswith(emulated_reply_to(prompt)), outcome


@then("once they are collected no run_sync thread of theirs is left running, and their loops are closed")
def step_dropped_threads_gone(context: Context) -> None:
    started, loops = world(context).value
    # Each actor's: its loop's thread and its loop's executor threads (the ledger's checkpointer is the process's).
    threads = [thread for thread in started if not thread.name.startswith("lowtide-checkpoint")]
    assert [thread.name for thread in threads].count("lowtide-run-sync") == len(loops), threads
    gc.collect()
    bound = time.monotonic() + _HANG_SECONDS  # for the failure only: a thread ends as soon as its loop is stopped
    for thread in threads:
        thread.join(max(0.0, bound - time.monotonic()))
    left = [thread.name for thread in threads if thread.is_alive()]
    assert not left, f"{len(left)} of {len(threads)} threads still running after their actors were collected: {left}"
    assert all(loop.is_closed() for loop in loops), "a dropped actor's loop was left open"


@when('the actor is asked "{prompt:Q}" with run_sync from inside a running event loop')
def step_run_sync_in_loop(context: Context, prompt: str) -> None:
    w = world(context)

    async def inside() -> Any:
        return w.current_actor().run_sync(prompt)

    w.response = w.attempt_async(inside)


@when("{count:d} threads ask the actor at once with run_sync")
def step_run_sync_threads(context: Context, count: int) -> None:
    w = world(context)
    actor = w.current_actor()
    start = threading.Barrier(count)

    def ask(index: int) -> object:
        start.wait()  # all at once: the calls overlap on the actor's one loop
        try:
            return actor.run_sync(f"Question {index}", custom_id=f"thread-{index}")
        except Exception as exc:  # kept, to be named by the Then step
            return exc

    with caught_logs() as logged, ThreadPoolExecutor(count) as pool:
        w.value = list(pool.map(ask, range(count)))
    w.asked["logged"] = logged


@then("each of the {count:d} threads got its own emulated reply, each request created once")
def step_each_thread_answered(context: Context, count: int) -> None:
    w = world(context)
    for index, outcome in enumerate(w.value):
        assert isinstance(outcome, ActorResponse), f"thread {index}: {outcome!r}"
        assert outcome.text.startswith(emulated_reply_to(f"Question {index}")), outcome.text
    created = w.emu.created_custom_ids
    assert created == {w.custom_id(f"thread-{index}"): 1 for index in range(count)}, created
    uncertain = [line for line in w.asked["logged"] if "unknown outcome" in line or "reconcil" in line]
    assert not uncertain, uncertain


# -- a closed actor --------------------------------------------------------------------------------------------------


@when("the actor is closed {how}")
def step_actor_closed(context: Context, how: str) -> None:
    w = world(context)
    actor = w.current_actor()
    w.value = actor.run("Made before it closed")  # a call made while open, awaited only after the actor closed

    async def inside() -> None:
        async with actor:
            pass

    closing = {"by aclose()": actor.aclose, "by its async with": inside, "by close()": None}[how]
    if closing is None:
        actor.close()
    else:
        w.run(closing())


@then("every way of calling it raises ActorClosedError naming the actor")
def step_every_call_refused(context: Context) -> None:
    w = world(context)
    actor = w.current_actor()
    made_before: Coroutine[Any, Any, object] = w.value
    calls: dict[str, Callable[[], object]] = {
        "run": lambda: w.run(actor.run("Hello")),
        "a run made before it closed": lambda: w.run(made_before),
        "submit": lambda: w.run(actor.submit("Hello", key="k1")),
        "result": lambda: w.run(actor.result("k1")),
        "run_many": lambda: w.run(actor.run_many(["Hello", "Goodbye"])),
        "bulk": lambda: actor.bulk().add("Hello"),
        "map": lambda: w.run(actor.map(["Hello"])),
        "run_sync": lambda: actor.run_sync("Hello"),
        "stream": lambda: actor.stream("Hello"),
        "async with": lambda: w.run(actor.__aenter__()),
    }
    for name, call in calls.items():
        error: ActorClosedError | None = None
        try:
            call()
        except ActorClosedError as exc:
            error = exc
        assert error is not None, f"{name} on a closed actor was not refused"
        assert error.actor == actor.name, (name, error.actor)
        assert f"Actor {actor.name!r} is closed" in str(error), (name, str(error))
        assert "Make a new Actor" in str(error), (name, str(error))
    assert actor.closed


# -- clients and keys ------------------------------------------------------------------------------------------------


@given('the environment variable "{variable}" holds the API key')
def step_env_key(context: Context, variable: str) -> None:
    remember_env(context, variable)
    os.environ[variable] = API_KEY


@given('an actor "{name}" in {mode:w} mode, reading its key from "{variable}" and given only an HTTP client')
def step_actor_own_client(context: Context, name: str, mode: str, variable: str) -> None:
    w = world(context)
    seen: list[str] = []

    async def record(request: httpx2.Request) -> None:
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        seen.append(request.headers.get("x-api-key") or bearer)

    http_client = httpx2.AsyncClient(transport=w.transport(), event_hooks={"request": [record]})
    w.cleanups.append(http_client.aclose)
    settings = {
        "name": name,
        "model": "claude-sonnet-5-5",
        "batch_processing": mode,
        "api_key_env": variable,
        "base_url": w.emu.base_url,
        "batch": {"poll_interval": 30},
    }
    w.add_actor(settings, client=None, http_client=http_client)
    w.value = {"http_client": http_client, "keys": seen}


@when('the actor is asked "{prompt:Q}" and then closed, as an async context manager')
def step_ask_and_close(context: Context, prompt: str) -> None:
    w = world(context)

    async def ask() -> Any:
        async with w.current_actor() as actor:
            return await actor.run(prompt)

    w.response = w.attempt_async(ask)


@then("the API saw the key from the environment")
def step_saw_env_key(context: Context) -> None:
    keys = world(context).value["keys"]
    assert keys, keys
    assert set(keys) == {API_KEY}, keys


@then("the actor's HTTP client is closed")
def step_http_client_closed(context: Context) -> None:
    assert world(context).value["http_client"].is_closed


@given('an actor "{name}" given a client that is not an Anthropic client')
def step_actor_odd_client(context: Context, name: str) -> None:
    world(context).add_actor({"name": name, "model": "claude-sonnet-5-5"}, client=object())
