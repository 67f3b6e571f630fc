"""Steps for Azure OpenAI actors (features/azure_openai_batch.feature, azure_openai_live.feature): the official
`openai` SDK's `AsyncAzureOpenAI` against the emulator's Azure OpenAI API, in process on the scenario's manual clock,
or over a loopback socket."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import openai
from _batch_providers import dead_after_openai_upload
from _support import World, names, set_env, world, yaml_doc
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode
from lowtide.calls import parking
from lowtide.emulator import Emulator
from lowtide.emulator.azure_openai.emulation import AzureOpenAIEmulation
from lowtide.emulator.server import serve_in_thread
from lowtide.ledger.store import stored_json
from lowtide.providers.azure_openai.batch_backend import AzureBatchBackend
from lowtide.providers.openai.remote import INTENT_KEY, remote_batch

AZURE_KEY = "azure-lowtide-scenario-secret-77c1"
DEPLOYMENT = "tide-batch"
MODEL = "gpt-4o-mini"
VERSION = "2024-10-21"


def _azure(w: World) -> AzureOpenAIEmulation:
    return w.emu.emulation(AzureOpenAIEmulation)


def azure_client(w: World) -> openai.AsyncAzureOpenAI:
    """The scenario's `AsyncAzureOpenAI`: the emulator's Azure API over the scenario's hooked transport."""
    client = openai.AsyncAzureOpenAI(
        api_key=AZURE_KEY,
        azure_endpoint=w.emu.base_url,
        api_version=VERSION,
        http_client=httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url),
        max_retries=0,
    )
    w.cleanups.append(client.close)
    return client


def _start(context: Context, **settings: Any) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, **settings)
    _azure(w).deployments[DEPLOYMENT] = MODEL
    _azure(w).deployments["tide-batch-2"] = MODEL
    w.client = azure_client(w)


@given("an emulated Azure OpenAI API")
def step_azure_emulator(context: Context) -> None:
    _start(context)


@given("an emulated Azure OpenAI API whose batches take {seconds:g} seconds")
def step_azure_emulator_slow(context: Context, seconds: float) -> None:
    _start(context, processing_seconds=seconds)


@given('an Azure OpenAI actor "{name}" with:')
def step_azure_actor(context: Context, name: str) -> None:
    settings = {"name": name, "provider": "azure_openai", "model": DEPLOYMENT, "max_tokens": 64}
    given_settings = yaml_doc(context.text)
    options = given_settings.pop("provider_options", {"azure_openai": {"model": MODEL}})
    world(context).add_actor({**settings, "provider_options": options, **given_settings})


@when('an Azure OpenAI actor "{name}" is configured with:')
def step_azure_actor_configured(context: Context, name: str) -> None:
    w = world(context)
    settings = {"name": name, "provider": "azure_openai", "model": DEPLOYMENT, "max_tokens": 64}
    w.attempt(lambda: w.add_actor({**settings, **yaml_doc(context.text)}))


@given('an Azure OpenAI actor "{name}" with no client, the key in "{key}" and the endpoint in "{endpoint}"')
def step_azure_bare_actor(context: Context, name: str, key: str, endpoint: str) -> None:
    """An actor building its own client from the environment: `unset` leaves the variable unset."""
    w = world(context)
    set_env(w, "AZURE_OPENAI_API_KEY", None if key == "unset" else key)
    set_env(w, "AZURE_OPENAI_ENDPOINT", None if endpoint == "unset" else endpoint)
    w.add_actor({"name": name, "provider": "azure_openai", "model": DEPLOYMENT, "max_tokens": 64}, client=None)


# -- the emulated resource --------------------------------------------------------------------------------------------


@given("the Azure OpenAI API will commit the next batch but drop the connection before answering")
def step_azure_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("azure_openai.batches.create")


@given('the Azure OpenAI API will fail the next "{route}" call with status {status:d}')
def step_azure_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given("the Azure OpenAI resource holds as many files as it may")
def step_azure_files_full(context: Context) -> None:
    w = world(context)
    _azure(w).backend.max_files = 2
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, AzureBatchBackend), backend
    backend.max_files = 2

    async def fill() -> None:
        for n in range(2):
            await w.client.files.create(file=(f"other-{n}.jsonl", b"{}\n"), purpose="batch")

    w.run(fill())
    w.emu.calls.clear()


@given("the Azure resource expires batches still running after {hours:d} hours")
def step_azure_expiry(context: Context, hours: int) -> None:
    _azure(world(context)).backend.batch_expiry = hours * 3600.0


@given("the next download of an Azure batch's file will break after {lines:d} line")
def step_azure_cut(context: Context, lines: int) -> None:
    world(context).emu.faults.cut("azure_openai.files.content", after_lines=lines)


@given("Azure takes at most {count:d} request in a batch")
def step_azure_batch_limit(context: Context, count: int) -> None:
    _azure(world(context)).backend.limits.max_batch_requests = count


@given('the deployment "{deployment}" is not in the Azure resource')
def step_azure_no_deployment(context: Context, deployment: str) -> None:
    _azure(world(context)).deployments.pop(deployment, None)


@given(
    'the ledger holds an Azure intent for the key "{key}" asking "{prompt}", its input file uploaded by a program'
    " that died before creating the batch"
)
def step_azure_orphan_intent(context: Context, key: str, prompt: str) -> None:
    dead_after_openai_upload(world(context), key, prompt, "lt_orphaned_azure_intent", "/chat/completions")


# -- calls ------------------------------------------------------------------------------------------------------------


def _batches(w: World) -> list[Any]:
    async def listing() -> list[Any]:
        return [batch async for batch in w.client.batches.list(limit=100)]

    return w.run(listing())


@when("its Azure batch is canceled")
def step_azure_cancel(context: Context) -> None:
    w = world(context)
    [batch] = _batches(w)
    w.run(w.client.batches.cancel(batch.id))


@when("the Azure actor {what:w} a bulk run of {count:d} prompts, {size:d} to a batch")
def step_azure_bulk(context: Context, what: str, count: int, size: int) -> None:
    w = world(context)
    prompts = [f"Tide report {n}" for n in range(count)]
    outcome = w.run(w.current_actor().map(prompts, items_per_batch=size, dry_run=what == "plans"))
    w.witnessed.setdefault("bulk", []).append(outcome)


@when("the Azure batch input of these requests is encoded: {keys}")
def step_azure_encode(context: Context, keys: str) -> None:
    w = world(context)
    actor = w.current_actor()
    codec = actor.batch_codec()
    entries = [
        (w.custom_id(key), stored_json(codec.encode_request(actor.request(f"About {key}")))) for key in names(keys)
    ]
    w.witnessed["lines"] = [json.loads(line) for line in codec.encode(entries).decode().splitlines()]
    w.witnessed["params"] = [json.loads(params) for _, params in entries]


# -- what came back ---------------------------------------------------------------------------------------------------


@then('each line names the deployment "{deployment}" at "{url}", its custom id and nothing else')
def step_azure_lines(context: Context, deployment: str, url: str) -> None:
    w = world(context)
    for line in w.witnessed["lines"]:
        assert set(line) == {"custom_id", "method", "url", "body"}, line
        assert line["url"] == url, line
        assert line["method"] == "POST", line
        assert line["body"]["model"] == deployment, line
    codec = w.current_actor().batch_codec()
    models = {codec.model_of(params) for params in w.witnessed["params"]}
    groups = {codec.batch_group(stored_json(params), codec.model_of(params)) for params in w.witnessed["params"]}
    assert models == {MODEL}, models
    assert groups == {f"{url} {deployment}"}, groups


@then("the Azure OpenAI API was sent each of these requests once: {keys}")
def step_azure_sent_once(context: Context, keys: str) -> None:
    w = world(context)
    created = _azure(w).created_custom_ids
    assert created == Counter({w.custom_id(key): 1 for key in names(keys)}), created


@then("the Azure OpenAI API committed {count:d} batch")
@then("the Azure OpenAI API committed {count:d} batches")
def step_azure_committed(context: Context, count: int) -> None:
    assert _azure(world(context)).created_batches == count, _azure(world(context)).created_batches


@then('the Azure batch was created for "{url}" with lowtide\'s intent id in its metadata')
def step_azure_batch_metadata(context: Context, url: str) -> None:
    w = world(context)
    [batch] = _batches(w)
    assert batch.endpoint == url, batch.endpoint
    [recorded] = w.ledger().batches()
    assert batch.metadata == {INTENT_KEY: recorded.id}, (batch.metadata, recorded.id)
    assert recorded.provider_batch_id == batch.id, recorded


@then("the Azure batch was created from the file the dead program uploaded, under its intent id")
def step_azure_resumed(context: Context) -> None:
    w = world(context)
    intent, file_id = w.witnessed["orphan"]
    [batch] = _batches(w)
    assert batch.input_file_id == file_id, (batch.input_file_id, file_id)
    assert batch.metadata == {INTENT_KEY: intent}, batch.metadata


@then("the Azure resource holds no input file any more")
def step_azure_no_input_file(context: Context) -> None:
    w = world(context)

    async def purposes() -> list[str]:
        return [file.purpose async for file in w.client.files.list()]

    assert "batch" not in w.run(purposes()), "an input file was left behind"


@then('every Azure batch ended "{status}"')
def step_azure_batches_ended(context: Context, status: str) -> None:
    statuses = [batch.status for batch in _batches(world(context))]
    assert statuses, "no batch"
    assert all(each == status for each in statuses), statuses


@then("every answer was priced at Azure's batch prices for {model}")
def step_azure_batch_priced(context: Context, model: str) -> None:
    for label, outcome in world(context).asked.items():
        assert isinstance(outcome, ActorResponse), (label, outcome)
        assert outcome.provider == "azure_openai", outcome.provider
        assert outcome.model == model, outcome.model
        cost = outcome.cost
        assert cost is not None, label
        assert cost.pricing == "batch", (label, cost)
        assert cost.total_usd > 0, (label, cost)
        assert cost.total_usd < cost.live_equivalent_usd, (label, cost)


@then("the plan of the Azure run has {count:d} batches with a cost range above $0")
def step_azure_plan(context: Context, count: int) -> None:
    plan = world(context).witnessed["bulk"][-1]
    assert len(plan.batches) == count, plan.batches
    assert all(b.priced and 0 < b.cost_low_usd <= b.cost_high_usd for b in plan.batches), plan.batches


@then("the Azure run's {count:d} items succeeded in {batches:d} batches")
def step_azure_run_result(context: Context, count: int, batches: int) -> None:
    result = world(context).witnessed["bulk"][-1]
    assert len(result.completed) == count, result.items
    assert all(item.response is not None and item.response.mode is BatchProcessingMode.BATCH for item in result.items)
    assert result.batches == batches, result.batches


@then('an Azure batch whose status is "{status}" is {phase}, its requests counted as {counted}')
def step_azure_status(context: Context, status: str, phase: str, counted: str) -> None:
    batch = openai.types.Batch.model_validate(
        {
            "id": "batch_1",
            "object": "batch",
            "endpoint": "/chat/completions",
            "input_file_id": "file-1",
            "completion_window": "24h",
            "status": status,
            "created_at": 1,
            "request_counts": {"total": 4, "completed": 2, "failed": 1},
            "metadata": {INTENT_KEY: "lt_x"},
        }
    )
    remote = remote_batch(batch)
    assert remote.phase.value == phase, remote.phase
    assert remote.intent_id == "lt_x", remote
    counts = {
        kind: getattr(remote.counts, kind) for kind in ("processing", "succeeded", "errored", "canceled", "expired")
    }
    shown = ", ".join(f"{kind} {count}" for kind, count in counts.items() if count)
    assert shown == counted, shown
    assert isinstance(world(context).current_actor().batch_backend(), AzureBatchBackend)


# -- over a socket ----------------------------------------------------------------------------------------------------


@given("an emulated Azure OpenAI API served on a socket, whose batches take no time")
def step_azure_socket(context: Context) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, processing_seconds=0)
    _azure(w).deployments[DEPLOYMENT] = MODEL
    serving = serve_in_thread(w.emulator)
    server = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    set_env(w, "AZURE_OPENAI_ENDPOINT", server.url)
    set_env(w, "AZURE_OPENAI_API_KEY", AZURE_KEY)
    set_env(w, "OPENAI_API_VERSION", VERSION)


@given(
    '`lowtide emulator` runs with LOWTIDE_EMULATOR_AZURE_DEPLOYMENTS="{deployments}", named by AZURE_OPENAI_ENDPOINT'
)
def step_azure_emulator_command(context: Context, deployments: str) -> None:
    """The command in a process of its own, as a reader of the README starts it, its deployments from the variable."""
    w = world(context)
    command = [sys.executable, "-m", "lowtide", "emulator", "--port", "0", "--json", "--processing-seconds", "0"]
    env = {**os.environ, "LOWTIDE_EMULATOR_AZURE_DEPLOYMENTS": deployments}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    w.cleanups.append(lambda: (process.terminate(), process.wait(30)))
    assert process.stdout is not None
    listening = json.loads(process.stdout.readline())
    set_env(w, "AZURE_OPENAI_ENDPOINT", listening["url"])
    set_env(w, "AZURE_OPENAI_API_KEY", AZURE_KEY)
    set_env(w, "OPENAI_API_VERSION", VERSION)


@given('an Azure OpenAI actor "{name}" that builds its own client from those variables, with:')
def step_azure_env_actor(context: Context, name: str) -> None:
    w = world(context)
    w.client = None
    settings = {"name": name, "provider": "azure_openai", "model": DEPLOYMENT, "max_tokens": 64}
    w.add_actor({**settings, **yaml_doc(context.text)})


@when("lowtide collects the ended Azure batches, with no client but those variables")
def step_azure_collect(context: Context) -> None:
    w = world(context)
    w.in_program(lambda: parking.collect(w.ledger(), clock=w.clock))


@then("the ledger records the Azure batch at the resource's endpoint")
def step_azure_endpoint(context: Context) -> None:
    w = world(context)
    [batch] = w.ledger().batches()
    assert batch.endpoint == os.environ["AZURE_OPENAI_ENDPOINT"].rstrip("/"), batch.endpoint


@when("a program with only those variables set goes through the SDK's batch life cycle")
def step_azure_sdk_lifecycle(context: Context) -> None:
    w = world(context)
    seen: list[str] = []
    with openai.AzureOpenAI(max_retries=0) as client:
        line = {
            "custom_id": "one",
            "method": "POST",
            "url": "/chat/completions",
            "body": {"model": DEPLOYMENT, "messages": [{"role": "user", "content": "When is high tide?"}]},
        }
        uploaded = client.files.create(file=("in.jsonl", json.dumps(line).encode() + b"\n"), purpose="batch")
        seen.append(f"uploaded {uploaded.purpose}")
        azure_url: Any = "/chat/completions"  # Azure's url, which the SDK's types (OpenAI's urls) do not list
        batch = client.batches.create(
            input_file_id=uploaded.id, endpoint=azure_url, completion_window="24h", metadata={"k": "v"}
        )
        seen.append(f"created {batch.status} {batch.metadata}")
        got = client.batches.retrieve(batch.id)
        seen.append(f"retrieved {got.status}")
        listed = [each.id for each in client.batches.list()]
        seen.append(f"listed {listed == [batch.id]}")
        assert got.output_file_id is not None, got
        answer = json.loads(client.files.content(got.output_file_id).text)
        seen.append(f"answered {answer['custom_id']} {answer['response']['body']['model']}")
        try:
            client.batches.cancel(batch.id)
        except openai.BadRequestError as exc:
            seen.append(f"cancel refused {exc.status_code}")
        client.files.delete(uploaded.id)
        seen.append(f"deleted {[each.id for each in client.files.list()] == [got.output_file_id]}")
    w.witnessed["life"] = seen


@then("the program saw:")
def step_azure_saw(context: Context) -> None:
    expected = [row["step"] for row in context.table]
    assert world(context).witnessed["life"] == expected, world(context).witnessed["life"]


@when('a call reaches "{path}" with the key and {query}')
def step_azure_raw(context: Context, path: str, query: str) -> None:
    w = world(context)
    params = {} if query == "no api-version" else {"api-version": VERSION}

    async def call() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url) as client:
            return await client.post(path, params=params, headers={"api-key": AZURE_KEY}, json={"messages": []})

    response = w.run(call())
    w.witnessed["raw"] = [response]


@then('the Azure API answers {status:d} with the code "{code}" and an apim-request-id')
def step_azure_raw_answer(context: Context, status: int, code: str) -> None:
    [response] = world(context).witnessed["raw"]
    assert response.status_code == status, (response.status_code, response.text)
    assert response.json()["error"]["code"] == code, response.text
    assert response.headers.get("apim-request-id"), response.headers


@when("an Azure batch is created on an emulator with a state file, which is then started again from it")
def step_azure_restart(context: Context) -> None:
    w = world(context)
    folder = tempfile.mkdtemp(prefix="azure-state-")
    w.cleanups.append(lambda: shutil.rmtree(folder, ignore_errors=True))
    path = Path(folder) / "state.json"
    first = Emulator(clock=w.clock, processing_seconds=100000, state_file=path)

    def client_of(emulator: Emulator) -> openai.AsyncAzureOpenAI:
        client = openai.AsyncAzureOpenAI(
            api_key=AZURE_KEY,
            azure_endpoint=emulator.base_url,
            api_version=VERSION,
            http_client=emulator.http_client(),
            max_retries=0,
        )
        w.cleanups.append(client.close)
        return client

    async def create() -> str:
        body = {"model": MODEL, "messages": [{"role": "user", "content": "When is high tide?"}]}
        line = {"custom_id": "one", "method": "POST", "url": "/chat/completions", "body": body}
        client = client_of(first)
        uploaded = await client.files.create(file=("in.jsonl", json.dumps(line).encode() + b"\n"), purpose="batch")
        azure_url: Any = "/chat/completions"
        batch = await client.batches.create(input_file_id=uploaded.id, endpoint=azure_url, completion_window="24h")
        return batch.id

    batch_id = w.run(create())
    again = Emulator(clock=w.clock, state_file=path)
    client = client_of(again)
    statuses: list[str] = []
    for hours in (25, 3):
        w.clock.advance(hours * 3600)
        statuses.append(w.run(client.batches.retrieve(batch_id)).status)
    w.witnessed["restarted"] = statuses


@then('the restarted emulator shows the batch "{first}" after 25 hours, "{then}" 3 hours later')
def step_azure_restarted(context: Context, first: str, then: str) -> None:
    assert world(context).witnessed["restarted"] == [first, then], world(context).witnessed["restarted"]
