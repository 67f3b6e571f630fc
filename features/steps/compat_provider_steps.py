"""Steps for Groq and Together actors alike (features/groq_*.feature, features/together_*.feature): each API's official
SDK against the emulator, in process over the scenario's transport, on the scenario's manual clock. `{api:Compat}` is
"Groq" or "Together" (features/steps/_compat_apis.py); what only one of them has stays in groq_steps.py and
together_steps.py."""

from __future__ import annotations

import importlib
from collections import Counter

import openai
from _batch_providers import dead_program
from _compat_apis import CompatApi
from _support import World, emulated_reply_to, names, set_env, world, yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode
from lowtide.calls import parking
from lowtide.emulator import Emulator

# -- the emulated account ---------------------------------------------------------------------------------------------


@given("an emulated {api:Compat} API")
def step_compat_api(context: Context, api: CompatApi) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    w.client = api.client(w)


@given("an emulated {api:Compat} API whose batches take {seconds:d} seconds")
def step_compat_api_slow(context: Context, api: CompatApi, seconds: int) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, processing_seconds=seconds)
    w.client = api.client(w)


@given('a {api:Compat} actor "{name}" with:')
def step_compat_actor(context: Context, api: CompatApi, name: str) -> None:
    world(context).add_actor(api.settings(name, **yaml_doc(context.text)))


@when('a {api:Compat} actor "{name}" is set up with:')
def step_compat_actor_configured(context: Context, api: CompatApi, name: str) -> None:
    w = world(context)
    settings = api.settings(name, **yaml_doc(context.text))
    w.attempt(lambda: w.add_actor(settings))


@given('a {api:Compat} actor "{name}" with no client, whose key variable is unset')
def step_compat_keyless(context: Context, api: CompatApi, name: str) -> None:
    w = world(context)
    set_env(w, api.key_variable, None)
    w.add_actor({"name": name, "provider": api.name, "model": api.model, "base_url": w.emu.base_url}, client=None)


@given('a {api:Compat} actor "{name}" with no client, its base URL "{url}" given by {source}')
def step_compat_base_url(context: Context, api: CompatApi, name: str, url: str, source: str) -> None:
    """`source`: "its base_url", or the name of the provider's base URL variable (the actor then gives none)."""
    w = world(context)
    set_env(w, api.key_variable, api.key)
    settings: dict[str, object] = {"name": name, "provider": api.name, "model": api.model}
    if source == "its base_url":
        settings["base_url"] = url
    else:
        set_env(w, source, url)
    w.add_actor(settings, client=None)


@given('a {api:Compat} actor "{name}" built from the environment alone')
def step_compat_from_environment(context: Context, api: CompatApi, name: str) -> None:
    world(context).add_actor({"name": name, "provider": api.name, "model": api.model}, client=None)


@given('a {api:Compat} actor "{name}" built from the environment alone, in batch mode')
def step_compat_from_environment_batch(context: Context, api: CompatApi, name: str) -> None:
    settings = {"name": name, "provider": api.name, "model": api.model, "batch_processing": "batch"}
    world(context).add_actor({**settings, "batch": {"poll_interval": 30}}, client=None)


@when('a {api:Compat} actor "{name}" is given an OpenAI client')
def step_compat_wrong_client(context: Context, api: CompatApi, name: str) -> None:
    w = world(context)
    wrong = openai.AsyncOpenAI(api_key=api.key, base_url=w.emu.base_url)
    w.cleanups.append(wrong.close)
    settings = {"name": name, "provider": api.name, "model": api.model}
    w.attempt(lambda: w.add_actor(settings, client=wrong).provider(BatchProcessingMode.LIVE))


@given("the {api:Compat} API will commit the next batch but drop the connection before answering")
def step_compat_drop_after_commit(context: Context, api: CompatApi) -> None:
    world(context).emu.faults.drop_after_commit(api.route("batches.create"))


@given('the {api:Compat} API will fail the next "{route}" call with status {status:d}')
def step_compat_fail_next(context: Context, api: CompatApi, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given('the {api:Compat} API will answer the next "{route}" call, then drop the connection before the answer')
def step_compat_drop_answer(context: Context, api: CompatApi, route: str) -> None:
    world(context).emu.faults.drop_after_commit(route)


@given('the {api:Compat} API will lose the request "{key}" from both files of its batch')
def step_compat_lose(context: Context, api: CompatApi, key: str) -> None:
    w = world(context)
    w.emu.faults.lose(w.custom_id(key))


@given("{api:Compat} takes at most {count:d} request in a batch")
@given("{api:Compat} takes at most {count:d} requests in a batch")
def step_compat_batch_limit(context: Context, api: CompatApi, count: int) -> None:
    world(context).emu.emulation(api.emulation).limits.max_batch_requests = count


@given(
    "the {api:Compat} emulator answers the next chat completion with status {status:d}, asking to wait {seconds:g}"
    " seconds"
)
def step_compat_fault_wait(context: Context, api: CompatApi, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next(api.route("chat.completions.create"), status, retry_after=seconds)


@given("the {api:Compat} emulator answers the next chat completion with status {status:d}")
def step_compat_fault(context: Context, api: CompatApi, status: int) -> None:
    world(context).emu.faults.fail_next(api.route("chat.completions.create"), status)


# -- a program that died ----------------------------------------------------------------------------------------------


def _orphan(w: World, api: CompatApi, key: str, prompt: str) -> tuple[str, str]:
    """An intent of a dead program for `key` in the ledger, its input file uploaded and recorded as its step."""
    dead = dead_program(w, key, prompt, f"lt_orphaned_{api.name}_intent")
    intent, ledger, body = dead.batch_id, dead.ledger, dead.body
    file_id = w.run(api.upload(w, intent, body))
    ledger.record_create_step(intent, api.input_file_step, file_id)
    return intent, file_id


@given(
    'the ledger holds a {api:Compat} intent for the key "{key}" asking "{prompt}", its input file uploaded by a'
    " program that died before creating the batch"
)
def step_compat_orphan_upload(context: Context, api: CompatApi, key: str, prompt: str) -> None:
    w = world(context)
    w.witnessed["orphan"] = list(_orphan(w, api, key, prompt))
    w.emu.calls.clear()


@given(
    'the ledger holds a {api:Compat} intent for the key "{key}" asking "{prompt}", its batch created by a program'
    " that died before recording it"
)
def step_compat_orphan_create(context: Context, api: CompatApi, key: str, prompt: str) -> None:
    w = world(context)
    intent, file_id = _orphan(w, api, key, prompt)
    w.run(api.create(w, intent, file_id))
    w.witnessed["orphan"] = [intent, file_id]
    w.emu.calls.clear()


@given("that {api:Compat} input file was deleted since")
def step_compat_orphan_file_gone(context: Context, api: CompatApi) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    w.run(api.client(w).files.delete(file_id))
    w.emu.calls.clear()


# -- calls ------------------------------------------------------------------------------------------------------------


@when("its {api:Compat} batch is canceled")
def step_compat_cancel(context: Context, api: CompatApi) -> None:
    w = world(context)
    [batch] = api.listed(w)
    w.run(api.client(w).batches.cancel(batch.id))


@when('lowtide cancels the {api:Compat} key "{key}"')
def step_compat_cancel_key(context: Context, api: CompatApi, key: str) -> None:
    w = world(context)
    client = api.client(w)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=client, clock=w.clock))


@when("lowtide collects the ended {api:Compat} batches")
def step_compat_collect(context: Context, api: CompatApi) -> None:
    w = world(context)
    client = api.client(w)
    w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))


# -- what came back ---------------------------------------------------------------------------------------------------


@then("the {api:Compat} API was sent each of these requests once: {keys}")
def step_compat_sent_once(context: Context, api: CompatApi, keys: str) -> None:
    w = world(context)
    created = w.emu.emulation(api.emulation).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("the {api:Compat} API committed {count:d} batch")
@then("the {api:Compat} API committed {count:d} batches")
def step_compat_committed(context: Context, api: CompatApi, count: int) -> None:
    created = world(context).emu.emulation(api.emulation).created_batches
    assert created == count, created


def _input_files(w: World, api: CompatApi) -> list[str]:
    listed = w.run(api.client(w).files.list())
    return [file.id for file in listed.data if file.purpose == api.purpose]


@then("the {api:Compat} account holds no input file any more")
def step_compat_no_input_file(context: Context, api: CompatApi) -> None:
    files = _input_files(world(context), api)
    assert files == [], files


@then("the {api:Compat} account holds {count:d} input file")
def step_compat_input_files(context: Context, api: CompatApi, count: int) -> None:
    files = _input_files(world(context), api)
    assert len(files) == count, files


@then("the {api:Compat} account still holds the batch's input file")
def step_compat_input_file_kept(context: Context, api: CompatApi) -> None:
    w = world(context)
    [batch] = api.listed(w)
    files = _input_files(w, api)
    assert files == [batch.input_file_id], (files, batch.input_file_id)


@then('every {api:Compat} batch ended "{status}"')
def step_compat_batches_ended(context: Context, api: CompatApi, status: str) -> None:
    statuses = [batch.status for batch in api.listed(world(context))]
    assert statuses, "no batch"
    assert all(each == status for each in statuses), statuses


@then("every {api:Compat} answer was priced at {owner}'s batch prices, half the live equivalent")
def step_compat_batch_priced(context: Context, api: CompatApi, owner: str) -> None:
    assert owner == api.label, owner
    for label, outcome in world(context).asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        assert outcome.provider == api.name, outcome.provider
        assert outcome.mode is BatchProcessingMode.BATCH, outcome.mode
        cost = outcome.cost
        assert cost is not None, label
        assert cost.pricing == "batch", (label, cost)
        assert cost.total_usd > 0, (label, cost)
        assert cost.total_usd * 2 == cost.live_equivalent_usd, (label, cost)


@then('the {api:Compat} answer\'s cost is what genai-prices asks for "{model}" at live prices')
def step_compat_live_cost(context: Context, api: CompatApi, model: str) -> None:
    response = world(context).answer()
    cost = response.cost
    assert cost is not None, response
    assert cost.pricing == "live", cost
    usage = response.usage
    expected = calc_price(
        PricedUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens), model, provider_id=api.name
    )
    assert cost.total_usd == expected.total_price, (cost, expected.total_price)


@then("the {api:Compat} actor's own client is closed once the actor is")
def step_compat_own_client_closed(context: Context, api: CompatApi) -> None:
    w = world(context)
    actor = w.current_actor()
    client = actor.provider().__dict__["_client"]
    assert not client.is_closed(), "closed before the actor"
    w.run(actor.aclose())
    assert client.is_closed(), "left open"


# -- the batch provider called directly -------------------------------------------------------------------------------


@when('the {api:Compat} batch provider answers "{prompt}" directly, outside the ledger')
def step_compat_direct(context: Context, api: CompatApi, prompt: str) -> None:
    w = world(context)
    actor = w.current_actor()
    provider = actor.provider(BatchProcessingMode.BATCH)
    request = actor.request(prompt)
    w.response = w.attempt_async(lambda: provider.complete(request))


@then('asking {module} for "{name}" is Python\'s AttributeError, naming it')
def step_module_lacks(context: Context, module: str, name: str) -> None:
    loaded = importlib.import_module(module)
    said = ""
    try:
        getattr(loaded, name)
    except AttributeError as exc:
        said = str(exc)
    assert said == f"module {module!r} has no attribute {name!r}", said or f"{module} gave {name}"


# -- live bulk runs ---------------------------------------------------------------------------------------------------


@when("the {api:Compat} actor maps {count:d} prompts in live mode")
def step_compat_map(context: Context, api: CompatApi, count: int) -> None:
    w = world(context)
    prompts = [f"Tide table {number}" for number in range(count)]
    w.value = (prompts, w.run(w.current_actor().map(prompts, mode="live")))


@then("the {api:Compat} run's {count:d} results are in input order, each the emulated reply to its prompt, each priced")
def step_compat_mapped(context: Context, api: CompatApi, count: int) -> None:
    w = world(context)
    prompts, result = w.value
    assert result.ok, result.counts()
    items = list(result)
    assert [item.index for item in items] == list(range(count)), items
    for item, prompt in zip(items, prompts, strict=True):
        assert (item.text or "").startswith(emulated_reply_to(prompt)), (prompt, item.text)
        assert item.cost_usd is not None, item
        assert item.cost_usd > 0, item
    assert w.emu.calls[api.route("chat.completions.create")] == count, w.emu.calls
    assert w.emu.calls[api.route(api.model_check)] == 1, w.emu.calls
