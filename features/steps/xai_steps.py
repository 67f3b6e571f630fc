"""Steps for xAI (features/xai.feature): the emulator's xAI API in process, an actor of `provider: xai` whose openai
SDK client lowtide builds from its settings (only its HTTP is the scenario's), and what the emulated team holds."""

from __future__ import annotations

from collections import Counter

import httpx2
from _batch_providers import assert_cancelled_unanswered, assert_priced
from _support import World, names, set_env, world
from step_context import Context, given, then

from lowtide import BatchProcessingMode
from lowtide.emulator import Emulator
from lowtide.emulator.xai.emulation import XaiEmulation

XAI_KEY = "xai-lowtide-scenario-secret-3b7e"
"""The key in XAI_API_KEY: distinctive, so that a leak into the ledger or a message is caught."""
_BASE_URL = "http://127.0.0.1:8765/xai/v1"


def _xai(w: World) -> XaiEmulation:
    return w.emu.emulation(XaiEmulation)


@given("an emulated xAI API")
@given("an emulated xAI API whose batches take {seconds:d} seconds")
def step_xai(context: Context, seconds: int = 0) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, processing_seconds=seconds)
    set_env(w, "XAI_API_KEY", XAI_KEY)


@given('an xAI actor "{name}" in {mode} mode')
@given('an xAI actor "{name}" in {mode} mode with the model "{model}"')
def step_actor(context: Context, name: str, mode: str, model: str = "grok-3-mini") -> None:
    w = world(context)
    settings = {
        "name": name,
        "provider": "xai",
        "model": model,
        "max_tokens": 256,
        "base_url": _BASE_URL,
        "batch_processing": mode,
        "batch": {"coalesce_window": 0.5, "poll_interval": 30, "reconcile_grace": 60},
    }
    http = httpx2.AsyncClient(transport=w.transport())
    w.cleanups.append(http.aclose)
    w.add_actor(settings, client=None, http_client=http)


@given('an xAI actor "{name}" in live mode with no base URL')
def step_actor_default(context: Context, name: str) -> None:
    w = world(context)
    set_env(w, "XAI_API_KEY", XAI_KEY)
    for variable in ("XAI_BASE_URL", "OPENAI_BASE_URL"):
        set_env(w, variable, None)
    w.add_actor({"name": name, "provider": "xai", "model": "grok-3-mini", "batch_processing": "live"}, client=None)


@then('its live calls go to "{address}"')
def step_address(context: Context, address: str) -> None:
    provider = world(context).current_actor().provider(BatchProcessingMode.LIVE)
    scope = provider.quota_scope()
    assert scope.startswith(f"xai:{address}:"), scope


@given("the xAI API will commit the next add of requests but drop the connection before answering")
def step_drop_add(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("xai.batches.add")


@given("the xAI API will fail the next add of requests with status {status:d}")
def step_fail_add(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("xai.batches.add", status)


@then("the xAI API was sent each of these requests once: {keys}")
def step_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = _xai(w).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


def _priced(w: World, mode: BatchProcessingMode) -> None:
    answers = [w.answer()] if w.response is not None else [a for a in w.asked.values() if hasattr(a, "cost")]
    assert answers, "no answer"
    assert_priced(answers, "grok-3-mini", "xai", mode)


@then("every answer was priced at xAI's batch prices, half of its live ones")
def step_batch_priced(context: Context) -> None:
    _priced(world(context), BatchProcessingMode.BATCH)


@then("every answer was priced at xAI's live prices")
def step_live_priced(context: Context) -> None:
    _priced(world(context), BatchProcessingMode.LIVE)


@then("xAI's batch is named for lowtide's intent and its {count:d} requests")
def step_named(context: Context, count: int) -> None:
    w = world(context)
    [recorded] = w.ledger().batches()
    [named] = _xai(w).xai.xai_batches.values()
    assert named.name == f"lowtide-{recorded.id}-{count}", (named.name, recorded.id)
    assert named.batch_id == recorded.provider_batch_id, (named.batch_id, recorded.provider_batch_id)


@then("the xAI key is in neither the ledger nor the error messages")
def step_key_kept(context: Context) -> None:
    w = world(context)
    assert XAI_KEY.encode() not in w.ledger_path.read_bytes()
    assert w.error is None or XAI_KEY not in str(w.error), w.error


@then("the xAI API holds {count:d} batches, the first canceled and empty")
def step_two_batches(context: Context, count: int) -> None:
    batches = sorted(_xai(world(context)).xai.xai_batches.values(), key=lambda batch: batch.created_at)
    assert len(batches) == count, batches
    first = batches[0]
    assert first.cancel_time is not None, first
    assert not first.request_ids, first
    assert all(batch.cancel_time is None and batch.request_ids for batch in batches[1:]), batches


@then("once the cancel has settled, xAI's batch has ended with {canceled:d} request canceled and none answered")
def step_cancel_settled(context: Context, canceled: int) -> None:
    assert_cancelled_unanswered(world(context), canceled, "high")
