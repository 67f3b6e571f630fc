"""Steps for OpenRouter's Batch API (features/openrouter_batch.feature): an actor of `provider: openrouter` in batch
mode against the emulator's OpenRouter workspace, what that workspace was sent (the exactly-once evidence), prices,
a lost create, a refused cancel, and the one scenario that runs against OpenRouter itself when a person asks for it
(LOWTIDE_REAL_OPENROUTER=1)."""

from __future__ import annotations

import os
from collections import Counter
from typing import Protocol, cast

from _support import names, world
from behave.model import Scenario
from openrouter_steps import openrouter_actor
from step_context import Context, given, then

from lowtide import ActorResponse, BatchProcessingMode
from lowtide.core.clock import SystemClock
from lowtide.cost.pricing import cost_of
from lowtide.emulator.openrouter.emulation import OpenRouterEmulation

REAL_SWITCH = "LOWTIDE_REAL_OPENROUTER"
"""Set to 1 (with OPENROUTER_API_KEY) to run the real-API scenario; CI never sets it."""
_MODEL = "openai/gpt-4o-mini"


class _Running(Context, Protocol):
    """A context whose running scenario a step may skip."""

    scenario: Scenario


@given('an OpenRouter actor "{name}" in batch mode, polling every {seconds:d} seconds')
def step_batch_actor(context: Context, name: str, seconds: int) -> None:
    openrouter_actor(world(context), name, "batch", batch={"coalesce_window": 0.5, "poll_interval": seconds})


@given("the OpenRouter API will commit the next batch create but drop the connection before answering")
def step_drop_create(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("openrouter.batches.create")


@then("the OpenRouter API was sent each of these requests once: {keys}")
def step_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = w.emu.emulation(OpenRouterEmulation).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("the OpenRouter API committed {count:d} batch")
def step_committed(context: Context, count: int) -> None:
    created = world(context).emu.emulation(OpenRouterEmulation).created_batches
    assert created == count, created


@then("every answer was priced at OpenRouter's batch price, half of its live one")
def step_batch_priced(context: Context) -> None:
    w = world(context)
    answers = [a for a in w.asked.values() if isinstance(a, ActorResponse)] or [w.answer()]
    for answer in answers:
        cost, usage = answer.cost, answer.usage
        assert cost is not None, answer
        expected = cost_of(usage, _MODEL, mode=BatchProcessingMode.BATCH, provider="openrouter")
        assert expected is not None, usage
        assert cost.total_usd == expected.total_usd, (cost, expected)
        assert cost.pricing == "batch", cost
        assert cost.total_usd > 0, cost
        assert cost.total_usd * 2 == cost.live_equivalent_usd, cost


# Against OpenRouter itself: skipped unless a person asks for it (no CI run has a key).


@given("the real OpenRouter API, when asked for")
def step_real(context: Context) -> None:
    if not (os.environ.get(REAL_SWITCH) == "1" and os.environ.get("OPENROUTER_API_KEY")):
        cast("_Running", context).scenario.skip(f"set {REAL_SWITCH}=1 and OPENROUTER_API_KEY to run it")


@given('an OpenRouter actor "{name}" in batch mode against the real API')
def step_real_actor(context: Context, name: str) -> None:
    settings = {
        "name": name,
        "provider": "openrouter",
        "model": os.environ.get("LOWTIDE_REAL_OPENROUTER_MODEL", _MODEL),
        "max_tokens": 16,
        "batch_processing": "batch",
        "batch": {"poll_interval": 30, "max_wait": 26 * 3600},
    }
    world(context).add_actor(settings, clock=SystemClock())
