"""Steps for OpenRouter (features/openrouter.feature): the emulator's OpenRouter API in process and an actor of
`provider: openrouter` whose openai SDK client lowtide builds from its settings (only its HTTP is the scenario's)."""

from __future__ import annotations

import httpx2
from _support import World, set_env, world
from step_context import Context, given, then, when

from lowtide import BatchProcessingMode
from lowtide.cost.pricing import cost_of
from lowtide.emulator import Emulator

OPENROUTER_KEY = "sk-or-lowtide-scenario-secret-8c21"
"""The key in OPENROUTER_API_KEY: distinctive, so that a leak into the ledger is caught."""


@given("an emulated OpenRouter API")
def step_openrouter(context: Context) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    set_env(w, "OPENROUTER_API_KEY", OPENROUTER_KEY)


def openrouter_actor(w: World, name: str, mode: str, model: str = "openai/gpt-4o-mini", **more: object) -> None:
    """An OpenRouter actor over the scenario's emulator, with `more` of its settings (its batch settings, say)."""
    settings = {
        "name": name,
        "provider": "openrouter",
        "model": model,
        "max_tokens": 256,
        "base_url": "http://127.0.0.1:8765/openrouter/api/v1",
        "batch_processing": mode,
        **more,
    }
    http = httpx2.AsyncClient(transport=w.transport())
    w.cleanups.append(http.aclose)
    w.add_actor(settings, client=None, http_client=http)


@given('an OpenRouter actor "{name}" in {mode} mode')
@given('an OpenRouter actor "{name}" in {mode} mode with the model "{model}"')
def step_actor(context: Context, name: str, mode: str, model: str = "openai/gpt-4o-mini") -> None:
    openrouter_actor(world(context), name, mode, model)


@when('the actor is asked "{prompt}" with a budget of ${usd:g}')
def step_budgeted(context: Context, prompt: str, usd: float) -> None:
    w = world(context)
    w.response = w.attempt(lambda: w.run(w.current_actor().run(prompt, max_cost_usd=usd)))


@then('the answer was priced at OpenRouter\'s live price of "{model}"')
def step_priced(context: Context, model: str) -> None:
    answer = world(context).answer()
    assert answer.cost is not None, answer
    expected = cost_of(answer.usage, model, mode=BatchProcessingMode.LIVE, provider="openrouter")
    assert expected is not None, model
    assert answer.cost.total_usd == expected.total_usd, (answer.cost, expected)
    assert answer.cost.total_usd > 0, answer.cost


@then("the OpenRouter key is not in the ledger")
def step_key_kept(context: Context) -> None:
    w = world(context)
    assert OPENROUTER_KEY.encode() not in w.ledger_path.read_bytes()
