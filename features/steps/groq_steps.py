"""Steps for Groq actors (features/groq_batch.feature, features/groq_live.feature): the official groq SDK against the
emulator's Groq API (`/openai/v1/...`), in process over the scenario's transport, on the scenario's manual clock."""

from __future__ import annotations

from collections import Counter
from typing import Any

import groq
import httpx
import openai
from _httpx_bridge import Httpx2Bridge
from _support import World, names, set_env, world, yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode, parking
from lowtide.emulator import Emulator
from lowtide.emulator.groq.emulation import GroqEmulation
from lowtide.ledger.store import NewRequest, stored_json
from lowtide.providers.groq.batch_backend import INPUT_FILE_STEP, INTENT_KEY

GROQ_MODEL = "llama-3.1-8b-instant"
GROQ_KEY = "gsk-groq-lowtide-scenario-secret-5e2a"
"""The key every Groq client of these scenarios sends: distinctive, so that a leak into a message is caught."""


def groq_client(w: World) -> groq.AsyncGroq:
    """The official groq SDK client of a scenario: the emulator's Groq API over the scenario's hooked transport, with
    the scenario's key; closed after the scenario."""
    http = httpx.AsyncClient(transport=Httpx2Bridge(w.transport()), base_url=w.emu.base_url)
    client = groq.AsyncGroq(api_key=GROQ_KEY, base_url=w.emu.base_url, http_client=http, max_retries=0)
    w.cleanups.append(client.close)
    return client


def emulated_groq(w: World) -> GroqEmulation:
    return w.emu.emulation(GroqEmulation)


def _batches(w: World) -> list[Any]:
    async def listing() -> list[Any]:
        return list((await groq_client(w).batches.list()).data)

    return w.run(listing())


# -- the emulated account ---------------------------------------------------------------------------------------------


@given("an emulated Groq API")
def step_groq_api(context: Context) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    w.client = groq_client(w)


@given("an emulated Groq API whose batches take {seconds:d} seconds")
def step_groq_api_slow(context: Context, seconds: int) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, processing_seconds=seconds)
    w.client = groq_client(w)


@given('a Groq actor "{name}" with:')
def step_groq_actor(context: Context, name: str) -> None:
    settings = {"name": name, "provider": "groq", "model": GROQ_MODEL, "max_tokens": 256, **yaml_doc(context.text)}
    world(context).add_actor(settings)


@when('a Groq actor "{name}" is set up with:')
def step_groq_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    settings = {"name": name, "provider": "groq", "model": GROQ_MODEL, "max_tokens": 256, **yaml_doc(context.text)}
    w.attempt(lambda: w.add_actor(settings))


@given("the Groq API will commit the next batch but drop the connection before answering")
def step_groq_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("groq.batches.create")


@given('the Groq API will fail the next "{route}" call with status {status:d}')
def step_groq_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given('the Groq API will lose the request "{key}" from both files of its batch')
def step_groq_lose(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.lose(w.custom_id(key))


def _orphan(w: World, key: str, prompt: str) -> tuple[str, str]:
    """An intent of a dead program for `key` in the ledger, its input file uploaded and recorded as its step."""
    actor = w.current_actor()
    backend = actor.batch_backend()
    params = backend.codec.encode_request(actor.request(prompt))
    custom_id = w.custom_id(key)
    ledger = w.ledger()
    now = w.clock.now()
    dead = "host:999999:dead"
    model = backend.codec.model_of(params)
    ledger.claim(
        [NewRequest(key=key, custom_id=custom_id, actor=actor.name, model=model, params=params)],
        owner=dead,
        until=now - 1,
        now=now,
    )
    intent = "lt_orphaned_groq_intent"
    body = backend.codec.encode([(custom_id, stored_json(params))])
    ledger.record_intent(
        intent,
        provider=backend.name,
        endpoint=backend.endpoint,
        members=[(key, custom_id)],
        request_bytes=len(body),
        owner=dead,
        until=now - 1,
        now=now - 120,
    )

    async def upload() -> str:
        uploaded = await groq_client(w).files.create(file=("orphan.jsonl", body, "application/jsonl"), purpose="batch")
        assert uploaded.id is not None
        return uploaded.id

    file_id = w.run(upload())
    ledger.record_create_step(intent, INPUT_FILE_STEP, file_id)
    return intent, file_id


@given(
    'the ledger holds a Groq intent for the key "{key}" asking "{prompt}", its input file uploaded by a program that'
    " died before creating the batch"
)
def step_groq_orphan_upload(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    w.witnessed["orphan"] = list(_orphan(w, key, prompt))
    w.emu.calls.clear()


@given(
    'the ledger holds a Groq intent for the key "{key}" asking "{prompt}", its batch created by a program that died'
    " before recording it"
)
def step_groq_orphan_create(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    intent, file_id = _orphan(w, key, prompt)

    async def create() -> None:
        await groq_client(w).batches.create(
            input_file_id=file_id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={INTENT_KEY: intent},
        )

    w.run(create())
    w.witnessed["orphan"] = [intent, file_id]
    w.emu.calls.clear()


@given("that Groq input file was deleted since")
def step_groq_orphan_file_gone(context: Context) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    w.run(groq_client(w).files.delete(file_id))
    w.emu.calls.clear()


# -- calls ------------------------------------------------------------------------------------------------------------


@when("its Groq batch is canceled")
def step_groq_cancel(context: Context) -> None:
    w = world(context)
    [batch] = _batches(w)
    w.run(groq_client(w).batches.cancel(batch.id))


@when('lowtide cancels the Groq key "{key}"')
def step_groq_cancel_key(context: Context, key: str) -> None:
    w = world(context)
    client = groq_client(w)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=client, clock=w.clock))


@when("lowtide collects the ended Groq batches")
def step_groq_collect(context: Context) -> None:
    w = world(context)
    client = groq_client(w)
    w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))


# -- what came back ---------------------------------------------------------------------------------------------------


@then("the Groq API was sent each of these requests once: {keys}")
def step_groq_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = emulated_groq(w).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("the Groq API committed {count:d} batch")
@then("the Groq API committed {count:d} batches")
def step_groq_committed(context: Context, count: int) -> None:
    created = emulated_groq(world(context)).created_batches
    assert created == count, created


@then('the Groq batch was created with lowtide\'s intent id in its metadata, within "{window}"')
def step_groq_batch_metadata(context: Context, window: str) -> None:
    w = world(context)
    [batch] = _batches(w)
    assert batch.endpoint == "/v1/chat/completions", batch.endpoint
    assert batch.completion_window == window, batch.completion_window
    [recorded] = w.ledger().batches()
    assert batch.metadata == {INTENT_KEY: recorded.id}, (batch.metadata, recorded.id)
    assert recorded.provider_batch_id == batch.id, recorded


@then("the Groq batch was created from the file the dead program uploaded, under its intent id")
def step_groq_resumed(context: Context) -> None:
    w = world(context)
    intent, file_id = w.witnessed["orphan"]
    [batch] = _batches(w)
    assert batch.input_file_id == file_id, (batch.input_file_id, file_id)
    assert batch.metadata == {INTENT_KEY: intent}, batch.metadata


@then("the Groq account holds no input file any more")
def step_groq_no_input_file(context: Context) -> None:
    w = world(context)
    listed = w.run(groq_client(w).files.list())
    purposes = [file.purpose for file in listed.data]
    assert "batch" not in purposes, purposes


@then('every Groq batch ended "{status}"')
def step_groq_batches_ended(context: Context, status: str) -> None:
    statuses = [batch.status for batch in _batches(world(context))]
    assert statuses, "no batch"
    assert all(each == status for each in statuses), statuses


@then("every Groq answer was priced at Groq's batch prices, half the live equivalent")
def step_groq_batch_priced(context: Context) -> None:
    for label, outcome in world(context).asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        assert outcome.provider == "groq", outcome.provider
        assert outcome.mode is BatchProcessingMode.BATCH, outcome.mode
        cost = outcome.cost
        assert cost is not None, label
        assert cost.pricing == "batch", (label, cost)
        assert cost.total_usd > 0, (label, cost)
        assert cost.total_usd * 2 == cost.live_equivalent_usd, (label, cost)


@given("Groq takes at most {count:d} request in a batch")
@given("Groq takes at most {count:d} requests in a batch")
def step_groq_batch_limit(context: Context, count: int) -> None:
    emulated_groq(world(context)).limits.max_batch_requests = count


@given("the Groq emulator answers the next chat completion with status {status:d}, asking to wait {seconds:g} seconds")
def step_groq_fault_wait(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("groq.chat.completions.create", status, retry_after=seconds)


@given("the Groq emulator answers the next chat completion with status {status:d}")
def step_groq_fault(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("groq.chat.completions.create", status)


@given('a Groq actor "{name}" with no client, whose key variable is unset')
def step_groq_keyless(context: Context, name: str) -> None:
    w = world(context)
    set_env(w, "GROQ_API_KEY", None)
    settings = {"name": name, "provider": "groq", "model": GROQ_MODEL, "base_url": w.emu.base_url}
    w.add_actor(settings, client=None)


@when('a Groq actor "{name}" is given an OpenAI client')
def step_groq_wrong_client(context: Context, name: str) -> None:
    w = world(context)
    wrong = openai.AsyncOpenAI(api_key=GROQ_KEY, base_url=w.emu.base_url)
    w.cleanups.append(wrong.close)
    settings = {"name": name, "provider": "groq", "model": GROQ_MODEL}
    w.attempt(lambda: w.add_actor(settings, client=wrong).provider(BatchProcessingMode.LIVE))


@then('the Groq answer\'s cost is what genai-prices asks for "{model}" at live prices')
def step_groq_live_cost(context: Context, model: str) -> None:
    response = world(context).answer()
    cost = response.cost
    assert cost is not None, response
    assert cost.pricing == "live", cost
    usage = response.usage
    expected = calc_price(
        PricedUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens), model, provider_id="groq"
    )
    assert cost.total_usd == expected.total_price, (cost, expected.total_price)
