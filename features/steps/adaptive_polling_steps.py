"""Steps for adaptive polling (features/adaptive_polling.feature): an Anthropic actor over the emulator in process,
on a virtual clock, the status checks counted by the emulator; and the schedule itself, a pure function."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from _support import world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import Actor
from lowtide.batching.adaptive import adaptive_schedule
from lowtide.core.clock import VirtualClock
from lowtide.emulator import Emulator

_MODEL = "claude-haiku-4-5"


@dataclass
class Asked:
    """One call: when its batch ended (the API's moment), when it was answered, and the status checks it took."""

    ended_at: float
    answered_at: float
    checks: int


@dataclass
class Polling:
    clock: VirtualClock
    emulator: Emulator
    actor: Actor | None = None
    asked: list[Asked] = field(default_factory=list[Asked])


class Context(StepContext, Protocol):
    polling: Polling


@given("an emulated Anthropic API on a virtual clock whose batches take {seconds:g} seconds")
def step_emulator(context: Context, seconds: float) -> None:
    clock = VirtualClock()
    context.polling = Polling(clock, Emulator(clock=clock, processing_seconds=seconds))


@given('an Anthropic actor checking every {seconds:g} seconds, "{schedule}"')
def step_actor(context: Context, seconds: float, schedule: str) -> None:
    _actor(context, seconds, schedule)


@when("a new actor on the same ledger is asked {count:d} question")
def step_new_actor(context: Context, count: int) -> None:
    actor = context.polling.actor
    assert actor is not None
    context.runner.run(actor.aclose())
    _actor(context, actor.configuration.batch.poll_interval, actor.configuration.batch.poll_schedule)
    step_ask(context, count)


def _actor(context: Context, seconds: float, schedule: str) -> None:
    w = world(context)
    p = context.polling
    client = p.emulator.client()
    w.cleanups.append(client.close)
    settings: dict[str, Any] = {
        "name": "soundings",
        "provider": "anthropic",
        "model": _MODEL,
        "batch_processing": "batch",
        "batch": {"coalesce_window": 0, "poll_interval": seconds, "poll_schedule": schedule},
    }
    p.actor = Actor(settings, client=client, clock=p.clock, ledger=os.environ["LOWTIDE_LEDGER"])
    w.cleanups.append(p.actor.aclose)


@when("the actor is asked {count:d} questions, one after another")
@when("the actor is asked {count:d} question")
def step_ask(context: Context, count: int) -> None:
    p = context.polling
    actor = p.actor
    assert actor is not None

    async def ask(n: int) -> None:
        checks = p.emulator.calls["batches.retrieve"]
        await actor.run(f"How deep is the channel at mark {n}?", key=f"mark-{n}")
        answered_at = p.clock.now()
        batch = max(actor.ledger.batches(), key=lambda record: record.intent_at)
        assert batch.ended_at is not None, batch
        p.asked.append(Asked(batch.ended_at, answered_at, p.emulator.calls["batches.retrieve"] - checks))

    p.asked = []
    start = len(actor.ledger.batches())
    for n in range(count):
        context.runner.run(ask(start + n))


@then("each was answered {late:g} seconds after its batch ended, after {checks:d} status checks")
@then("it was answered {late:g} seconds after its batch ended, after {checks:d} status checks")
def step_answered(context: Context, late: float, checks: int) -> None:
    seen = [(a.answered_at - a.ended_at, a.checks) for a in context.polling.asked]
    assert seen, "nothing was asked"
    assert all(pair == (late, checks) for pair in seen), f"(seconds late, status checks) of each call: {seen}"


@then(
    "with batches alike taking {usual} s and poll_interval {interval:g} s, {elapsed:g} s after submission the next look"
    " is {sleep:g} s later"
)
def step_schedule(context: Context, usual: str, interval: float, elapsed: float, sleep: float) -> None:
    submitted = 1_800_000_000.0
    schedule = adaptive_schedule(None if usual == "none" else float(usual), interval, submitted)
    assert schedule(submitted + elapsed) == sleep, schedule(submitted + elapsed)
