"""Steps for features/emulator_mistral.feature: the emulator's Mistral API on a loopback socket, called by the
mistralai SDK's synchronous client (as a program would), the jobs moving on the scenario's manual clock."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2
import openai
from _support import names, world
from mistralai.client import Mistral, errors, models
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator import Emulator
from lowtide.emulator.server import serve_in_thread

KEY = "mistral-socket-scenario-key"
MODEL = "mistral-small-latest"
INTENT = {"lowtide_intent": "lt_feedfacefeedfacefeedfacefeedface"}


@dataclass
class _Socket:
    emulator: Emulator
    url: str = ""
    client: Mistral | None = None
    job_id: str = ""
    input_file: str = ""
    state_file: str | None = None
    stops: list[Any] = field(default_factory=list[Any])

    @property
    def sdk(self) -> Mistral:
        assert self.client is not None
        return self.client


class Context(StepContext, Protocol):
    msock: _Socket


def _serve(context: Context, emulator: Emulator) -> None:
    s = context.msock
    for stop in s.stops:
        stop()
    s.stops.clear()
    s.emulator = emulator
    serving = serve_in_thread(emulator)
    server = serving.__enter__()
    s.stops.append(lambda: serving.__exit__(None, None, None))
    s.url = server.url
    s.client = Mistral(api_key=KEY, server_url=server.url)
    world(context).cleanups.append(lambda: [stop() for stop in s.stops])


@given("the emulator serves Mistral's API on a socket, its jobs taking {seconds:d} seconds")
def step_serve(context: Context, seconds: int) -> None:
    w = world(context)
    context.msock = _Socket(Emulator(clock=w.clock, processing_seconds=seconds))
    _serve(context, context.msock.emulator)


@given("the emulator's cancellations take {seconds:d} seconds")
def step_cancel_seconds(context: Context, seconds: int) -> None:
    context.msock.emulator.cancel_seconds = seconds


@given("the emulator's jobs take {seconds:d} seconds")
def step_job_seconds(context: Context, seconds: int) -> None:
    context.msock.emulator.processing_seconds = seconds


@given("the Mistral emulator keeps its state in a file")
def step_state_file(context: Context) -> None:
    w = world(context)
    s = context.msock
    s.state_file = str(w.path("mistral-state.json"))
    _serve(context, Emulator(clock=w.clock, processing_seconds=100, state_file=s.state_file))


@when("the emulator is started again on its state file")
def step_restart(context: Context) -> None:
    s = context.msock
    _serve(context, Emulator(clock=world(context).clock, processing_seconds=100, state_file=s.state_file))


@given('the emulator drops the answer of the next "{route}"')
def step_drop(context: Context, route: str) -> None:
    context.msock.emulator.faults.drop_after_commit(route)


@given('the emulator fails the next "{route}" with status {status:d}, asking to wait {seconds:d} seconds')
def step_fail_wait(context: Context, route: str, status: int, seconds: int) -> None:
    context.msock.emulator.faults.fail_next(route, status, retry_after=seconds)


@given('the emulator fails the next "{route}" with status {status:d}')
def step_fail(context: Context, route: str, status: int) -> None:
    context.msock.emulator.faults.fail_next(route, status)


@when("{seconds:d} seconds pass on the Mistral emulator's clock")
def step_advance(context: Context, seconds: int) -> None:
    world(context).clock.advance(seconds)


def _line(custom_id: str, model: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": f"Question {custom_id}"}], "max_tokens": 32}
    if model is not None:
        body["model"] = model
    return {"custom_id": custom_id, "body": body}


def _upload(s: _Socket, content: bytes) -> None:
    uploaded = s.sdk.files.upload(file={"file_name": "input.jsonl", "content": content}, purpose="batch")
    s.input_file = uploaded.id
    job = s.sdk.batch.jobs.create(
        endpoint="/v1/chat/completions", model=MODEL, input_files=[uploaded.id], metadata=INTENT
    )
    s.job_id = job.id


@when('the Mistral program uploads a batch file of the requests "{ids}" and creates a job from it')
def step_upload_job(context: Context, ids: str) -> None:
    content = "".join(json.dumps(_line(custom_id)) + "\n" for custom_id in names(ids)).encode()
    _upload(context.msock, content)


@when("the Mistral program uploads a batch file holding a line that is not a request and creates a job from it")
def step_upload_bad(context: Context) -> None:
    _upload(context.msock, (json.dumps(_line("alpha")) + "\n{not a request\n").encode())


def _inline(context: Context, ids: str, *, refused: str = "", hours: int = 24) -> models.BatchJob:
    requests = [
        models.BatchRequest.model_validate(_line(custom_id, "mistral-nope" if custom_id == refused else None))
        for custom_id in names(ids)
    ]
    return context.msock.sdk.batch.jobs.create(
        endpoint="/v1/chat/completions", model=MODEL, requests=requests, metadata=INTENT, timeout_hours=hours
    )


@when('the Mistral program creates an inline job of the requests "{ids}" where "{refused}" names no model')
def step_inline(context: Context, ids: str, refused: str) -> None:
    context.msock.job_id = _inline(context, ids, refused=refused).id


@when('the Mistral program creates an inline job of the requests "{ids}" asked to end within {hours:d} hour')
def step_inline_hours(context: Context, ids: str, hours: int) -> None:
    context.msock.job_id = _inline(context, ids, hours=hours).id


@when('the Mistral program creates an inline job of the requests "{ids}" and loses the answer')
def step_inline_lost(context: Context, ids: str) -> None:
    try:
        _inline(context, ids)
    except (httpx2.TransportError, errors.NoResponseError):
        return
    raise AssertionError("the create was answered")


@when("the Mistral program cancels the job")
def step_cancel(context: Context) -> None:
    s = context.msock
    s.sdk.batch.jobs.cancel(job_id=s.job_id)


@when("the Mistral program deletes its input file")
def step_delete_input(context: Context) -> None:
    s = context.msock
    assert s.sdk.files.delete(file_id=s.input_file).deleted


@then('the Mistral job is "{status}" with {done:d} of {total:d} requests done')
def step_job(context: Context, status: str, done: int, total: int) -> None:
    s = context.msock
    job = s.sdk.batch.jobs.get(job_id=s.job_id)
    assert job.status == status, job
    assert (job.completed_requests, job.total_requests) == (done, total), job


@then("the Mistral job list filtered by its metadata holds that job alone")
def step_listed_alone(context: Context) -> None:
    s = context.msock
    listed = s.sdk.batch.jobs.list(metadata=INTENT)
    assert [job.id for job in listed.data or []] == [s.job_id], listed
    assert not s.sdk.batch.jobs.list(metadata={"lowtide_intent": "lt_other"}).data


@then("the Mistral job list filtered by its metadata holds {count:d} job")
def step_listed(context: Context, count: int) -> None:
    listed = context.msock.sdk.batch.jobs.list(metadata=INTENT)
    assert listed.total == count, listed


def _file_lines(s: _Socket, which: str) -> list[dict[str, Any]]:
    job = s.sdk.batch.jobs.get(job_id=s.job_id)
    file_id = job.output_file if which == "output" else job.error_file
    assert isinstance(file_id, str), job
    return [json.loads(line) for line in s.sdk.files.download(file_id=file_id).read().splitlines()]


@then('the Mistral job\'s output file answers "{ids}", each joined by its custom_id')
def step_output(context: Context, ids: str) -> None:
    lines = _file_lines(context.msock, "output")
    by_id = {line["custom_id"]: line for line in lines}
    assert sorted(by_id) == sorted(names(ids)), by_id
    for custom_id, line in by_id.items():
        assert line["response"]["status_code"] == 200, line
        assert f"Question {custom_id}" in line["response"]["body"]["choices"][0]["message"]["content"], line


@then('the Mistral job\'s error file says "{custom_id}" was refused with status {status:d}')
def step_error_file(context: Context, custom_id: str, status: int) -> None:
    [line] = _file_lines(context.msock, "error")
    assert line["custom_id"] == custom_id, line
    assert line["response"]["status_code"] == status, line
    assert line["response"]["body"]["object"] == "error", line


@then("the Mistral program's file list holds the output file alone")
def step_files(context: Context) -> None:
    s = context.msock
    job = s.sdk.batch.jobs.get(job_id=s.job_id)
    listed = s.sdk.files.list()
    assert [file.id for file in listed.data] == [job.output_file], listed


def _refusal(call: Callable[[], object]) -> errors.MistralError:
    """The SDK's error for `call`, which must be refused."""
    try:
        call()
    except errors.MistralError as error:
        return error
    raise AssertionError("the call was answered")


@then("cancelling the Mistral job again is refused with status {status:d}")
def step_cancel_refused(context: Context, status: int) -> None:
    s = context.msock
    error = _refusal(lambda: s.sdk.batch.jobs.cancel(job_id=s.job_id))
    assert error.status_code == status, error


@then('the Mistral job\'s errors mention "{text}"')
def step_job_errors(context: Context, text: str) -> None:
    s = context.msock
    job = s.sdk.batch.jobs.get(job_id=s.job_id)
    assert any(text in error.message for error in job.errors), job.errors


@then("a Mistral call without a key is answered {status:d} with the body {body}")
def step_no_key(context: Context, status: int, body: str) -> None:
    s = context.msock
    answer = httpx2.get(f"{s.url}/v1/batch/jobs", headers={"user-agent": "mistral-client-python/3.7.0"})
    assert answer.status_code == status, answer
    expected = json.loads(body)
    assert {name: answer.json()[name] for name in expected} == expected, answer.json()


@then('getting the Mistral job "{job_id}" is answered {status:d}')
def step_unknown_job(context: Context, job_id: str, status: int) -> None:
    error = _refusal(lambda: context.msock.sdk.batch.jobs.get(job_id=job_id))
    assert error.status_code == status, error
    assert json.loads(error.body)["object"] == "error", error.body


def _chat(s: _Socket, model: str = MODEL) -> errors.MistralError:
    return _refusal(
        lambda: s.sdk.chat.complete(model=model, messages=[{"role": "user", "content": "Hello"}], max_tokens=16)
    )


@then('a Mistral chat naming the model "{model}" is answered {status:d} saying "{text}"')
def step_chat_model(context: Context, model: str, status: int, text: str) -> None:
    error = _chat(context.msock, model)
    assert error.status_code == status, error
    assert json.loads(error.body)["message"] == text, error.body


@then('a Mistral chat is answered {status:d} with retry-after "{wait}"')
def step_chat_429(context: Context, status: int, wait: str) -> None:
    error = _chat(context.msock)
    assert error.status_code == status, error
    assert error.headers.get("retry-after") == wait, error.headers


@then("listing the Mistral jobs is answered {status:d}")
def step_list_fails(context: Context, status: int) -> None:
    error = _refusal(lambda: context.msock.sdk.batch.jobs.list())
    assert error.status_code == status, error


@then("the mistralai SDK lists Mistral's models on the emulator")
def step_models(context: Context) -> None:
    listed = context.msock.sdk.models.list()
    ids = [card.id for card in listed.data or [] if isinstance(card, models.BaseModelCard)]
    assert "mistral-small-2503" in ids, ids


@then("the OpenAI SDK still lists the OpenAI models on the same emulator port")
def step_openai_models(context: Context) -> None:
    client = openai.OpenAI(api_key="sk-openai", base_url=f"{context.msock.url}/v1", max_retries=0)
    ids = [model.id for model in client.models.list()]
    assert ids, ids
    assert not any(name.startswith("mistral") for name in ids), ids


@then('the emulator\'s stats count {count:d} Mistral job created holding "{custom_id}" once')
def step_stats(context: Context, count: int, custom_id: str) -> None:
    stats = httpx2.get(f"{context.msock.url}/_emulator/stats").json()
    assert stats["mistral_created_batches"] == count, stats
    assert stats["mistral_created_custom_ids"] == {custom_id: 1}, stats
