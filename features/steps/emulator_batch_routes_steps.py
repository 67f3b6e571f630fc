"""Steps for the emulator's own batch routes of xAI and Fireworks (features/emulator_xai_batches.feature,
features/emulator_fireworks_batches.feature): raw HTTP to an in-process emulator whose state file is the scenario's,
and its batches, datasets and jobs read back through the same routes."""

from __future__ import annotations

import json
from typing import Any, Protocol

import httpx2
from _support import World, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator import Emulator

_HEADERS = {"authorization": "Bearer xai-emulated-key", "content-type": "application/json"}


class Context(StepContext, Protocol):
    xai_batches: dict[str, str]
    xai_last: str
    xai_answer: httpx2.Response


def _start(w: World) -> None:
    w.emulator = Emulator(clock=w.clock, processing_seconds=600, state_file=w.path("emulator-state.json"))


def _send(
    context: Context, method: str, path: str, body: Any = None, *, upload: tuple[str, bytes] | None = None
) -> httpx2.Response:
    """`body` as JSON, or `upload` (a file's name and bytes) as a multipart form's "file"."""
    w = world(context)
    path = path.replace("<batch>", context.xai_last)
    content = None if body is None else json.dumps(body).encode()

    async def call() -> httpx2.Response:
        async with w.emu.http_client() as http:
            if upload is not None:
                headers = {"authorization": _HEADERS["authorization"]}
                response = await http.request(method, path, headers=headers, files={"file": upload})
            else:
                response = await http.request(method, path, headers=_HEADERS, content=content)
            await response.aread()
            return response

    return w.run(call())


def _shown(context: Context, name: str) -> dict[str, Any]:
    answer = _send(context, "GET", f"/xai/v1/batches/{context.xai_batches[name]}")
    assert answer.status_code == 200, answer.text
    shown: dict[str, Any] = answer.json()
    assert shown["name"] == name, shown
    return shown


@given("an emulator of xAI's batches taking 600 seconds, keeping its state in a file")
def step_xai_emulator(context: Context) -> None:
    _start(world(context))
    context.xai_batches = {}
    context.xai_last = "none"


@given('an xAI batch "{name}" holding the request "{request_id}"')
def step_xai_batch(context: Context, name: str, request_id: str) -> None:
    made = _send(context, "POST", "/xai/v1/batches", {"name": name})
    assert made.status_code == 200, made.text
    context.xai_last = context.xai_batches[name] = made.json()["batch_id"]
    chat = {"model": "grok-3-mini", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 16}
    body = {"batch_requests": [{"batch_request_id": request_id, "batch_request": {"chat_get_completion": chat}}]}
    added = _send(context, "POST", "/xai/v1/batches/<batch>/requests", body)
    assert added.status_code == 200, added.text


@when('the xAI emulator is sent {method:w} "{path}" with the body {body}')
def step_xai_send(context: Context, method: str, path: str, body: str) -> None:
    context.xai_answer = _send(context, method, path, None if body == "-" else json.loads(body))


@when("a new xAI emulator starts on the same state file")
def step_xai_restart(context: Context) -> None:
    _start(world(context))


@then('the xAI emulator answered {status:d} with the message "{message}"')
def step_xai_answered(context: Context, status: int, message: str) -> None:
    answer = context.xai_answer
    assert answer.status_code == status, (answer.status_code, answer.text)
    error = answer.json()["error"]
    assert error["message"] == message.replace("<batch>", context.xai_last), error


@then('the xAI batch "{name}" still holds the requests "{request_ids}"')
def step_xai_holds(context: Context, name: str, request_ids: str) -> None:
    shown = _shown(context, name)
    listed = _send(context, "GET", f"/xai/v1/batches/{context.xai_batches[name]}/requests")
    assert listed.status_code == 200, listed.text
    held = [item["batch_request_id"] for item in listed.json()["batch_request_metadata"]]
    assert held == request_ids.split(", "), held
    assert shown["state"]["num_requests"] == len(held), shown


@then('the xAI batch "{name}" shows a cancel time and {count:d} request cancelled')
def step_xai_cancelled(context: Context, name: str, count: int) -> None:
    shown = _shown(context, name)
    assert shown["cancel_time"] is not None, shown
    assert shown["state"]["num_cancelled"] == count, shown


# -- Fireworks: datasets and batch inference jobs --------------------------------------------------------------------

_ACCOUNT = "/fireworks/v1/accounts/acme"
_ROW = {"custom_id": "row-1", "body": {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 16}}


@given("an emulator of Fireworks' datasets and jobs taking 600 seconds, keeping its state in a file")
def step_fireworks_emulator(context: Context) -> None:
    _start(world(context))
    context.xai_batches = {}
    context.xai_last = "none"


@given('the Fireworks dataset "{dataset_id}" uploaded with {rows:d} rows and a blank line')
def step_fireworks_dataset(context: Context, dataset_id: str, rows: int) -> None:
    made = _send(context, "POST", f"{_ACCOUNT}/datasets", {"datasetId": dataset_id, "dataset": {}})
    assert made.status_code == 200, made.text
    lines = [json.dumps({**_ROW, "custom_id": f"row-{n}"}) for n in range(1, rows + 1)]
    content = ("\n".join([*lines[:1], "", *lines[1:]]) + "\n").encode()
    loaded = _send(context, "POST", f"{_ACCOUNT}/datasets/{dataset_id}:upload", upload=("rows.jsonl", content))
    assert loaded.status_code == 200, loaded.text


@given('the Fireworks dataset "{dataset_id}" created with nothing uploaded')
def step_fireworks_empty(context: Context, dataset_id: str) -> None:
    made = _send(context, "POST", f"{_ACCOUNT}/datasets", {"datasetId": dataset_id})
    assert made.status_code == 200, made.text


@when('the Fireworks emulator is sent {method:w} "{path}" with the body {body}')
def step_fireworks_send(context: Context, method: str, path: str, body: str) -> None:
    context.xai_answer = _send(context, method, _ACCOUNT + path, None if body == "-" else json.loads(body))


@when('the Fireworks dataset "{dataset_id}" is uploaded to again')
def step_fireworks_upload_again(context: Context, dataset_id: str) -> None:
    upload = ("again.jsonl", json.dumps(_ROW).encode())
    context.xai_answer = _send(context, "POST", f"{_ACCOUNT}/datasets/{dataset_id}:upload", upload=upload)


@when("a new Fireworks emulator starts on the same state file")
def step_fireworks_restart(context: Context) -> None:
    _start(world(context))


@then('the Fireworks emulator answered {status:d} with the message "{message}"')
def step_fireworks_answered(context: Context, status: int, message: str) -> None:
    step_xai_answered(context, status, message)


@then('the Fireworks job "{job_id}" is {state:w}, of {total:d} requests, {failed:d} failed')
def step_fireworks_job(context: Context, job_id: str, state: str, total: int, failed: int) -> None:
    shown = _send(context, "GET", f"{_ACCOUNT}/batchInferenceJobs/{job_id}")
    assert shown.status_code == 200, shown.text
    job = shown.json()
    assert job["state"] == state, job
    assert job["jobProgress"]["totalInputRequests"] == total, job
    assert job["jobProgress"]["failedRequests"] == failed, job
    assert job["status"] == {"code": "OK", "message": ""}, job


@then('the Fireworks dataset "{dataset_id}" is {state:w} with {rows:d} rows')
def step_fireworks_dataset_state(context: Context, dataset_id: str, state: str, rows: int) -> None:
    shown = _send(context, "GET", f"{_ACCOUNT}/datasets/{dataset_id}")
    assert shown.status_code == 200, shown.text
    dataset = shown.json()
    assert (dataset["state"], dataset["exampleCount"]) == (state, str(rows)), dataset


@when("{seconds:d} seconds pass on the Fireworks emulator's clock")
def step_fireworks_time(context: Context, seconds: int) -> None:
    world(context).clock.advance(seconds)
