"""Steps for features/emulator_mistral.feature: the emulator's Mistral API on a loopback socket, called by the
mistralai SDK's synchronous client (as a program would), the jobs moving on the scenario's manual clock."""

from __future__ import annotations

import datetime
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

from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator, RateLimits
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
    labels: dict[str, str] = field(default_factory=dict[str, str])
    created: dict[str, float] = field(default_factory=dict[str, float])
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


_BAD_FILES = {
    "a line that is not a request": (json.dumps(_line("alpha")) + "\n{not a request\n").encode(),
    "blank lines alone": b"\n  \n",
    "one custom_id twice": (json.dumps(_line("alpha")) + "\n\n" + json.dumps(_line("alpha")) + "\n").encode(),
}


@when("the Mistral program uploads a batch file holding {what} and creates a job from it")
def step_upload_bad(context: Context, what: str) -> None:
    _upload(context.msock, _BAD_FILES[what])


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


# -- requests Mistral's API refuses ----------------------------------------------------------------------------------

_USER = [{"role": "user", "content": "Hello"}]
RAW_TIMEOUT = 120.0
_AGENT = {"user-agent": "mistral-client-python/1.9.0"}
_ONE = [{"custom_id": "a", "body": {"messages": _USER, "max_tokens": 8}}]


def _raw(s: _Socket, method: str, path: str, body: object = None, *, text: str | None = None) -> httpx2.Response:
    """A request the SDK cannot be made to send (a body of the wrong shape, a query it would not write), sent with
    the SDK's user-agent and key over the same socket. Waited for as long as a hang takes, not httpx's 5 s: the job
    of 100,001 requests (5 MB) is read and refused in about a second, but took over 5 s under coverage at a load
    average of 27, and the scenario failed on a read timeout."""
    content = text.encode() if text is not None else json.dumps(body).encode() if body is not None else None
    headers = {**_AGENT, "authorization": f"Bearer {KEY}", "content-type": "application/json"}
    return httpx2.request(method, f"{s.url}{path}", headers=headers, content=content, timeout=RAW_TIMEOUT)


def _sdk_calls(s: _Socket) -> dict[str, Callable[[], object]]:
    sdk = s.sdk
    # Typed loosely: these calls send what the SDK's types would refuse, as a program's untyped code can.
    chat: Any = sdk.chat.complete
    jobs: Any = sdk.batch.jobs
    upload: Any = sdk.files.upload
    url = "/v1/chat/completions"

    def job(**fields: Any) -> object:
        return jobs.create(**{"endpoint": url, "model": MODEL, **fields})

    return {
        "a plain chat": lambda: chat(model=MODEL, messages=_USER),
        "a chat at temperature 2": lambda: chat(model=MODEL, messages=_USER, temperature=2),
        "a chat with max_tokens -1": lambda: chat(model=MODEL, messages=_USER, max_tokens=-1),
        "a chat of no message": lambda: chat(model=MODEL, messages=[]),
        "a chat choosing tools 'sometimes'": lambda: chat(model=MODEL, messages=_USER, tool_choice="sometimes"),
        "a chat declaring a nameless tool": lambda: chat(
            model=MODEL, messages=_USER, tools=[{"type": "function", "function": {"name": "", "parameters": {}}}]
        ),
        "a chat asking for a JSON schema it does not give": lambda: chat(
            model=MODEL, messages=_USER, response_format={"type": "json_schema", "json_schema": {"name": "Voyage"}}
        ),
        "a chat sending an audio chunk": lambda: chat(
            model=MODEL, messages=[{"role": "user", "content": [{"type": "input_audio", "input_audio": "AAAA"}]}]
        ),
        "a chat replaying a tool call whose arguments are not JSON": lambda: chat(
            model=MODEL,
            messages=[
                *_USER,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "abcdefghi", "function": {"name": "record_tide", "arguments": "{not json"}}],
                },
                {"role": "tool", "tool_call_id": "abcdefghi", "content": "recorded"},
            ],
        ),
        "a chat longer than the model's window": lambda: chat(
            model=MODEL, messages=[{"role": "user", "content": "tide " * 120_000}]
        ),
        "an upload for no known purpose": lambda: upload(
            file={"file_name": "input.jsonl", "content": b"{}"}, purpose="nonsense"
        ),
        "a job of the embeddings endpoint": lambda: jobs.create(endpoint="/v1/embeddings", model=MODEL, requests=_ONE),
        "a job of 500 hours": lambda: job(requests=_ONE, timeout_hours=500),
        "a job of both files and requests": lambda: job(requests=_ONE, input_files=["file-1"]),
        "a job of neither files nor requests": lambda: job(),
        "a job of an empty file list": lambda: job(input_files=[]),
        "a job of a file never uploaded": lambda: job(input_files=["file-never"]),
        "a job of no request": lambda: job(requests=[]),
        "deleting a job that does not exist": lambda: jobs.delete(job_id="no-such-job"),
        "an upload of 100 KB": lambda: upload(
            file={"file_name": "input.jsonl", "content": b"x" * 100_000}, purpose="batch"
        ),
        "a job of 100 inline requests": lambda: job(requests=_ONE * 100),
    }


def _raw_calls(s: _Socket) -> dict[str, Callable[[], httpx2.Response]]:
    chat = "/v1/chat/completions"
    return {
        "a chat whose body is a list": lambda: _raw(s, "POST", chat, [_USER]),
        "a chat with a field Mistral has not": lambda: _raw(
            s, "POST", chat, {"model": MODEL, "messages": _USER, "logit_bias": {}}
        ),
        "a chat whose message is a string": lambda: _raw(s, "POST", chat, {"model": MODEL, "messages": ["Hello"]}),
        "a chat from the narrator": lambda: _raw(
            s, "POST", chat, {"model": MODEL, "messages": [{"role": "narrator", "content": "Once"}]}
        ),
        "a chat whose content is a number": lambda: _raw(
            s, "POST", chat, {"model": MODEL, "messages": [{"role": "user", "content": 5}]}
        ),
        "a job whose body is a list": lambda: _raw(s, "POST", "/v1/batch/jobs", [_ONE]),
        "a job whose body is not JSON": lambda: _raw(s, "POST", "/v1/batch/jobs", text="{not json"),
        "a job with a field Mistral has not": lambda: _raw(
            s, "POST", "/v1/batch/jobs", {"endpoint": "/v1/chat/completions", "requests": _ONE, "priority": 1}
        ),
        "a job whose request has no body": lambda: _raw(
            s,
            "POST",
            "/v1/batch/jobs",
            {"endpoint": "/v1/chat/completions", "model": MODEL, "requests": [{"custom_id": "a"}]},
        ),
        "a job whose metadata is not text": lambda: _raw(
            s,
            "POST",
            "/v1/batch/jobs",
            {"endpoint": "/v1/chat/completions", "model": MODEL, "requests": _ONE, "metadata": {"attempt": 2}},
        ),
        "a job list filtered by metadata that is not JSON": lambda: _raw(s, "GET", "/v1/batch/jobs?metadata=tide"),
        "a job list filtered by metadata that is a list": lambda: _raw(s, "GET", "/v1/batch/jobs?metadata=[1]"),
        "a job of 100,001 requests": lambda: _raw(
            s,
            "POST",
            "/v1/batch/jobs",
            {
                "endpoint": "/v1/chat/completions",
                "model": MODEL,
                "requests": [{"custom_id": str(n), "body": {}} for n in range(100_001)],
            },
        ),
        "a job list since no date": lambda: _raw(s, "GET", "/v1/batch/jobs?created_after=yesterday"),
        "a file list of page 'two'": lambda: _raw(s, "GET", "/v1/files?page=two"),
        "an upload of no file": lambda: httpx2.post(
            f"{s.url}/v1/files", headers={**_AGENT, "authorization": f"Bearer {KEY}"}, data={"purpose": "batch"}
        ),
        "a PUT to the job list": lambda: _raw(s, "PUT", "/v1/batch/jobs", {}),
        "a GET of a path Mistral has not": lambda: _raw(s, "GET", "/v1/batch/tides"),
    }


@then('the Mistral program\'s call "{call}" is refused with status {status:d} saying "{says}"')
def step_refused(context: Context, call: str, status: int, says: str) -> None:
    """The refusal in Mistral's shape: a 422's `detail` (its place in the body, and why), else the error object with
    its message and type; the SDK's own error when the SDK made the call."""
    s = context.msock
    sdk_calls = _sdk_calls(s)
    if call in sdk_calls:
        error = _refusal(sdk_calls[call])
        got, text = error.status_code, error.body
    else:
        response = _raw_calls(s)[call]()
        got, text = response.status_code, response.text
    assert got == status, (got, text)
    body = json.loads(text)
    if status == 422:
        [detail] = body["detail"]
        assert detail["loc"][0] == "body", detail
        said = ".".join(str(part) for part in detail["loc"]) + ": " + detail["msg"]
    else:
        assert body["object"] == "error", body
        assert isinstance(body["type"], str), body
        said = body["message"]
    assert says in said, said


# -- listing, deleting, limits ---------------------------------------------------------------------------------------


@given(
    "the emulator serves Mistral's API on a socket, taking files of at most {file_bytes:d} bytes"
    " and job bodies of at most {job_bytes:d}"
)
def step_serve_small(context: Context, file_bytes: int, job_bytes: int) -> None:
    w = world(context)
    emulator = Emulator(clock=w.clock, processing_seconds=100, max_file_bytes=file_bytes, max_batch_bytes=job_bytes)
    context.msock = _Socket(emulator)
    _serve(context, emulator)


@given("the emulator serves Mistral's API on a socket, allowing {count:d} chat per minute per key")
def step_serve_limited(context: Context, count: int) -> None:
    w = world(context)
    emulator = Emulator(clock=w.clock, rate_limits=RateLimits(rpm=count))
    context.msock = _Socket(emulator)
    _serve(context, emulator)


@when(
    'the Mistral program creates the inline job "{label}" of the request "{custom_id}" for the model "{model}",'
    " with no metadata"
)
def step_labelled_job(context: Context, label: str, custom_id: str, model: str) -> None:
    s = context.msock
    job = s.sdk.batch.jobs.create(
        endpoint="/v1/chat/completions", model=model, requests=[models.BatchRequest.model_validate(_line(custom_id))]
    )
    assert job.metadata is None, job.metadata
    s.labels[label] = job.id
    s.job_id = job.id
    s.created[label] = world(context).clock.now()


def _listed(s: _Socket, spec: dict[str, Any]) -> list[str]:
    """The ids a job list with the filters of `spec` holds: through the SDK, or (`naive_after`: a date with no time
    zone, which the SDK never writes) raw."""
    metadata = spec.pop("metadata_json", None)
    if metadata is not None:
        response = _raw(s, "GET", f"/v1/batch/jobs?metadata={json.dumps(metadata)}")
        assert response.status_code == 200, response.text
        return [job["id"] for job in response.json()["data"]]
    naive = spec.pop("naive_after", None)
    if naive is not None:
        moment = datetime.datetime.fromtimestamp(s.created[naive] + 1, tz=datetime.UTC).replace(tzinfo=None)
        response = _raw(s, "GET", f"/v1/batch/jobs?created_after={moment.isoformat()}")
        assert response.status_code == 200, response.text
        return [job["id"] for job in response.json()["data"]]
    after = spec.pop("after", None)
    if after is not None:
        spec["created_after"] = datetime.datetime.fromtimestamp(s.created[after] + 1, tz=datetime.UTC)
    listed = s.sdk.batch.jobs.list(**spec)
    return [job.id for job in listed.data or []]


@then("the Mistral job lists hold these jobs:")
def step_lists(context: Context) -> None:
    s = context.msock
    assert context.table is not None
    by_id = {job_id: label for label, job_id in s.labels.items()}
    for row in context.table:
        spec = json.loads(row["filter"])
        shown = ", ".join(by_id.get(job_id, job_id) for job_id in _listed(s, dict(spec)))
        assert shown == row["jobs"], (row["filter"], shown)


@when('the Mistral program deletes the job "{label}"')
def step_delete_job(context: Context, label: str) -> None:
    s = context.msock
    deleted = s.sdk.batch.jobs.delete(job_id=s.labels[label])
    assert deleted.deleted, deleted
    error = _refusal(lambda: s.sdk.batch.jobs.get(job_id=s.labels[label]))
    assert error.status_code == 404, error


@when("the Mistral program creates an inline job whose requests say:")
def step_inline_said(context: Context) -> None:
    s = context.msock
    assert context.table is not None
    requests = []
    for row in context.table:
        line = _line(row["custom_id"])
        line["body"]["messages"][0]["content"] = row["text"]
        if row["streams"] == "yes":
            line["body"]["stream"] = True
        requests.append(models.BatchRequest.model_validate(line))
    s.job_id = s.sdk.batch.jobs.create(
        endpoint="/v1/chat/completions", model=MODEL, requests=requests, metadata=INTENT
    ).id


@then("the Mistral job's error file holds these lines:")
def step_error_lines(context: Context) -> None:
    lines = {line["custom_id"]: line for line in _file_lines(context.msock, "error")}
    assert context.table is not None
    expected = {row["custom_id"]: row["says"] for row in context.table}
    said: dict[str, str] = {}
    for custom_id, line in lines.items():
        if line["error"] is not None:
            assert line["response"] is None, line
            said[custom_id] = f"error {line['error']['code']}: {line['error']['message']}"
        else:
            response = line["response"]
            said[custom_id] = f"status {response['status_code']}: {response['body']['message']}"
    assert said == expected, said


@then("a Mistral chat is answered")
def step_chat_answered(context: Context) -> None:
    answer = context.msock.sdk.chat.complete(
        model=MODEL, messages=[{"role": "user", "content": "Hello"}], max_tokens=16
    )
    message = answer.choices[0].message
    assert message is not None, answer
    assert message.content, answer


class _StoppedClock(ManualClock):
    def now(self) -> float:
        raise RuntimeError("the clock stopped")


@given("the emulator serves Mistral's API on a socket, on a clock that has stopped working")
def step_serve_broken(context: Context) -> None:
    emulator = Emulator(clock=_StoppedClock())
    context.msock = _Socket(emulator)
    _serve(context, emulator)
