"""Steps for the emulator's Together API (features/emulator_together.feature): the official together SDK (v3), as a
program builds it from `TOGETHER_BASE_URL` and `TOGETHER_API_KEY` alone, against the emulator on a loopback socket, on
a manual clock."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx
import openai
import together
from _socket_emulator import SocketEmulator
from _support import set_env, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator.together.emulation import TogetherEmulation

KEY = "tgp-emulated-together-scenario-key-27b9"


@dataclass
class TogetherSocket:
    """What the together SDK did against the scenario's emulator."""

    upload: Path | None = None
    file_ids: list[str] = field(default_factory=list[str])
    job_id: str = ""
    error: Exception | None = None


class Context(StepContext, Protocol):
    together_socket: TogetherSocket
    socket_emulator: SocketEmulator


def _call(context: Context, make: Any) -> Any:
    """An SDK call by a client built as a program builds it (from the environment alone); a Together error is kept."""
    s = context.together_socket
    s.error = None

    async def call() -> Any:
        client = together.AsyncTogether(max_retries=0)
        try:
            return await make(client)
        finally:
            await client.close()

    try:
        return world(context).run(call())
    except together.APIError as exc:
        s.error = exc
        return None


def _job(context: Context) -> Any:
    job = _call(context, lambda c: c.batches.retrieve(context.together_socket.job_id))
    assert job is not None, context.together_socket.error
    return job


def _write(context: Context, count: int, models: list[str]) -> None:
    lines = "\n".join(
        json.dumps(
            {
                "custom_id": f"r{index}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": models[index % len(models)], "messages": [{"role": "user", "content": f"Q{index}"}]},
            }
        )
        for index in range(count)
    )
    path = world(context).path(f"tides-{count}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(lines, encoding="utf-8")
    context.together_socket.upload = path


def _upload(context: Context) -> None:
    s = context.together_socket
    path = s.upload
    assert path is not None
    uploaded = _call(context, lambda c: c.files.upload(path, purpose="batch-api", check=False))
    assert uploaded is not None, s.error
    s.file_ids.append(uploaded.id)


@given("an emulator on a socket whose Together jobs take {seconds:g} seconds, reached through TOGETHER_BASE_URL alone")
def step_together_socket(context: Context, seconds: float) -> None:
    context.together_socket = TogetherSocket()
    context.socket_emulator = SocketEmulator("TOGETHER_BASE_URL", processing_seconds=seconds)
    set_env(world(context), "TOGETHER_API_KEY", KEY)
    context.socket_emulator.serve(world(context))


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
    s = context.together_socket
    created = _call(context, lambda c: c.batches.create(input_file_id=s.file_ids[-1], endpoint=endpoint))
    if created is not None:
        assert created.job is not None, created
        s.job_id = created.job.id


@when("the together SDK creates a job from it")
def step_together_create(context: Context) -> None:
    _create(context)
    assert context.together_socket.error is None, context.together_socket.error


@when('the together SDK creates a job from it for "{endpoint}"')
def step_together_create_endpoint(context: Context, endpoint: str) -> None:
    _create(context, endpoint)


@when('the together SDK retrieves the job "{job_id}"')
def step_together_retrieve_unknown(context: Context, job_id: str) -> None:
    _call(context, lambda c: c.batches.retrieve(job_id))


@when('the together SDK asks "{model}" for a chat completion')
def step_together_chat_unknown(context: Context, model: str) -> None:
    _call(context, lambda c: c.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}]))


@when("the together SDK cancels the job")
def step_together_cancel(context: Context) -> None:
    assert _call(context, lambda c: c.batches.cancel(context.together_socket.job_id)) is not None


@when("the together SDK deletes the input file")
def step_together_delete(context: Context) -> None:
    assert _call(context, lambda c: c.files.delete(context.together_socket.file_ids[-1])) is not None


@then('the file is listed with the purpose "{purpose}" and its name')
def step_together_listed(context: Context, purpose: str) -> None:
    s = context.together_socket
    assert s.upload is not None
    listed = _call(context, lambda c: c.files.list())
    [only] = listed.data
    assert (only.id, only.purpose, only.filename) == (s.file_ids[-1], purpose, s.upload.name), only


@then('the Together job is "{status}" at {progress:g}% progress')
def step_together_status(context: Context, status: str, progress: float) -> None:
    job = _job(context)
    assert (job.status, job.progress) == (status, progress), job


@then('the Together job is "{status}", saying "{says}"')
def step_together_failed(context: Context, status: str, says: str) -> None:
    job = _job(context)
    assert job.status == status, job
    assert says in (job.error or ""), job.error


@then('the Together job\'s output file holds an answer from "{model}" for each of its {count:d} requests')
def step_together_output(context: Context, model: str, count: int) -> None:
    job = _job(context)

    async def read(c: together.AsyncTogether) -> bytes:
        return await (await c.files.content(job.output_file_id)).read()

    lines = [json.loads(line) for line in _call(context, read).splitlines()]
    assert sorted(line["custom_id"] for line in lines) == [f"r{index}" for index in range(count)], lines
    assert {line["response"]["body"]["model"] for line in lines} == {model}, lines
    assert all(line["response"]["status_code"] == 200 for line in lines), lines


@then("both uploads name the same file, stored once")
def step_together_same_file(context: Context) -> None:
    s = context.together_socket
    first, second = s.file_ids[-2:]
    assert first == second, s.file_ids
    listed = _call(context, lambda c: c.files.list())
    assert [item.id for item in listed.data if item.purpose == "batch-api"] == [first], listed


@then("the together SDK lists {count:d} job")
@then("the together SDK lists {count:d} jobs")
def step_together_lists(context: Context, count: int) -> None:
    listed = _call(context, lambda c: c.batches.list())
    assert len(listed) == count, listed


@then('the together SDK lists no file of purpose "{purpose}"')
def step_together_no_files(context: Context, purpose: str) -> None:
    listed = _call(context, lambda c: c.files.list())
    assert purpose not in [item.purpose for item in listed.data], listed


@then("the emulator's stats count {jobs:d} Together job created, with {ids:d} custom ids")
def step_together_stats(context: Context, jobs: int, ids: int) -> None:
    stats = httpx.get(f"{context.socket_emulator.url}/_emulator/stats", timeout=30).json()
    assert stats["together_created_batches"] == jobs, stats
    assert len(stats["together_created_custom_ids"]) == ids, stats


@then('the together SDK raised a {error:w} with status {status:d}, its error body saying "{says}"')
def step_together_raised(context: Context, error: str, status: int, says: str) -> None:
    raised = context.together_socket.error
    assert isinstance(raised, getattr(together, error)), raised
    assert isinstance(raised, together.APIStatusError)
    assert raised.status_code == status, raised.status_code
    body = raised.body if isinstance(raised.body, dict) else {}
    detail = body.get("error", body)
    assert set(detail) >= {"message", "type"}, body
    assert says in str(detail), body


@then("the OpenAI SDK at the same address lists no batch and no file")
def step_together_openai_apart(context: Context) -> None:
    url = context.socket_emulator.url

    async def listing() -> tuple[list[Any], list[Any]]:
        async with openai.AsyncOpenAI(api_key=KEY, base_url=f"{url}/v1", max_retries=0) as client:
            return [batch async for batch in client.batches.list()], [item async for item in client.files.list()]

    assert world(context).run(listing()) == ([], [])
    assert context.socket_emulator.emu.emulation(TogetherEmulation).created_batches == 1
