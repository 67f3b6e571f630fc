"""Steps for `provider: openai_compatible` (features/openai_compatible.feature): an actor built from its YAML alone
(lowtide makes the openai SDK client from `provider_options.openai_compatible`), its HTTP going in process to the
emulator's OpenAI wire, which lacks the parts the scenario names."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx2
import openai
from _support import World, run_cli, set_env, world, yaml_doc
from step_context import Context, given, then, when

from lowtide import ActorError, ActorResponse, BatchProcessingMode, BudgetExceededError
from lowtide.calls import parking
from lowtide.cost.pricing import estimate_input_tokens
from lowtide.emulator import Emulator
from lowtide.providers.openai.remote import INTENT_KEY

COMPAT_KEY = "sk-compat-lowtide-scenario-secret-71c4"
"""The endpoint's key, in COMPAT_KEY: distinctive, so that a leak into the ledger is caught."""


def _emulator(w: World, lacks: str, **settings: Any) -> None:
    parts = [part.strip() for part in lacks.split(",") if part.strip()]
    w.emulator = Emulator(clock=w.clock, compatible_lacks=parts, **settings)
    set_env(w, "COMPAT_KEY", COMPAT_KEY)


@given('an emulated OpenAI-compatible endpoint lacking ""')
@given('an emulated OpenAI-compatible endpoint lacking "{lacks}"')
def step_endpoint(context: Context, lacks: str = "") -> None:
    _emulator(world(context), lacks)


@given('an emulated OpenAI-compatible endpoint lacking "" whose batches take {seconds:d} seconds')
@given('an emulated OpenAI-compatible endpoint lacking "{lacks}" whose batches take {seconds:d} seconds')
def step_slow_endpoint(context: Context, seconds: int, lacks: str = "") -> None:
    _emulator(world(context), lacks, processing_seconds=seconds)


def _actor(w: World, name: str, text: str | None) -> None:
    settings = {
        "name": name,
        "provider": "openai_compatible",
        "model": "gpt-4o-mini",
        "max_tokens": 256,
        "batch_processing": "batch",
        "batch": {"coalesce_window": 0.5, "poll_interval": 30, "reconcile_grace": 60},
        **yaml_doc(text),
    }
    # No client: lowtide builds the openai SDK's from the settings; only its HTTP is the scenario's, in process.
    http = httpx2.AsyncClient(transport=w.transport())
    w.cleanups.append(http.aclose)
    w.add_actor(settings, client=None, http_client=http)


@given('an OpenAI-compatible actor "{name}" with:')
def step_actor(context: Context, name: str) -> None:
    _actor(world(context), name, context.text)


@when('an OpenAI-compatible actor "{name}" is asked a question with:')
def step_actor_asked(context: Context, name: str) -> None:
    w = world(context)
    w.attempt(lambda: _actor(w, name, context.text))
    if w.error is None:
        w.attempt_async(lambda: w.current_actor().run("When is high tide?", key="high"))


@given("the endpoint will commit the next batch but drop the connection before answering")
def step_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("openai.batches.create")


@when("its batch is canceled through the actor's backend")
def step_cancel(context: Context) -> None:
    w = world(context)
    [batch] = w.ledger().batches()
    assert batch.provider_batch_id is not None, batch
    backend = w.current_actor().batch_backend()
    w.value = w.attempt(lambda: w.run(backend.cancel(batch.provider_batch_id or "")))


@when('lowtide cancels the key "{key}" from the ledger alone')
def step_cancel_from_ledger(context: Context, key: str) -> None:
    """As `lowtide cancel KEY` does: the provider and endpoint the ledger recorded, no settings; the openai SDK's
    client is the scenario's (its HTTP in process)."""
    w = world(context)
    [batch] = w.ledger().batches()
    http = httpx2.AsyncClient(transport=w.transport())
    client = openai.AsyncOpenAI(api_key=COMPAT_KEY, base_url=batch.endpoint, http_client=http, max_retries=0)
    w.cleanups.append(client.close)
    w.value = w.in_program(lambda: parking.cancel(w.ledger(), key, client=client, clock=w.clock))


@then("the ledger's batch is canceling")
def step_ledger_canceling(context: Context) -> None:
    [batch] = world(context).ledger().batches()
    assert batch.phase == "canceling", batch


@then("the batch is being canceled")
def step_canceling(context: Context) -> None:
    w = world(context)
    w.succeeded()
    assert w.value is not None, "nothing was canceled"
    assert w.value.cancel_requested, w.value


def _costs(w: World) -> list[tuple[ActorResponse[Any], Any]]:
    answers = [outcome for outcome in w.asked.values() if isinstance(outcome, ActorResponse)] or [w.answer()]
    return [(answer, answer.cost) for answer in answers]


def _check_price(w: World, input_price: str, output_price: str, share: Decimal, pricing: str) -> None:
    for answer, cost in _costs(w):
        assert cost is not None, f"{answer.text!r} has no cost"
        assert (cost.pricing, cost.source) == (pricing, "configured"), cost
        usage = answer.usage
        live_in = usage.input_tokens * Decimal(input_price) / 1_000_000
        live_out = usage.output_tokens * Decimal(output_price) / 1_000_000
        assert usage.output_tokens > 0, usage
        assert cost.live_equivalent_usd == live_in + live_out, (usage, cost)
        assert (cost.input_usd, cost.output_usd) == (live_in * share, live_out * share), (usage, cost)


@then("every answer was priced at the configured prices, half of {input_price} and {output_price} a million tokens")
def step_batch_priced(context: Context, input_price: str, output_price: str) -> None:
    _check_price(world(context), input_price, output_price, Decimal("0.5"), "batch")


@then("every answer was priced at the configured live prices, {input_price} and {output_price} a million tokens")
def step_live_priced(context: Context, input_price: str, output_price: str) -> None:
    _check_price(world(context), input_price, output_price, Decimal(1), "live")


@then("the batch's metadata {says}")
def step_metadata(context: Context, says: str) -> None:
    w = world(context)
    [recorded] = w.ledger().batches()
    batch = w.emu.openai.batches.find(recorded.provider_batch_id or "")
    expected = {INTENT_KEY: recorded.id} if says == "names lowtide's intent id" else None
    assert batch.metadata == expected, (says, batch.metadata)


@then("the ledger file does not contain the key")
def step_key_not_stored(context: Context) -> None:
    w = world(context)
    assert COMPAT_KEY.encode() not in w.ledger_path.read_bytes()


@when("the endpoint's actor maps the prompts, {size:d} items per batch, a cost limit of {items:g} items' worst case")
def step_map_with_limit(context: Context, size: int, items: float) -> None:
    """The limit is `items` times one prompt's worst case at the endpoint's configured batch price (the prompts are
    all of one size)."""
    w = world(context)
    actor = w.current_actor()
    prompts: list[str] = w.asked["bulk"]["prompts"]
    codec = actor.batch_codec()
    worst = codec.worst_case_usd(codec.encode_request(actor.request(prompts[0])), None, mode=BatchProcessingMode.BATCH)
    assert worst is not None, "the configured price gives no worst case"
    w.asked["bulk"]["limit"] = limit = worst * Decimal(items)
    w.error = None
    try:
        w.asked["bulk"]["result"] = w.run(actor.map(prompts, items_per_batch=size, max_cost_usd=limit))
    except ActorError as exc:
        w.error = exc


@then("the run spent less than its cost limit, at the configured batch prices")
def step_spent_within(context: Context) -> None:
    bulk = world(context).asked["bulk"]
    costs = [item.response.cost for item in bulk["result"] if item.response is not None]
    assert len(costs) == len(bulk["prompts"]), costs
    assert all(cost is not None and cost.pricing == "batch" for cost in costs), costs
    spent = sum((cost.total_usd for cost in costs if cost is not None), Decimal(0))
    assert Decimal(0) < spent < bulk["limit"], (spent, bulk["limit"])


@when("the endpoint's actor maps the prompts with a cost limit of {usd:g} dollars")
def step_map_with_dollars(context: Context, usd: float) -> None:
    w = world(context)
    prompts: list[str] = w.asked["bulk"]["prompts"]
    w.attempt(lambda: w.run(w.current_actor().map(prompts, max_cost_usd=usd)))


@given("the endpoint will fail the next batch create with status {status:d}")
def step_fail_create(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("openai.batches.create", status)


@when("the endpoint's actor plans a run of the prompts")
def step_plan(context: Context) -> None:
    w = world(context)
    run = w.current_actor().bulk(progress="none")
    run.add_jobs(w.asked["bulk"]["prompts"])
    w.value = w.run(run.plan())


@then("the plan's cost range is above nothing, at most {count:d} worst cases at the configured batch prices")
def step_plan_range(context: Context, count: int) -> None:
    w = world(context)
    actor = w.current_actor()
    codec = actor.batch_codec()
    params = codec.encode_request(actor.request(w.asked["bulk"]["prompts"][0]))
    worst = codec.worst_case_usd(params, None, mode=BatchProcessingMode.BATCH)
    assert worst is not None, "no worst case"
    plan = w.value
    assert Decimal(0) < plan.cost_low_usd < plan.cost_high_usd, plan
    assert plan.cost_high_usd <= worst * count, (plan.cost_high_usd, worst)


@when("`{command}` is run in process")
def step_run_in_process(context: Context, command: str) -> None:
    run_cli(world(context), command, ledger=None)


def _live_worst_case(w: World, prompt: str) -> Decimal:
    """A live request's worst case at the configured prices, computed here from the prices in the scenario: input at
    three bytes a token (the estimate's high end), output at `max_tokens`."""
    request = w.current_actor().request(prompt)
    inputs = estimate_input_tokens(request.model_dump(mode="json"))
    return (inputs * Decimal("0.15") + request.max_tokens * Decimal("0.6")) / 1_000_000


@when(
    'the endpoint\'s actor is asked "{prompt}" live with a budget of {times:g} times its worst case at the configured'
    " live prices"
)
def step_live_budget(context: Context, prompt: str, times: float) -> None:
    w = world(context)
    budget = float(_live_worst_case(w, prompt) * Decimal(str(times)))
    w.response = w.attempt(lambda: w.run(w.current_actor().run(prompt, max_cost_usd=budget)))


@then("the budget error's worst case is that at the configured live prices")
def step_live_budget_error(context: Context) -> None:
    w = world(context)
    error = w.failure()
    assert isinstance(error, BudgetExceededError), error
    assert error.estimate_usd == _live_worst_case(w, "When is high tide?"), error.estimate_usd
