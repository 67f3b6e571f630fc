"""Steps for Mistral actors (features/mistral_batch.feature, features/mistral_live.feature): Mistral's Batch API and
chat completions through the official mistralai SDK, against the emulator's Mistral API, in process, on the
scenario's manual clock."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from typing import Any

import httpx2
from _batch_providers import assert_batch_priced, dead_program
from _mistral_support import Recording, canned, unreachable
from _mistral_support import sent as _sent
from _support import API_KEY, World, names, remember_env, set_env, world, yaml_doc
from genai_prices import Usage as PricedUsage
from genai_prices import calc_price
from mistralai.client import Mistral, models
from pydantic import BaseModel
from step_context import Context, given, then, when

from lowtide import ActorResponse, BatchProcessingMode
from lowtide.emulator import Emulator, RateLimits
from lowtide.emulator.mistral.emulation import MistralEmulation
from lowtide.providers import Phase
from lowtide.providers.mistral import MistralBatchProvider
from lowtide.providers.mistral.batch_backend import (
    INPUT_FILE_STEP,
    INTENT_KEY,
    MODEL_STEP,
    MistralBatchBackend,
    remote_batch,
)

MODEL = "mistral-small-latest"


def _emulation(w: World) -> MistralEmulation:
    return w.emu.emulation(MistralEmulation)


def _client(w: World) -> Mistral:
    client = w.client
    assert isinstance(client, Mistral), client
    return client


def _start(context: Context, **settings: Any) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock, **settings)
    http = httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url)
    w.cleanups.append(http.aclose)
    w.client = Mistral(api_key=API_KEY, server_url=w.emu.base_url, async_client=http)


@given("an emulated Mistral API")
def step_mistral_emulator(context: Context) -> None:
    _start(context)


@given("an emulated Mistral API allowing {count:d} requests per minute per key")
def step_mistral_emulator_rpm(context: Context, count: int) -> None:
    _start(context, rate_limits=RateLimits(rpm=count))


@given('a Mistral actor "{name}" with:')
def step_mistral_actor(context: Context, name: str) -> None:
    settings = {"name": name, "provider": "mistral", "model": MODEL, "max_tokens": 64, **yaml_doc(context.text)}
    world(context).add_actor(settings)


def _backend(w: World) -> MistralBatchBackend:
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, MistralBatchBackend), backend
    return backend


@given("the actor sends a Mistral batch as an uploaded file above {size:d} bytes")
def step_mistral_inline_limit(context: Context, size: int) -> None:
    """The current actor made again with `provider_options.mistral.batch_inline_bytes`, as a user would set it."""
    w = world(context)
    configuration = w.current_actor().configuration.model_dump(exclude_unset=True)
    options = dict(configuration.get("provider_options") or {})
    options["mistral"] = {**options.get("mistral", {}), "batch_inline_bytes": size}
    w.add_actor({**configuration, "provider_options": options})
    assert _backend(w).inline_bytes == size


@given("the Mistral API will commit the next batch job but drop the connection before answering")
def step_mistral_drop(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("mistral.batches.create")


@given('the Mistral API will fail the next "{route}" call with status {status:d}')
def step_mistral_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given("the Mistral API will fail the next batch job it creates")
def step_mistral_fail_job(context: Context) -> None:
    _emulation(world(context)).fail_jobs(1, "The model crashed on the whole job.")


@given('the Mistral API will lose the request "{key}" from its job\'s results')
def step_mistral_lose(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.lose(w.custom_id(key))


@given('the Mistral API will garble the result line of "{key}" as {kind}')
def step_mistral_garble(context: Context, key: str, kind: str) -> None:
    from lowtide.emulator.core.faults import garble_kind

    w = world(context)
    w.emu.faults.garble(w.custom_id(key), garble_kind(kind))


@given("the next download of a Mistral result file will break after {lines:d} line")
def step_mistral_cut(context: Context, lines: int) -> None:
    world(context).emu.faults.cut("mistral.files.content", after_lines=lines)


def _orphan(context: Context, key: str, prompt: str, *, created: bool, uploaded: bool) -> None:
    """A dead program's intent for `key` in the ledger: its input file uploaded (and recorded as a step), and its
    job created (under the intent's metadata), as far as the program got before it died."""
    w = world(context)
    dead = dead_program(w, key, prompt, "lt_0123456789abcdef0123456789abcdef", backend=_backend(w))
    intent, ledger, model, body = dead.batch_id, dead.ledger, dead.model, dead.body
    client = _client(w)
    file_id = ""
    if uploaded:
        uploaded_file = w.run(
            client.files.upload_async(file={"file_name": f"lowtide-{intent}.jsonl", "content": body}, purpose="batch")
        )
        file_id = uploaded_file.id
        ledger.record_create_step(intent, MODEL_STEP, model)
        ledger.record_create_step(intent, INPUT_FILE_STEP, file_id)
    if created:
        w.run(
            client.batch.jobs.create_async(
                endpoint="/v1/chat/completions", model=model, metadata={INTENT_KEY: intent}, requests=[json.loads(body)]
            )
        )
    w.witnessed["orphan"] = [intent, file_id]
    w.emu.calls.clear()


@given(
    'the ledger holds a Mistral intent for the key "{key}" asking "{prompt}", its input file uploaded by a program'
    " that died before creating the job"
)
def step_mistral_orphan_upload(context: Context, key: str, prompt: str) -> None:
    _orphan(context, key, prompt, created=False, uploaded=True)


@given(
    'the ledger holds a Mistral intent for the key "{key}" asking "{prompt}", whose job a program created and died'
    " before recording"
)
def step_mistral_orphan_job(context: Context, key: str, prompt: str) -> None:
    _orphan(context, key, prompt, created=True, uploaded=False)


@given("that Mistral input file was deleted since")
def step_mistral_orphan_file_gone(context: Context) -> None:
    w = world(context)
    _, file_id = w.witnessed["orphan"]
    w.run(_client(w).files.delete_async(file_id=file_id))
    w.emu.calls.clear()


@when("its Mistral batch job is canceled")
def step_mistral_cancel_job(context: Context) -> None:
    w = world(context)
    [job] = _emulation(w).jobs.values()
    w.run(_client(w).batch.jobs.cancel_async(job_id=job.id))


def _provider(w: World) -> MistralBatchProvider:
    provider = w.current_actor().provider(BatchProcessingMode.BATCH)
    assert isinstance(provider, MistralBatchProvider), provider
    return provider


@when('the Mistral batch provider answers "{first}" and "{second}" in one batch')
def step_mistral_direct(context: Context, first: str, second: str) -> None:
    w = world(context)
    actor = w.current_actor()
    outcomes = w.run(_provider(w).complete_many([actor.request(first), actor.request(second)]))
    w.answers = [outcome for outcome in outcomes if isinstance(outcome, ActorResponse)]
    assert len(w.answers) == len(outcomes), outcomes


@then("the Mistral batch job carries lowtide's intent id in its metadata, asked to end within {hours:d} hours")
def step_mistral_metadata(context: Context, hours: int) -> None:
    w = world(context)
    [job] = _emulation(w).jobs.values()
    [recorded] = w.ledger().batches()
    assert job.metadata == {INTENT_KEY: recorded.id}, (job.metadata, recorded)
    assert recorded.provider_batch_id == job.id, recorded
    assert job.timeout_hours == hours, job.timeout_hours


@then("the Mistral API holds {count:d} batch job")
@then("the Mistral API holds {count:d} batch jobs")
def step_mistral_jobs(context: Context, count: int) -> None:
    emulation = _emulation(world(context))
    assert len(emulation.jobs) == count, list(emulation.jobs)
    assert emulation.created_batches == count, emulation.created_batches


@then("the Mistral account holds no input file any more")
def step_mistral_no_input(context: Context) -> None:
    files = [stored.id for stored in _emulation(world(context)).files.uploaded()]
    assert not files, files


@then("the Mistral batch job was created from the file the dead program uploaded, under its intent id")
def step_mistral_resumed(context: Context) -> None:
    w = world(context)
    intent, file_id = w.witnessed["orphan"]
    [job] = _emulation(w).jobs.values()
    assert job.input_files == [file_id], job.input_files
    assert job.metadata == {INTENT_KEY: intent}, job.metadata


@then("every Mistral answer was priced at batch prices, half the live equivalent")
def step_mistral_batch_priced(context: Context) -> None:
    assert_batch_priced(world(context), "mistral", output=True)


@then('every Mistral batch job ended "{status}"')
def step_mistral_jobs_ended(context: Context, status: str) -> None:
    w = world(context)
    jobs = _emulation(w).jobs.values()
    now = w.clock.now()
    assert jobs
    assert all(job.status(now) == status for job in jobs), [job.status(now) for job in jobs]


@then("the Mistral API created each of these requests once: {keys}")
def step_mistral_created_once(context: Context, keys: str) -> None:
    w = world(context)
    created = dict(_emulation(w).created_custom_ids)
    assert created == {w.custom_id(key): 1 for key in names(keys)}, created


@then("the Mistral job holds each request's body as the ledger stored it")
def step_mistral_job_bodies(context: Context) -> None:
    """What the emulator received, read exactly (`json`: every integer whole), is each request's stored body, however
    lowtide read its lines before handing them to the SDK."""
    w = world(context)
    [job] = _emulation(w).jobs.values()
    sent = dict(job.requests)
    stored = w.ledger().requests_for(sorted(w.asked))
    assert len(sent) == len(stored) == len(w.asked), (sent, stored)
    for request in stored:
        body = sent[request.custom_id]
        assert json.dumps(body, sort_keys=True) == json.dumps(request.params, sort_keys=True), (body, request.params)


@then("a Mistral output file listed the answers in another order than the requests")
def step_mistral_out_of_order(context: Context) -> None:
    w = world(context)
    [job] = _emulation(w).jobs.values()
    client = _client(w)
    listed = w.run(client.batch.jobs.get_async(job_id=job.id))
    assert listed.output_file, listed

    async def read() -> bytes:
        response = await client.files.download_async(file_id=str(listed.output_file))
        return await response.aread()

    ids = [json.loads(line)["custom_id"] for line in w.run(read()).splitlines() if line.strip()]
    asked = [w.custom_id(key) for key in w.asked]
    assert sorted(ids) == sorted(asked), (ids, asked)
    in_job = [custom_id for custom_id, _ in job.requests]
    assert ids != in_job, ids


@then("the Mistral job statuses read as these phases:")
def step_mistral_phases(context: Context) -> None:
    assert context.table is not None
    for row in context.table:
        job = models.BatchJob(
            id="job",
            input_files=[],
            endpoint="/v1/chat/completions",
            errors=[],
            status=row["status"],
            created_at=1,
            total_requests=4,
            completed_requests=1,
            succeeded_requests=1,
            failed_requests=0,
            metadata={INTENT_KEY: "lt_abc"},
        )
        batch = remote_batch(job)
        counts = batch.counts
        shown = ", ".join(
            f"{name} {value}"
            for name, value in (
                ("processing", counts.processing), ("succeeded", counts.succeeded), ("errored", counts.errored),
                ("canceled", counts.canceled), ("expired", counts.expired),
            )
            if value
        )  # fmt: skip
        assert batch.phase == Phase(row["phase"]), (row["status"], batch.phase)
        assert shown == row["counts"], (row["status"], shown)
        assert batch.intent_id == "lt_abc", batch


# -- live mode ----------------------------------------------------------------------------------------------------


class Voyage(BaseModel):
    port: str
    days: int


@given("an emulated Mistral API whose chat calls are kept")
def step_mistral_recording(context: Context) -> None:
    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    transport = Recording(w.transport(), _sent(w), canned(w), unreachable(w))
    http = httpx2.AsyncClient(transport=transport, base_url=w.emu.base_url)
    w.cleanups.append(http.aclose)
    w.client = Mistral(api_key=API_KEY, server_url=w.emu.base_url, async_client=http)


@given('an emulated Mistral API that also serves the model "{model}"')
def step_mistral_extra_model(context: Context, model: str) -> None:
    _start(context, extra_models=[model])


@given('a Mistral actor "{name}" with no client, whose key variable is unset')
def step_mistral_keyless(context: Context, name: str) -> None:
    remember_env(context, "MISTRAL_API_KEY")
    os.environ.pop("MISTRAL_API_KEY", None)
    w = world(context)
    w.add_actor({"name": name, "provider": "mistral", "model": MODEL, "base_url": w.emu.base_url}, client=None)


@when('a Mistral actor "{name}" is set up with:')
def step_mistral_configured(context: Context, name: str) -> None:
    w = world(context)
    settings = {"name": name, "provider": "mistral", "model": MODEL, **yaml_doc(context.text)}
    w.attempt(lambda: w.add_actor(settings))


@given("the Mistral emulator answers the next chat call with status {status:d}, asking to wait {seconds:g} seconds")
def step_mistral_chat_wait(context: Context, status: int, seconds: float) -> None:
    world(context).emu.faults.fail_next("mistral.chat.completions", status, retry_after=seconds)


@given("the Mistral emulator answers the next chat call with status {status:d}")
def step_mistral_chat_fault(context: Context, status: int) -> None:
    world(context).emu.faults.fail_next("mistral.chat.completions", status)


@when('the Mistral actor is asked "{prompt}" for a Voyage')
def step_mistral_voyage(context: Context, prompt: str) -> None:
    w = world(context)
    w.response = w.attempt_async(lambda: w.current_actor().run(prompt, response_model=Voyage))


@then("the Mistral answer is parsed into a Voyage")
def step_mistral_parsed(context: Context) -> None:
    parsed = world(context).answer().parsed
    assert isinstance(parsed, Voyage), parsed


@when('the Mistral actor is told the result "{result}" of that call')
def step_mistral_tool_result(context: Context, result: str) -> None:
    w = world(context)
    call = w.answer().tool_calls[0]
    declared = _sent(w)[-1]["tools"]
    tools = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in declared]
    messages = [
        {"role": "user", "content": "Record today's high tide"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": result}]},
    ]
    w.response = w.attempt_async(lambda: w.current_actor().run(messages=messages, tools=tools))


@then('the Mistral actor called "{tool}" with a string "{text}" and a number "{number}"')
def step_mistral_called(context: Context, tool: str, text: str, number: str) -> None:
    calls = world(context).answer().tool_calls
    assert [call.name for call in calls] == [tool], calls
    arguments = calls[0].input
    assert isinstance(arguments[text], str), arguments
    assert isinstance(arguments[number], int | float), arguments
    assert len(calls[0].id) == 9, calls


def _value(body: Any, path: str) -> Any:
    value = body
    for part in path.split("."):
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError):
            raise AssertionError(f"Mistral was sent no {path}; the body: {body}") from None
    return value


@then("Mistral was sent, in its chat body:")
def step_mistral_sent(context: Context) -> None:
    w = world(context)
    assert _sent(w), "nothing was sent to Mistral"
    body = _sent(w)[-1]
    assert context.table is not None
    for row in context.table:
        actual = _value(body, row["path"])
        expected = json.loads(row["value"])
        assert actual == expected, f"{row['path']} is {actual!r}, not {expected!r}; the body: {body}"


@then("nothing was sent to Mistral")
def step_mistral_nothing_sent(context: Context) -> None:
    w = world(context)
    assert _sent(w) == [], _sent(w)
    assert sum(w.emu.calls.values()) == 0, w.emu.calls


@then('the Mistral answer\'s cost is what genai-prices asks for "{model}" at live prices')
def step_mistral_cost(context: Context, model: str) -> None:
    answer = world(context).answer()
    usage = answer.usage
    priced = calc_price(
        PricedUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens), model, provider_id="mistral"
    )
    assert answer.cost is not None
    assert answer.cost.total_usd == Decimal(priced.total_price), (answer.cost, priced.total_price)
    assert answer.cost.total_usd > 0, answer.cost


@given("an emulated Mistral API on a socket, named by MISTRAL_SERVER_URL, with MISTRAL_API_KEY set")
def step_mistral_socket_env(context: Context) -> None:
    """The emulator on a loopback socket; the program's environment names it and a key, as a user's shell would."""
    from lowtide.emulator.server import serve_in_thread

    w = world(context)
    w.emulator = Emulator(clock=w.clock)
    serving = serve_in_thread(w.emulator)
    server = serving.__enter__()
    w.cleanups.append(lambda: serving.__exit__(None, None, None))
    set_env(w, "MISTRAL_SERVER_URL", server.url)
    set_env(w, "MISTRAL_API_KEY", API_KEY)
    w.client = None


@given('a Mistral actor "{name}" building its own client')
def step_mistral_own_client(context: Context, name: str) -> None:
    world(context).add_actor({"name": name, "provider": "mistral", "model": MODEL, "max_tokens": 64}, client=None)


@then("the Mistral codec keeps every job within {requests:d} requests and {megabytes:d} MB")
def step_mistral_limits(context: Context, requests: int, megabytes: int) -> None:
    limits = _backend(world(context)).codec.limits
    assert limits.max_requests == requests, limits
    assert limits.max_bytes == megabytes * 1024 * 1024, limits


@when('a Mistral actor "{name}" is given a {which} of another kind, and asked "{prompt}"')
def step_mistral_wrong_client(context: Context, name: str, which: str, prompt: str) -> None:
    """An actor handed a client the mistralai SDK cannot use: an OpenAI-style httpx2 client as `client`, or a
    synchronous httpx2 client as `http_client`."""
    w = world(context)
    settings = {"name": name, "provider": "mistral", "model": MODEL, "max_tokens": 64, "base_url": w.emu.base_url}
    if which == "client":
        other = httpx2.AsyncClient()
        w.cleanups.append(other.aclose)
        kwargs: dict[str, Any] = {"client": other}
    else:
        assert which == "http_client", which
        blocking = httpx2.Client()
        w.cleanups.append(blocking.close)
        kwargs = {"client": None, "api_key": API_KEY, "http_client": blocking}

    async def ask() -> ActorResponse[Any]:
        return await w.add_actor(settings, **kwargs).run(prompt)

    w.response = w.attempt_async(ask)


@when('the Mistral batch provider answers "{prompt}" alone')
def step_mistral_direct_one(context: Context, prompt: str) -> None:
    w = world(context)
    request = w.current_actor().request(prompt)
    w.response = w.attempt_async(lambda: _provider(w).complete(request))


@then("the Mistral account holds {count:d} input file")
@then("the Mistral account holds {count:d} input files")
def step_mistral_inputs(context: Context, count: int) -> None:
    files = [stored.id for stored in _emulation(world(context)).files.uploaded()]
    assert len(files) == count, files


@then("lowtide.providers.mistral gives MistralProvider, MistralBatchProvider and MistralOptions")
def step_mistral_package(context: Context) -> None:
    import lowtide.providers.mistral as package
    from lowtide.providers.mistral.batch import MistralBatchProvider as Batch
    from lowtide.providers.mistral.live import MistralProvider as Live
    from lowtide.providers.mistral.options import MistralOptions as Options

    given = (package.MistralProvider, package.MistralBatchProvider, package.MistralOptions)
    assert given == (Live, Batch, Options), given


@then("lowtide.providers.mistral has no {name}")
def step_mistral_package_lacks(context: Context, name: str) -> None:
    import lowtide.providers.mistral as package

    said = ""
    try:
        getattr(package, name)
    except AttributeError as error:
        said = str(error)
    assert said == f"module 'lowtide.providers.mistral' has no attribute {name!r}", said
    assert not hasattr(package, name)
