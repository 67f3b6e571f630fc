"""Steps for Together actors (features/together_batch.feature, features/together_live.feature): the official together
SDK (v3) against the emulator's Together API, in process over the scenario's transport, on the scenario's manual
clock."""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import openai
import together
from _httpx_bridge import Httpx2Bridge
from _support import World, names, set_env, world, yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode, parking
from lowtide.emulator import Emulator
from lowtide.emulator.together.emulation import TogetherEmulation
from lowtide.ledger.store import NewRequest, stored_json
from lowtide.providers.together.batch_backend import INPUT_FILE_STEP, file_name

TOGETHER_MODEL = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
TOGETHER_KEY = "tgp-together-lowtide-scenario-secret-9d1f"
"""The key every Together client of these scenarios sends: distinctive, so that a leak into a message is caught."""


def together_client(w: World) -> together.AsyncTogether:
    """The official together SDK client of a scenario: the emulator's Together API over the scenario's hooked
    transport, with the scenario's key; closed after the scenario."""
    http = httpx.AsyncClient(transport=Httpx2Bridge(w.transport()), base_url=w.emu.base_url)
    client = together.AsyncTogether(api_key=TOGETHER_KEY, base_url=w.emu.base_url, http_client=http, max_retries=0)
    w.cleanups.append(client.close)
    return client


def emulated_together(w: World) -> TogetherEmulation:
    return w.emu.emulation(TogetherEmulation)


def _batches(w: World) -> list[Any]:
    async def listing() -> list[Any]:
        return list(await together_client(w).batches.list())

    return w.run(listing())


# -- the emulated account ---------------------------------------------------------------------------------------------


@given("an emulated Together API")
def step_together_api(context: Context) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    w.client = together_client(w)


@given("an emulated Together API whose batches take {seconds:d} seconds")
def step_together_api_slow(context: Context, seconds: int) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, processing_seconds=seconds)
    w.client = together_client(w)


@given('a Together actor "{name}" with:')
def step_together_actor(context: Context, name: str) -> None:
    settings = {
        "name": name,
        "provider": "together",
        "model": TOGETHER_MODEL,
        "max_tokens": 256,
        **yaml_doc(context.text),
    }
    world(context).add_actor(settings)


@when('a Together actor "{name}" is set up with:')
def step_together_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    settings = {
        "name": name,
        "provider": "together",
        "model": TOGETHER_MODEL,
        "max_tokens": 256,
        **yaml_doc(context.text),
    }
    w.attempt(lambda: w.add_actor(settings))


@given("the Together API will commit the next batch but drop the connection before answering")
def step_together_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("together.batches.create")


@given('the Together API will fail the next "{route}" call with status {status:d}')
def step_together_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given('the Together API will lose the request "{key}" from both files of its batch')
def step_together_lose(context: Context, key: str) -> None:
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
    intent = "lt_orphaned_together_intent"
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
        path = w.path(file_name(intent, 1))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        uploaded = await together_client(w).files.upload(path, purpose="batch-api", check=False)
        return uploaded.id

    file_id = w.run(upload())
    ledger.record_create_step(intent, INPUT_FILE_STEP, file_id)
    return intent, file_id


@given(
    'the ledger holds a Together intent for the key "{key}" asking "{prompt}", its input file uploaded by a program'
    " that died before creating the batch"
)
def step_together_orphan_upload(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    w.witnessed["orphan"] = list(_orphan(w, key, prompt))
    w.emu.calls.clear()


@given(
    'the ledger holds a Together intent for the key "{key}" asking "{prompt}", its batch created by a program that died'
    " before recording it"
)
def step_together_orphan_create(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    intent, file_id = _orphan(w, key, prompt)

    async def create() -> None:
        await together_client(w).batches.create(input_file_id=file_id, endpoint="/v1/chat/completions")

    w.run(create())
    w.witnessed["orphan"] = [intent, file_id]
    w.emu.calls.clear()


@given("that Together input file was deleted since")
def step_together_orphan_file_gone(context: Context) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    w.run(together_client(w).files.delete(file_id))
    w.emu.calls.clear()


# -- calls ------------------------------------------------------------------------------------------------------------


@when("its Together batch is canceled")
def step_together_cancel(context: Context) -> None:
    w = world(context)
    [batch] = _batches(w)
    w.run(together_client(w).batches.cancel(batch.id))


@when('lowtide cancels the Together key "{key}"')
def step_together_cancel_key(context: Context, key: str) -> None:
    w = world(context)
    client = together_client(w)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=client, clock=w.clock))


@when("lowtide collects the ended Together batches")
def step_together_collect(context: Context) -> None:
    w = world(context)
    client = together_client(w)
    w.in_program(lambda: parking.collect(w.ledger(), client=client, clock=w.clock))


# -- what came back ---------------------------------------------------------------------------------------------------


@then("the Together API was sent each of these requests once: {keys}")
def step_together_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = emulated_together(w).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("the Together API committed {count:d} batch")
@then("the Together API committed {count:d} batches")
def step_together_committed(context: Context, count: int) -> None:
    created = emulated_together(world(context)).created_batches
    assert created == count, created


@then("the Together job was created from an input file named after its intent and request count")
def step_together_job_file(context: Context) -> None:
    w = world(context)
    [job] = _batches(w)
    assert job.endpoint == "/v1/chat/completions", job.endpoint
    [recorded] = w.ledger().batches()
    assert recorded.provider_batch_id == job.id, recorded
    stored = w.run(together_client(w).files.retrieve(job.input_file_id))
    assert stored.filename == file_name(recorded.id, recorded.request_count), (stored.filename, recorded)
    assert stored.purpose == "batch-api", stored.purpose


@then("the Together job was created from the file the dead program uploaded")
def step_together_resumed(context: Context) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    [job] = _batches(w)
    assert job.input_file_id == file_id, (job.input_file_id, file_id)


@then("the Together account holds no input file any more")
def step_together_no_input_file(context: Context) -> None:
    w = world(context)
    listed = w.run(together_client(w).files.list())
    purposes = [file.purpose for file in listed.data]
    assert "batch-api" not in purposes, purposes


@then('every Together batch ended "{status}"')
def step_together_batches_ended(context: Context, status: str) -> None:
    statuses = [job.status for job in _batches(world(context))]
    assert statuses, "no batch"
    assert all(each == status for each in statuses), statuses


@then("every Together answer was priced at Together's batch prices, half the live equivalent")
def step_together_batch_priced(context: Context) -> None:
    for label, outcome in world(context).asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        assert outcome.provider == "together", outcome.provider
        assert outcome.mode is BatchProcessingMode.BATCH, outcome.mode
        cost = outcome.cost
        assert cost is not None, label
        assert cost.pricing == "batch", (label, cost)
        assert cost.total_usd > 0, (label, cost)
        assert cost.total_usd * 2 == cost.live_equivalent_usd, (label, cost)


@given("Together takes at most {count:d} request in a batch")
@given("Together takes at most {count:d} requests in a batch")
def step_together_batch_limit(context: Context, count: int) -> None:
    emulated_together(world(context)).limits.max_batch_requests = count


@given(
    "the Together emulator answers the next chat completion with status {status:d}, asking to wait {seconds:g} seconds"
)
def step_together_fault_wait(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("together.chat.completions.create", status, retry_after=seconds)


@given("the Together emulator answers the next chat completion with status {status:d}")
def step_together_fault(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("together.chat.completions.create", status)


@given('a Together actor "{name}" with no client, whose key variable is unset')
def step_together_keyless(context: Context, name: str) -> None:
    w = world(context)
    set_env(w, "TOGETHER_API_KEY", None)
    settings = {"name": name, "provider": "together", "model": TOGETHER_MODEL, "base_url": w.emu.base_url}
    w.add_actor(settings, client=None)


@when('a Together actor "{name}" is given an OpenAI client')
def step_together_wrong_client(context: Context, name: str) -> None:
    w = world(context)
    wrong = openai.AsyncOpenAI(api_key=TOGETHER_KEY, base_url=w.emu.base_url)
    w.cleanups.append(wrong.close)
    settings = {"name": name, "provider": "together", "model": TOGETHER_MODEL}
    w.attempt(lambda: w.add_actor(settings, client=wrong).provider(BatchProcessingMode.LIVE))


@then('the Together answer\'s cost is what genai-prices asks for "{model}" at live prices')
def step_together_live_cost(context: Context, model: str) -> None:
    response = world(context).answer()
    cost = response.cost
    assert cost is not None, response
    assert cost.pricing == "live", cost
    usage = response.usage
    expected = calc_price(
        PricedUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens), model, provider_id="together"
    )
    assert cost.total_usd == expected.total_price, (cost, expected.total_price)


@given("the Together API will store the next uploaded file but drop the connection before answering")
def step_together_drop_upload(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("together.files.preprocess")
