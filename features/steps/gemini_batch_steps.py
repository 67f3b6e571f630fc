"""Steps for Gemini actors in batch mode (features/gemini_batch.feature): the Gemini API's batch mode through the
official google-genai SDK, against the emulator's Gemini API, in process, on the scenario's manual clock."""

from __future__ import annotations

import io
import json

import httpx2
from _batch_providers import assert_batch_priced, dead_program, later_result
from _support import API_KEY, World, names, set_env, world, yaml_doc
from google import genai
from google.genai import types
from step_context import Context, given, then, when

from lowtide import Actor, ActorError, ActorResponse, BatchProcessingMode
from lowtide.calls import parking
from lowtide.emulator.core.faults import garble_kind
from lowtide.emulator.gemini.emulation import GeminiEmulation
from lowtide.providers.gemini import GeminiBatchProvider
from lowtide.providers.gemini.batch_backend import (
    INPUT_FILE_STEP,
    MODEL_STEP,
    GeminiBatchBackend,
    display_name,
)


def _jobs(w: World) -> list[types.BatchJob]:
    async def listing() -> list[types.BatchJob]:
        return [job async for job in await w.client.aio.batches.list(config={"page_size": 100})]

    return w.run(listing())


def _files(w: World) -> list[types.File]:
    async def listing() -> list[types.File]:
        return [file async for file in await w.client.aio.files.list()]

    return w.run(listing())


def _state(job: types.BatchJob) -> str | None:
    return job.state.value if job.state is not None else None


def _emulation(w: World) -> GeminiEmulation:
    return w.emu.emulation(GeminiEmulation)


def _program_actor(w: World) -> Actor:
    """The current actor as a new program builds it: the same configuration and ledger, a google-genai client of
    its own over the emulator."""
    http = httpx2.AsyncClient(transport=w.transport(), base_url=w.emu.base_url)
    options = types.HttpOptions(base_url=w.emu.base_url, api_version="v1beta", httpx_async_client=http)
    client = genai.Client(api_key=API_KEY, http_options=options)
    actor = Actor(w.current_actor().configuration, client=client, clock=w.clock, registry=w.registry)

    async def close() -> None:
        try:
            await actor.aclose()
            await http.aclose()
        except RuntimeError as exc:  # its connections belonged to a program's event loop, closed with it
            if "Event loop is closed" not in str(exc):
                raise

    w.cleanups.append(close)
    return actor


def _backend(w: World) -> GeminiBatchBackend:
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, GeminiBatchBackend), backend
    return backend


@given("an emulated Gemini API served on a socket, whose jobs take {seconds:g} seconds")
def step_gemini_socket_api(context: Context, seconds: float) -> None:
    """The emulator on a loopback socket, on the scenario's clock: `lowtide collect` and `cancel` reach it by its
    URL."""
    w = world(context)
    w.serve_emulator(processing_seconds=seconds)


@given('a Gemini actor "{name}" that reaches it with the key in "{variable}", with:')
def step_gemini_socket_actor(context: Context, name: str, variable: str) -> None:
    """An actor that builds its own google-genai client from its base URL and key variable, as a program run from
    the command line would."""
    w = world(context)
    [url] = w.witnessed["server url"]
    set_env(w, variable, API_KEY)
    w.client = None
    settings = {"name": name, "provider": "gemini", "model": "gemini-2.5-flash", "max_tokens": 64}
    w.add_actor({**settings, "base_url": url, "api_key_env": variable, **yaml_doc(context.text)})


@given("the actor sends a batch as an uploaded file above {size:d} bytes")
def step_gemini_inline_limit(context: Context, size: int) -> None:
    """The current actor made again with `provider_options.gemini.batch_inline_bytes`, as a user would set it."""
    w = world(context)
    configuration = w.current_actor().configuration.model_dump(exclude_unset=True)
    options = dict(configuration.get("provider_options") or {})
    options["gemini"] = {**options.get("gemini", {}), "batch_inline_bytes": size}
    actor = w.add_actor({**configuration, "provider_options": options})
    assert _backend(w).inline_bytes == size, actor


@given('the Gemini API will lose the request "{key}" from its job\'s results')
def step_gemini_lose(context: Context, key: str) -> None:
    w = world(context)
    w.emu.faults.lose(w.custom_id(key))


@given("the Gemini API will commit the next batch job but drop the connection before answering")
@when("the Gemini API will commit the next batch job but drop the connection before answering")
def step_gemini_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("gemini.batches.create")


@given("the Gemini API will fail the next batch job it creates")
def step_gemini_fail_job(context: Context) -> None:
    _emulation(world(context)).fail_batches(1)


@given('the Gemini API will garble the result line of "{key}" as {kind}')
def step_gemini_garble(context: Context, key: str, kind: str) -> None:
    w = world(context)
    w.emu.faults.garble(w.custom_id(key), garble_kind(kind))


@given("the Gemini API will store the next uploaded file but drop the connection before answering")
def step_gemini_upload_dropped(context: Context) -> None:
    """An upload is two calls (its start, then its bytes): the second is the one that stores the file."""
    w = world(context)
    upload = "POST /upload/v1beta/files"
    w.hooks.before(upload, lambda: w.emu.faults.drop_after_commit("gemini.files.upload"), nth=2)


@given("the Gemini API will open the next upload but drop the connection before answering")
def step_gemini_upload_start_dropped(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("gemini.files.upload")


@given("that Gemini input file was deleted since")
def step_gemini_orphan_file_gone(context: Context) -> None:
    w = world(context)
    _, file_name = w.witnessed["orphan"]
    w.run(w.client.aio.files.delete(name=file_name))
    w.emu.calls.clear()


@given("the next download of the Gemini result file will break after {lines:d} line")
def step_gemini_cut(context: Context, lines: int) -> None:
    world(context).emu.faults.cut("gemini.files.download", after_lines=lines)


@given('the Gemini API will fail the next "{route}" call with status {status:d}')
def step_gemini_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given(
    'the ledger holds a Gemini intent for the key "{key}" asking "{prompt}", its input file uploaded by a program'
    " that died before creating the batch"
)
def step_gemini_orphan_intent(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    dead = dead_program(w, key, prompt, "lt_0123456789abcdef0123456789abcdef", backend=_backend(w))
    batch_id, ledger = dead.batch_id, dead.ledger

    async def upload() -> str:
        config: types.UploadFileConfigDict = {"mime_type": "application/jsonl"}
        uploaded = await w.client.aio.files.upload(file=io.BytesIO(dead.body), config=config)
        assert uploaded.name is not None
        return uploaded.name

    file_name = w.run(upload())
    ledger.record_create_step(batch_id, MODEL_STEP, dead.model)
    ledger.record_create_step(batch_id, INPUT_FILE_STEP, file_name)
    w.witnessed["orphan"] = [batch_id, file_name]
    w.emu.calls.clear()


@when("its Gemini batch job is canceled")
def step_gemini_cancel_job(context: Context) -> None:
    w = world(context)
    [job] = _jobs(w)
    assert job.name is not None
    w.run(w.client.aio.batches.cancel(name=job.name))


@when('lowtide cancels the Gemini key "{key}"')
def step_gemini_cancel_key(context: Context, key: str) -> None:
    w = world(context)
    w.in_program(lambda: parking.cancel(w.ledger(), key, client=w.client, clock=w.clock))


@when('a Gemini program parks "{prompt}" with the key "{key}" and ends')
def step_gemini_park_in_program(context: Context, prompt: str, key: str) -> None:
    w = world(context)
    actor = _program_actor(w)
    w.tickets[key] = w.in_program(lambda: actor.submit(prompt, key=key))


@when('a later Gemini program waits for the result of "{key}"')
def step_gemini_later_result(context: Context, key: str) -> None:
    w = world(context)
    later_result(w, _program_actor(w), key)


def _provider(w: World) -> GeminiBatchProvider:
    provider = w.current_actor().provider(BatchProcessingMode.BATCH)
    assert isinstance(provider, GeminiBatchProvider), provider
    return provider


@when('the Gemini batch provider answers "{first}" and "{second}" in one batch')
def step_gemini_direct(context: Context, first: str, second: str) -> None:
    w = world(context)
    actor = w.current_actor()
    outcomes = w.run(_provider(w).complete_many([actor.request(first), actor.request(second)]))
    w.answers = [outcome for outcome in outcomes if isinstance(outcome, ActorResponse)]
    assert len(w.answers) == len(outcomes), outcomes


@when('the Gemini batch provider answers "{prompt}" alone')
def step_gemini_direct_one(context: Context, prompt: str) -> None:
    w = world(context)
    w.error = None
    try:
        w.response = w.run(_provider(w).complete(w.current_actor().request(prompt)))
    except ActorError as exc:
        w.response, w.error = None, exc


@when("lowtide collects the ended Gemini batches")
def step_gemini_collect(context: Context) -> None:
    w = world(context)
    w.in_program(lambda: parking.collect(w.ledger(), client=w.client, clock=w.clock))


@then("the Gemini batch job carries lowtide's intent id and request count in its display name")
def step_gemini_display_name(context: Context) -> None:
    w = world(context)
    [job] = _jobs(w)
    [recorded] = w.ledger().batches()
    assert job.display_name == display_name(recorded.id, recorded.request_count), (job.display_name, recorded)
    assert recorded.provider_batch_id == job.name, recorded


@then("the Gemini API holds {count:d} batch job")
@then("the Gemini API holds {count:d} batch jobs")
def step_gemini_jobs(context: Context, count: int) -> None:
    jobs = _emulation(world(context)).batches.oldest_first()
    assert len(jobs) == count, [job.name for job in jobs]


@then("the Gemini account holds no input file any more")
def step_gemini_no_input(context: Context) -> None:
    files = [file.name for file in _files(world(context)) if (file.display_name or "").startswith("lowtide-")]
    assert not files, files


@then("the Gemini batch job was created from the file the dead program uploaded, under its intent id")
def step_gemini_resumed(context: Context) -> None:
    w = world(context)
    intent, _ = w.witnessed["orphan"]
    [job] = _jobs(w)
    assert job.display_name == display_name(intent, 1), job.display_name


@then("every Gemini answer was priced at batch prices, half the live equivalent")
def step_gemini_batch_priced(context: Context) -> None:
    assert_batch_priced(world(context), "gemini", output=True)


@then('the Gemini batch job ended "{state}", still listed by the API')
def step_gemini_job_ended(context: Context, state: str) -> None:
    [job] = _jobs(world(context))
    assert _state(job) == f"JOB_STATE_{state.upper()}", job.state


@then('every Gemini batch job ended "{state}"')
def step_gemini_jobs_ended(context: Context, state: str) -> None:
    jobs = _jobs(world(context))
    assert jobs, jobs
    assert all(_state(job) == f"JOB_STATE_{state.upper()}" for job in jobs), [job.state for job in jobs]


@then("the Gemini result file listed the answers in another order than the requests")
def step_gemini_out_of_order(context: Context) -> None:
    w = world(context)
    [job] = _jobs(w)
    file_name = job.dest.file_name if job.dest is not None else None
    assert file_name, job.dest
    data = w.run(w.client.aio.files.download(file=file_name))
    keys = [json.loads(line)["key"] for line in data.splitlines() if line.strip()]
    asked = [w.custom_id(key) for key in w.asked]
    assert sorted(keys) == sorted(asked), (keys, asked)
    [batch] = _emulation(w).batches.oldest_first()
    in_job = [request.key for request in batch.requests]
    assert keys != in_job, keys


@then("the Gemini API created each of these requests once: {keys}")
def step_gemini_created_once(context: Context, keys: str) -> None:
    w = world(context)
    created = dict(_emulation(w).created_custom_ids)
    assert created == {w.custom_id(key): 1 for key in names(keys)}, created


@then('the command printed that cancelling the job of the ticket "{key}" was requested, the job now "{state}"')
def step_gemini_cli_cancelled(context: Context, key: str, state: str) -> None:
    """Gemini ends a cancelled job at once when none of its requests is running: it is ended, uncollected."""
    w = world(context)
    ticket = w.tickets[key]
    assert w.value["out"].splitlines() == [f"{ticket.batch_id} cancellation requested ({state})"], w.value["out"]


@then("the Gemini account still holds the input file of the job")
def step_gemini_input_kept(context: Context) -> None:
    files = [file.name for file in _files(world(context)) if (file.display_name or "").startswith("lowtide-")]
    assert len(files) == 1, files


@then("the Gemini batch job held a request with a system instruction and topK {top_k:d}")
def step_gemini_sent_inline(context: Context, top_k: int) -> None:
    [job] = _emulation(world(context)).batches.oldest_first()
    [request] = job.requests
    assert "systemInstruction" in request.body, request.body
    assert request.body["generationConfig"]["topK"] == top_k, request.body
