"""Steps only the emulator's Together scenarios have (features/emulator_together.feature): the together SDK's (v3)
three-step upload and its jobs against the emulator on a loopback socket. The steps the Groq and Together scenarios
share are in emulator_compat_steps.py."""

from __future__ import annotations

import json
from typing import Any

import openai
from _compat_sockets import TOGETHER_SDK, Context, batch_lines, call, check_output, check_stats, serve
from _support import world
from step_context import given, then, when

from lowtide.emulator.together.emulation import TogetherEmulation


def _job(context: Context) -> Any:
    job = call(context, lambda c: c.batches.retrieve(context.sdk_socket.batch_id))
    assert job is not None, context.sdk_socket.error
    return job


def _write(context: Context, count: int, models: list[str]) -> None:
    path = world(context).path(f"tides-{count}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(batch_lines(count, models), encoding="utf-8")
    context.sdk_socket.upload = path


def _upload(context: Context) -> None:
    s = context.sdk_socket
    path = s.upload
    assert path is not None
    uploaded = call(context, lambda c: c.files.upload(path, purpose="batch-api", check=False))
    assert uploaded is not None, s.error
    s.file_ids.append(uploaded.id)


@given("an emulator on a socket whose Together jobs take {seconds:g} seconds, reached through TOGETHER_BASE_URL alone")
def step_together_socket(context: Context, seconds: float) -> None:
    serve(context, TOGETHER_SDK, seconds)


@when("the emulator's Together jobs take {seconds:g} seconds")
def step_together_slower(context: Context, seconds: float) -> None:
    context.socket_emulator.emu.processing_seconds = seconds


@when('the together SDK uploads a batch file of {count:d} request for "{model}"')
@when('the together SDK uploads a batch file of {count:d} requests for "{model}"')
def step_together_upload(context: Context, count: int, model: str) -> None:
    _write(context, count, [model])
    _upload(context)


@when('the together SDK uploads a batch file whose requests name "{first}" and "{second}"')
def step_together_upload_two(context: Context, first: str, second: str) -> None:
    _write(context, 2, [first, second])
    _upload(context)


@when("the together SDK uploads the same file again")
def step_together_upload_again(context: Context) -> None:
    _upload(context)


def _create(context: Context, endpoint: str = "/v1/chat/completions") -> None:
    s = context.sdk_socket
    created = call(context, lambda c: c.batches.create(input_file_id=s.file_id, endpoint=endpoint))
    if created is not None:
        assert created.job is not None, created
        s.batch_id = created.job.id


@when("the together SDK creates a job from it")
def step_together_create(context: Context) -> None:
    _create(context)
    assert context.sdk_socket.error is None, context.sdk_socket.error


@when('the together SDK creates a job from it for "{endpoint}"')
def step_together_create_endpoint(context: Context, endpoint: str) -> None:
    _create(context, endpoint)


_FORM = {"headers": {"Content-Type": "multipart/form-data"}}


@when("the together SDK starts an upload with the fields {fields}")
def step_together_start_upload(context: Context, fields: str) -> None:
    given = json.loads(fields)
    call(context, lambda c: c.post("/v1/files", cast_to=object, body=given, options=_FORM))


@when('the together SDK puts bytes to the upload "{file_id}"')
def step_together_put_unknown(context: Context, file_id: str) -> None:
    call(context, lambda c: c.put(f"/together-uploads/{file_id}", cast_to=object, body={"tide": "high"}))


@when('the together SDK asks to preprocess the file "{file_id}"')
def step_together_preprocess_unknown(context: Context, file_id: str) -> None:
    call(context, lambda c: c.post(f"/v1/files/{file_id}/preprocess", cast_to=object))


@when("the together SDK creates a job from it with the body fields {fields}")
def step_together_create_with(context: Context, fields: str) -> None:
    body = {"input_file_id": context.sdk_socket.file_id, "endpoint": "/v1/chat/completions", **json.loads(fields)}
    call(context, lambda c: c.post("/v1/batches", cast_to=object, body=body))


@when('the together SDK retrieves the job "{job_id}"')
def step_together_retrieve_unknown(context: Context, job_id: str) -> None:
    call(context, lambda c: c.batches.retrieve(job_id))


@when("the together SDK cancels the job")
def step_together_cancel(context: Context) -> None:
    assert call(context, lambda c: c.batches.cancel(context.sdk_socket.batch_id)) is not None


@then('the file is listed with the purpose "{purpose}" and its name')
def step_together_listed(context: Context, purpose: str) -> None:
    s = context.sdk_socket
    assert s.upload is not None
    listed = call(context, lambda c: c.files.list())
    [only] = listed.data
    assert (only.id, only.purpose, only.filename) == (s.file_id, purpose, s.upload.name), only


@then('the Together job is "{status}" at {progress:g}% progress')
def step_together_status(context: Context, status: str, progress: float) -> None:
    job = _job(context)
    assert (job.status, job.progress) == (status, progress), job


@then('the Together job names the model "{model}"')
def step_together_model(context: Context, model: str) -> None:
    job = _job(context)
    assert job.model_id == model, job


@then('the Together job is "{status}", saying "{says}"')
def step_together_failed(context: Context, status: str, says: str) -> None:
    job = _job(context)
    assert job.status == status, job
    assert says in (job.error or ""), job.error


@then('the Together job\'s output file holds an answer from "{model}" for each of its {count:d} requests')
def step_together_output(context: Context, model: str, count: int) -> None:
    check_output(context, _job(context).output_file_id, model, count)


@then("both uploads name the same file, stored once")
def step_together_same_file(context: Context) -> None:
    s = context.sdk_socket
    first, second = s.file_ids[-2:]
    assert first == second, s.file_ids
    listed = call(context, lambda c: c.files.list())
    assert [item.id for item in listed.data if item.purpose == "batch-api"] == [first], listed


@then("the together SDK lists {count:d} job")
@then("the together SDK lists {count:d} jobs")
def step_together_lists(context: Context, count: int) -> None:
    listed = call(context, lambda c: c.batches.list())
    assert len(listed) == count, listed


@then("the emulator's stats count {jobs:d} Together job created, with {ids:d} custom ids")
def step_together_stats(context: Context, jobs: int, ids: int) -> None:
    check_stats(context, jobs, ids)


@then("the OpenAI SDK at the same address lists no batch and no file")
def step_together_openai_apart(context: Context) -> None:
    url = context.socket_emulator.url

    async def listing() -> tuple[list[Any], list[Any]]:
        async with openai.AsyncOpenAI(api_key=TOGETHER_SDK.key, base_url=f"{url}/v1", max_retries=0) as client:
            return [batch async for batch in client.batches.list()], [item async for item in client.files.list()]

    assert world(context).run(listing()) == ([], [])
    assert context.socket_emulator.emu.emulation(TogetherEmulation).created_batches == 1
