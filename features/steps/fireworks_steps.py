"""Steps for Fireworks AI (features/fireworks.feature): the emulator's Fireworks API in process, an actor of
`provider: fireworks` whose fireworks SDK client lowtide builds from its settings (only its HTTP is the scenario's)."""

from __future__ import annotations

import httpx
from _httpx_bridge import Httpx2Bridge
from _support import set_env, world
from step_context import Context, given, then

from lowtide import BatchProcessingMode
from lowtide.cost.pricing import cost_of
from lowtide.emulator import Emulator

FIREWORKS_KEY = "fw-lowtide-scenario-secret-5c2a"
"""The key in FIREWORKS_API_KEY: distinctive, so that a leak into the ledger or a message is caught."""
_MODEL = "accounts/fireworks/models/gpt-oss-20b"
FIREWORKS_ACCOUNT = "tides-inc"
"""The account batch jobs run in (`provider_options.fireworks.account_id`)."""


@given("an emulated Fireworks API")
@given("an emulated Fireworks API whose batches take {seconds:d} seconds")
def step_fireworks(context: Context, seconds: int = 0) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, processing_seconds=seconds)
    set_env(w, "FIREWORKS_API_KEY", FIREWORKS_KEY)


@given('a Fireworks actor "{name}" in {mode} mode')
@given('a Fireworks actor "{name}" in {mode} mode with the model "{model}"')
def step_actor(context: Context, name: str, mode: str, model: str = _MODEL) -> None:
    _actor(context, name, mode, model, account=FIREWORKS_ACCOUNT)


@given('a Fireworks actor "{name}" in {mode} mode with no account')
def step_actor_no_account(context: Context, name: str, mode: str) -> None:
    set_env(world(context), "FIREWORKS_ACCOUNT_ID", None)
    _actor(context, name, mode, _MODEL, account=None)


def _actor(context: Context, name: str, mode: str, model: str, *, account: str | None) -> None:
    w = world(context)
    settings: dict[str, object] = {
        "name": name,
        "provider": "fireworks",
        "model": model,
        "max_tokens": 256,
        "base_url": f"{w.emu.base_url}/fireworks",
        "batch_processing": mode,
        "batch": {"coalesce_window": 0.5, "poll_interval": 30},
    }
    if account is not None:
        settings["provider_options"] = {"fireworks": {"account_id": account}}
    http = httpx.AsyncClient(transport=Httpx2Bridge(w.transport()))
    w.cleanups.append(http.aclose)
    w.attempt(lambda: w.add_actor(settings, client=None, http_client=http))


@given("the Fireworks API will fail the next chat completion with status {status:d}")
def step_fail_chat(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("fireworks.chat.completions.create", status)


@then("every answer was priced at Fireworks' live prices, by genai-prices")
def step_live_priced(context: Context) -> None:
    w = world(context)
    answer = w.answer()
    cost = getattr(answer, "cost", None)
    usage = getattr(answer, "usage", None)
    assert cost is not None, answer
    assert usage is not None, answer
    expected = cost_of(usage, _MODEL, mode=BatchProcessingMode.LIVE, provider="fireworks")
    assert expected is not None, usage
    assert cost.total_usd == expected.total_usd, (cost, expected)
    assert cost.total_usd > 0, cost


@then("the answer's cost is unknown, not $0")
def step_unknown_cost(context: Context) -> None:
    answer = world(context).answer()
    assert getattr(answer, "cost", "absent") is None, answer


@then("the Fireworks key is in neither the ledger nor the error messages")
def step_key_kept(context: Context) -> None:
    w = world(context)
    if w.ledger_path.exists():
        assert FIREWORKS_KEY.encode() not in w.ledger_path.read_bytes()
    assert w.error is None or FIREWORKS_KEY not in str(w.error), w.error
