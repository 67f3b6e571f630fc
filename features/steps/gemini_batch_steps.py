"""Steps for Gemini actors in batch mode (features/gemini_batch.feature): the Gemini API's batch mode through the
official google-genai SDK, against the emulator's Gemini API, in process, on the scenario's manual clock."""

from __future__ import annotations

import io
from typing import Any

from _support import World, world
from google.genai import types
from step_context import Context, given, then, when

from lowtide import ActorResponse, parking
from lowtide.ledger.store import NewRequest, stored_json
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


def _backend(w: World) -> GeminiBatchBackend:
    backend = w.current_actor().batch_backend()
    assert isinstance(backend, GeminiBatchBackend), backend
    return backend


@given("the actor sends a batch as an uploaded file above {size:d} bytes")
def step_gemini_inline_limit(context: Context, size: int) -> None:
    _backend(world(context)).inline_bytes = size


@given("the Gemini API will commit the next batch job but drop the connection before answering")
def step_gemini_drop_after_commit(context: Context) -> None:
    world(context).emu.faults.drop_after_commit("gemini.batches.create")


@given('the Gemini API will fail the next "{route}" call with status {status:d}')
def step_gemini_fail_next(context: Context, route: str, status: int) -> None:
    world(context).emu.faults.fail_next(route, status)


@given(
    'the ledger holds a Gemini intent for the key "{key}" asking "{prompt}", its input file uploaded by a program'
    " that died before creating the batch"
)
def step_gemini_orphan_intent(context: Context, key: str, prompt: str) -> None:
    w = world(context)
    actor = w.current_actor()
    backend = _backend(w)
    params: dict[str, Any] = backend.codec.encode_request(actor.request(prompt))
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
    batch_id = "lt_0123456789abcdef0123456789abcdef"
    body = backend.codec.encode([(custom_id, stored_json(params))])
    ledger.record_intent(
        batch_id,
        provider=backend.name,
        endpoint=backend.endpoint,
        members=[(key, custom_id)],
        request_bytes=len(body),
        owner=dead,
        until=now - 1,
        now=now - 120,
    )

    async def upload() -> str:
        config: types.UploadFileConfigDict = {"mime_type": "application/jsonl"}
        uploaded = await w.client.aio.files.upload(file=io.BytesIO(body), config=config)
        assert uploaded.name is not None
        return uploaded.name

    file_name = w.run(upload())
    ledger.record_create_step(batch_id, MODEL_STEP, model)
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
    jobs = _jobs(world(context))
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
    w = world(context)
    outcomes = list(w.asked.values()) or [w.answer()]
    for outcome in outcomes:
        assert isinstance(outcome, ActorResponse), outcome
        cost = outcome.cost
        assert cost is not None, outcome
        assert cost.pricing == "batch", cost
        assert cost.total_usd > 0, cost
        assert cost.total_usd * 2 == cost.live_equivalent_usd, cost
        assert outcome.provider == "gemini", outcome
        assert outcome.usage.output_tokens > 0, outcome
