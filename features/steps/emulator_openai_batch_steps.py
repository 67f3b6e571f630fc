"""Steps of features/emulator_openai.feature about Files, Batches, faults, the admin routes and the state file,
driven through the official openai SDK (in process, or over a socket). Step texts name "the OpenAI emulator"."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, cast

import _support  # noqa: F401  (registers the Q type of quoted step text)
import httpx2
import openai
from _openai_support import (
    MODEL,
    OpenAIScenario,
    connect,
    jsonl,
    png,
    raw_call,
    request_line,
    scenario,
    start,
    strict,
    when,
)
from openai.types import Batch, CreateEmbeddingResponse, FileDeleted, FileObject
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from step_context import Context, given, then
from step_context import when as step_when

from lowtide.emulator import Emulator, serve_in_thread
from lowtide.emulator.core.pdf import simple_pdf

BODY_TYPES: dict[str, Any] = {
    "Response": Response,
    "ChatCompletion": ChatCompletion,
    "embedding list": CreateEmbeddingResponse,
}


# -- files -----------------------------------------------------------------------------------------------------------


def upload(s: OpenAIScenario, name: str, content: bytes, purpose: str, **extra: Any) -> FileObject | None:
    chosen: Any = purpose
    created = s.run(lambda: s.sdk.files.create(file=(name, content), purpose=chosen, **extra))
    if created is not None:
        s.files[name] = strict(created).id
    return created


@step_when('I upload "{name:Q}" holding "{text:Q}" to the OpenAI emulator for "{purpose:Q}"')
def step_upload(context: Context, name: str, text: str, purpose: str) -> None:
    upload(scenario(context), name, text.encode(), purpose)


@step_when('I upload "{name:Q}" holding "{text:Q}" to the OpenAI emulator for "{purpose:Q}" in one declared body')
def step_upload_declared(context: Context, name: str, text: str, purpose: str) -> None:
    s = scenario(context)
    boundary = "lowtide-boundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n{purpose}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n{text * 2000}\r\n'
        f"--{boundary}--\r\n"
    ).encode()
    headers = {"authorization": "Bearer key", "content-type": f"multipart/form-data; boundary={boundary}"}
    raw_call(s, "POST", "/v1/files", headers=headers, content=body)


@step_when('I upload "{name:Q}" to the OpenAI emulator with the fields {fields}')
def step_upload_fields(context: Context, name: str, fields: str) -> None:
    s = scenario(context)
    data = json.loads(fields)
    files = {"file": (name, b"{}")} if name != "-" else None
    created = s.run(lambda: s.sdk.post("/files", cast_to=FileObject, body=data, files=files or {"x": ("x", b"")},
                                       options={"headers": {"Content-Type": "multipart/form-data"}}))  # fmt: skip
    if created is not None:
        s.files[name] = created.id


@given('the OpenAI emulator holds the upload "{name:Q}" for "{purpose:Q}" holding a {width:d}x{height:d} PNG image')
def step_hold_png(context: Context, name: str, purpose: str, width: int, height: int) -> None:
    assert upload(scenario(context), name, png(width, height), purpose) is not None


@given('the OpenAI emulator holds the upload "{name:Q}" for "{purpose:Q}" holding a {pages:d}-page PDF')
def step_hold_pdf(context: Context, name: str, purpose: str, pages: int) -> None:
    assert upload(scenario(context), name, simple_pdf(["Tides at Brest!!"] * pages), purpose) is not None


@given('the OpenAI emulator holds the upload "{name:Q}" for "{purpose:Q}" holding {count:d} request to "{endpoint:Q}"')
def step_hold_requests(context: Context, name: str, purpose: str, count: int, endpoint: str) -> None:
    lines = [request_line(f"r{index}", endpoint, index) for index in range(count)]
    assert upload(scenario(context), name, jsonl(lines), purpose) is not None


@given("the OpenAI emulator takes files of at most {size:d} bytes")
def step_file_limit(context: Context, size: int) -> None:
    scenario(context).emu.openai.limits.max_file_bytes = size


@given("the OpenAI emulator takes batch input files of at most {size:d} bytes")
def step_input_limit(context: Context, size: int) -> None:
    scenario(context).emu.openai.limits.max_batch_input_bytes = size


def _file(s: OpenAIScenario, name: str) -> FileObject:
    found = s.run(lambda: s.sdk.files.retrieve(s.file_id(name)))
    assert found is not None, repr(s.error)
    return strict(found)


@then('the OpenAI emulator file "{name:Q}" is a processed "{purpose:Q}" file of {size:d} bytes that never expires')
def step_file_is(context: Context, name: str, purpose: str, size: int) -> None:
    s = scenario(context)
    found = _file(s, name)
    assert (found.filename, found.purpose, found.bytes, found.status) == (name, purpose, size, "processed"), found
    assert found.expires_at is None, found
    assert found.id.startswith("file-"), found
    assert found.object == "file", found
    assert found.created_at == int(s.clock.now()), found


@then('the OpenAI emulator file "{name:Q}" reads "{text:Q}"')
def step_file_reads(context: Context, name: str, text: str) -> None:
    s = scenario(context)
    content = s.run(lambda: s.sdk.files.content(s.file_id(name)))
    assert content is not None, content
    assert content.text == text, content


@step_when('I delete the OpenAI emulator file "{name:Q}"')
def step_delete_file(context: Context, name: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.files.delete(s.file_id(name)))


@then('the OpenAI emulator says the file "{name:Q}" was deleted')
def step_deleted(context: Context, name: str) -> None:
    s = scenario(context)
    deleted = strict(s.reply, FileDeleted)
    assert (deleted.id, deleted.deleted, deleted.object) == (s.file_id(name), True, "file"), deleted


@then('the OpenAI emulator file "{name:Q}" is not found, nor its content, nor can it be deleted again')
def step_file_gone(context: Context, name: str) -> None:
    s = scenario(context)
    file_id = s.file_id(name)
    for make in (
        lambda: s.sdk.files.retrieve(file_id),
        lambda: s.sdk.files.content(file_id),
        lambda: s.sdk.files.delete(file_id),
    ):
        s.run(make)
        assert isinstance(s.error, openai.NotFoundError), repr(s.error)
        assert f"No such File object: {file_id}" in s.error.message, s.error.message


@then('the OpenAI emulator file "{name:Q}" expires {seconds:d} seconds after its creation')
def step_file_expires(context: Context, name: str, seconds: int) -> None:
    found = _file(scenario(context), name)
    assert found.expires_at == found.created_at + seconds, found


def _listed(s: OpenAIScenario, **params: Any) -> list[str]:
    async def walk() -> list[str]:
        names: list[str] = []
        page = await s.sdk.files.list(**params)
        pages = 0
        async for current in page.iter_pages():
            pages += 1
            body = current.to_dict()
            names.extend(strict(item).filename for item in current.data)
            assert body["object"] == "list", body
            assert body["first_id"] == current.data[0].id, body
            assert body["last_id"] == current.data[-1].id, body
        s.snapshot["pages"] = pages
        return names

    names = s.run(walk)
    assert names is not None, repr(s.error)
    return names


@then('the OpenAI emulator lists the files "{names:Q}"')
def step_lists(context: Context, names: str) -> None:
    assert _listed(scenario(context)) == names.split(", ")


@then('the OpenAI emulator lists the files "{names:Q}" {size:d} at a time in {pages:d} pages')
def step_lists_pages(context: Context, names: str, size: int, pages: int) -> None:
    s = scenario(context)
    assert _listed(s, limit=size) == names.split(", ")
    assert s.snapshot["pages"] == pages, s.snapshot


@then('the OpenAI emulator lists the files "{names:Q}" {size:d} at a time, oldest first')
def step_lists_oldest(context: Context, names: str, size: int) -> None:
    assert _listed(scenario(context), limit=size, order="asc") == names.split(", ")


@then('the OpenAI emulator lists the files "{names:Q}" for "{purpose:Q}"')
def step_lists_purpose(context: Context, names: str, purpose: str) -> None:
    assert _listed(scenario(context), purpose=purpose) == names.split(", ")


@then('the OpenAI emulator lists the files "{names:Q}" after "{name:Q}"')
def step_lists_after(context: Context, names: str, name: str) -> None:
    s = scenario(context)
    assert _listed(s, after=s.file_id(name)) == names.split(", ")


@step_when("I list the OpenAI emulator files with {params}")
def step_list_bad(context: Context, params: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.files.list(**json.loads(params)))


@step_when(
    'I upload {count:d} files to the OpenAI emulator, one a second, "a.txt" to "e.txt", "c.txt" for "{special:Q}" and '
    'the others for "{purpose:Q}"'
)
def step_upload_many(context: Context, count: int, special: str, purpose: str) -> None:
    s = scenario(context)
    for letter in "abcde"[:count]:
        name = f"{letter}.txt"
        upload(s, name, letter.encode(), special if letter == "c" else purpose)
        s.clock.advance(1)


# -- batches ---------------------------------------------------------------------------------------------------------


def create_batch(s: OpenAIScenario, lines: list[Any], endpoint: str, **extra: Any) -> None:
    # `endpoint` is any the scenario names, those the API refuses too: not the SDK's Literal of valid ones.
    created = upload(s, f"batch-{len(s.batches)}.jsonl", jsonl(lines), "batch")
    assert created is not None, repr(s.error)
    batch = s.run(
        lambda: s.sdk.batches.create(
            input_file_id=created.id, endpoint=cast(Any, endpoint), completion_window="24h", **extra
        )
    )
    if batch is None:
        return
    batch = strict(batch)
    assert batch.status == "validating", batch
    assert batch.object == "batch", batch
    assert batch.id.startswith("batch_"), batch
    assert batch.input_file_id == created.id, batch
    s.batch = batch
    s.batches.append(batch.id)
    refresh(s)


def refresh(s: OpenAIScenario) -> Batch:
    found = s.run(lambda: s.sdk.batches.retrieve(s.batch.id))
    assert found is not None, repr(s.error)
    s.batch = strict(found)
    return s.batch


@step_when('I run an OpenAI emulator batch of {count:d} requests to "{endpoint:Q}"')
def step_run_batch(context: Context, count: int, endpoint: str) -> None:
    s = scenario(context)
    create_batch(s, [request_line(f"r{index}", endpoint, index) for index in range(count)], endpoint)


@step_when('I run an OpenAI emulator batch of {count:d} requests to "{endpoint:Q}" with the metadata {metadata}')
def step_run_batch_metadata(context: Context, count: int, endpoint: str, metadata: str) -> None:
    s = scenario(context)
    lines = [request_line(f"r{index}", endpoint, index) for index in range(count)]
    create_batch(s, lines, endpoint, metadata=json.loads(metadata))


@step_when(
    'I run an OpenAI emulator batch of {count:d} requests to "{endpoint:Q}" with the output kept {seconds:d} seconds'
)
def step_run_batch_kept(context: Context, count: int, endpoint: str, seconds: int) -> None:
    s = scenario(context)
    lines = [request_line(f"r{index}", endpoint, index) for index in range(count)]
    create_batch(s, lines, endpoint, output_expires_after={"anchor": "created_at", "seconds": seconds})


@step_when('I run an OpenAI emulator batch to "{endpoint:Q}" of these requests:')
def step_run_batch_table(context: Context, endpoint: str) -> None:
    s = scenario(context)
    lines = [
        {"custom_id": row["custom_id"], "method": "POST", "url": endpoint, "body": json.loads(row["body"])}
        for row in context.table
    ]
    create_batch(s, lines, endpoint)


@step_when('I run an OpenAI emulator batch to "{endpoint:Q}" of the input lines {lines}')
def step_run_batch_lines(context: Context, endpoint: str, lines: str) -> None:
    create_batch(scenario(context), json.loads(lines), endpoint)


@step_when('I run an OpenAI emulator batch to "{endpoint:Q}" of {count:d} broken lines')
def step_run_batch_broken(context: Context, endpoint: str, count: int) -> None:
    create_batch(scenario(context), ["not json"] * count, endpoint)


@then("the OpenAI emulator batch lists the first {count:d} problems, from line 1 on")
def step_first_problems(context: Context, count: int) -> None:
    batch = refresh(scenario(context))
    assert batch.errors is not None, batch
    assert [error.line for error in batch.errors.data or []] == list(range(1, count + 1)), batch.errors


@step_when('I run an OpenAI emulator batch to "{endpoint:Q}" whose input fails validation')
def step_run_batch_invalid(context: Context, endpoint: str) -> None:
    create_batch(scenario(context), ["not json"], endpoint)


@step_when("I run {count:d} OpenAI emulator batches of 1 request each")
def step_run_batches(context: Context, count: int) -> None:
    s = scenario(context)
    for _ in range(count):
        create_batch(s, [request_line("r0", "/v1/responses", 0)], "/v1/responses")


@step_when("I create an OpenAI emulator batch with {body}")
def step_create_raw(context: Context, body: str) -> None:
    s = scenario(context)
    text = body.replace("<513 chars>", "v" * 513).replace("<65 chars>", "x" * 65)
    payload = json.loads(text)
    if isinstance(payload.get("input_file_id"), str):
        payload["input_file_id"] = s.file_id(payload["input_file_id"])
    s.reply = s.run(lambda: s.sdk.post("/batches", cast_to=Batch, body=payload))


@then("the OpenAI emulator holds no batch")
def step_no_batch(context: Context) -> None:
    s = scenario(context)
    assert len(s.emu.openai.batches) == 0
    assert s.emu.openai.created_batches == 0


@then('the OpenAI emulator batch is "{status:Q}" with {completed:d} completed, {failed:d} failed of {total:d}')
def step_batch_is(context: Context, status: str, completed: int, failed: int, total: int) -> None:
    s = scenario(context)
    answer = s.snapshot.pop("cancel_answer", None)
    batch = answer if answer is not None else refresh(s)
    assert batch.status == status, batch
    counts = batch.request_counts
    assert counts is not None, counts
    assert (counts.completed, counts.failed, counts.total) == (completed, failed, total), counts


@then("the OpenAI emulator batch's timestamps are {stamps}")
def step_timestamps(context: Context, stamps: str) -> None:
    s = scenario(context)
    batch = s.batch.to_dict()
    start_at = batch["created_at"]
    expected = dict(item.rsplit(" ", 1) for item in stamps.split(", "))
    names = ("created", "in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")
    for name in names:
        found = batch.get(f"{name}_at")
        wanted = expected.get(name)
        assert (found - start_at if found is not None else None) == (int(wanted) if wanted else None), (name, batch)
    assert batch["expires_at"] - start_at == int(expected["expires"]), batch


@then('the OpenAI emulator batch keeps its metadata {metadata} and the model "{model:Q}"')
def step_metadata(context: Context, metadata: str, model: str) -> None:
    batch = scenario(context).batch
    assert batch.metadata == json.loads(metadata), batch
    assert batch.model == model, batch
    assert batch.completion_window == "24h", batch


@then("the OpenAI emulator batch has {output} and {error}")
def step_batch_files(context: Context, output: str, error: str) -> None:
    batch = scenario(context).batch
    kinds = {output, error}
    has_output = "an output file" in kinds
    has_error = "an error file" in kinds
    assert (batch.output_file_id is not None) == has_output, batch
    assert (batch.error_file_id is not None) == has_error, batch


def _lines(s: OpenAIScenario, file_id: str | None) -> list[dict[str, Any]]:
    assert file_id is not None, s.batch
    content = s.run(lambda: s.sdk.files.content(file_id))
    assert content is not None, repr(s.error)
    text = content.text
    assert text.endswith("\n"), text[-50:]
    return [json.loads(line) for line in text.splitlines()]


@then('the OpenAI emulator output file answers each of "{ids:Q}" as a {body}, in another order')
def step_output(context: Context, ids: str, body: str) -> None:
    s = scenario(context)
    lines = _lines(s, s.batch.output_file_id)
    wanted = ids.split(", ")
    found = [line["custom_id"] for line in lines]
    assert sorted(found) == sorted(wanted), found
    if len(wanted) > 3:
        assert found != wanted, found
    for line in lines:
        assert set(line) == {"id", "custom_id", "response", "error"}, line
        assert line["error"] is None, line
        assert line["id"].startswith("batch_req_"), line
        response = line["response"]
        assert response["status_code"] == 200, response
        assert len(response["request_id"]) == 32, response
        answer = BODY_TYPES[body].model_validate(response["body"])
        if isinstance(answer, Response):
            assert answer.output_text.startswith('Emulated reply to "'), answer


@then('the OpenAI emulator output file is a "{purpose:Q}" file named after the batch')
def step_output_file(context: Context, purpose: str) -> None:
    s = scenario(context)
    found = _file(s, s.batch.output_file_id)
    assert found.purpose == purpose, found
    assert found.filename == f"{s.batch.id}_output.jsonl", found
    assert found.created_at == s.batch.completed_at, (found, s.batch)
    content = s.run(lambda: s.sdk.files.content(found.id))
    assert found.bytes == len(content.content), (found.bytes, len(content.content))


@then("the OpenAI emulator error file holds these lines:")
def step_error_lines(context: Context) -> None:
    s = scenario(context)
    lines = {line["custom_id"]: line for line in _lines(s, s.batch.error_file_id)}
    assert sorted(lines) == sorted(row["custom_id"] for row in context.table), sorted(lines)
    for row in context.table:
        line = lines[row["custom_id"]]
        code = None if row["code"] == "-" else row["code"]
        if row["status"] == "-":
            assert line["response"] is None, line
            assert line["error"]["code"] == code, line
            assert row["message"] in line["error"]["message"], line
            continue
        assert line["error"] is None, line
        assert line["response"]["status_code"] == int(row["status"]), line
        error = line["response"]["body"]["error"]
        assert set(error) == {"message", "type", "param", "code"}, error
        assert (error["type"], error["code"]) == (row["type"], code), error
        assert row["message"] in error["message"], error


@then(
    "the OpenAI emulator batch failed {seconds:d} seconds after its creation "
    'with the error "{code:Q}" on line {line} about "{param:Q}"'
)
def step_failed_with(context: Context, seconds: int, code: str, line: str, param: str) -> None:
    s = scenario(context)
    batch = refresh(s)
    assert batch.status == "failed", batch
    assert batch.failed_at == batch.created_at + seconds, batch
    assert batch.errors is not None, batch
    assert batch.errors.object == "list", batch
    assert batch.errors.data, batch
    error = batch.errors.data[0]
    assert error.code == code, error
    assert error.line == (None if line == "-" else int(line)), error
    assert error.param == (None if param == "-" else param), error
    assert error.message, error
    assert batch.in_progress_at is None, batch
    assert batch.model is None, batch


@then("the OpenAI emulator counted no request of the batch as created")
def step_not_counted(context: Context) -> None:
    s = scenario(context)
    assert s.emu.openai.created_batches == 1, s.emu.openai.created_custom_ids
    assert not s.emu.openai.created_custom_ids, s.emu.openai.created_custom_ids


@step_when("I cancel the OpenAI emulator batch")
def step_cancel(context: Context) -> None:
    s = scenario(context)
    answer = s.run(lambda: s.sdk.batches.cancel(s.batch.id))
    if answer is not None:
        answer = strict(answer)
        assert answer.status == "cancelling", answer
        assert answer.cancelling_at is not None, answer
        s.snapshot["cancel_answer"] = answer


@step_when('I retrieve the OpenAI emulator batch "{batch_id:Q}"')
def step_retrieve(context: Context, batch_id: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.batches.retrieve(batch_id))


@step_when("I list the OpenAI emulator batches with {params}")
def step_list_batches_bad(context: Context, params: str) -> None:
    s = scenario(context)
    s.reply = s.run(lambda: s.sdk.batches.list(**json.loads(params)))


@then(
    "the OpenAI emulator lists its {count:d} batches newest first, {size:d} at a time, "
    "with has_more, first_id and last_id"
)
def step_list_batches(context: Context, count: int, size: int) -> None:
    s = scenario(context)

    async def walk() -> list[str]:
        listed: list[str] = []
        page = await s.sdk.batches.list(limit=size)
        async for current in page.iter_pages():
            body = current.to_dict()
            ids = [strict(batch).id for batch in current.data]
            assert body["object"] == "list", body
            assert body["first_id"] == ids[0], body
            assert body["last_id"] == ids[-1], body
            listed.extend(ids)
            assert body["has_more"] == (len(listed) < count), body
        return listed

    listed = s.run(walk)
    assert listed == list(reversed(s.batches)), (listed, s.batches)


@then("the OpenAI emulator output file expires {seconds:d} seconds after its creation")
def step_output_expires(context: Context, seconds: int) -> None:
    s = scenario(context)
    found = _file(s, s.batch.output_file_id)
    assert found.expires_at == found.created_at + seconds, found


@step_when("I delete the OpenAI emulator batch's {which} file")
def step_delete_batch_file(context: Context, which: str) -> None:
    s = scenario(context)
    file_id = {"input": s.batch.input_file_id, "output": s.batch.output_file_id, "error": s.batch.error_file_id}[which]
    deleted = s.run(lambda: s.sdk.files.delete(file_id))
    assert deleted is not None, repr(s.error)
    assert strict(deleted).deleted, repr(s.error)
    refresh(s)


@then("the OpenAI emulator batch's output file is not found")
def step_output_gone(context: Context) -> None:
    s = scenario(context)
    refresh(s)
    s.run(lambda: s.sdk.files.retrieve(s.batch.output_file_id))
    assert isinstance(s.error, openai.NotFoundError), repr(s.error)


# -- faults ----------------------------------------------------------------------------------------------------------


@given('the OpenAI emulator ends request "{custom_id:Q}" as errored with "{error_type:Q}" saying "{message:Q}"')
def step_outcome_errored(context: Context, custom_id: str, error_type: str, message: str) -> None:
    scenario(context).emu.faults.outcome(custom_id, "errored", error_type=error_type, message=message)


@given('the OpenAI emulator ends request "{custom_id:Q}" as {kind}')
def step_outcome(context: Context, custom_id: str, kind: str) -> None:
    chosen: Any = kind
    scenario(context).emu.faults.outcome(custom_id, chosen)


@given('the OpenAI emulator loses request "{custom_id:Q}"')
def step_lose(context: Context, custom_id: str) -> None:
    scenario(context).emu.faults.lose(custom_id)


@given('the OpenAI emulator fails the next "{route:Q}" call with status {status:d} and retry-after {retry:g}')
def step_fault(context: Context, route: str, status: int, retry: float) -> None:
    scenario(context).emu.faults.fail_next(route, status, retry_after=retry)


@given(
    'the OpenAI emulator fails the next "{route:Q}" call with status {status:d}, {times:d} times, '
    'retry-after {retry:g} and message "{message:Q}"'
)
def step_fault_full(context: Context, route: str, status: int, times: int, retry: float, message: str) -> None:
    scenario(context).emu.faults.fail_next(route, status, times=times, retry_after=retry, message=message)


@given('the OpenAI emulator drops the answer of the next "{route:Q}" call')
def step_drop(context: Context, route: str) -> None:
    scenario(context).emu.faults.drop_after_commit(route)


@given('the OpenAI emulator delays the answer of the next "{route:Q}" call by {seconds:g} seconds')
def step_delay(context: Context, route: str, seconds: float) -> None:
    scenario(context).emu.faults.delay_after_commit(route, seconds=seconds)


@given('the OpenAI emulator makes "{route:Q}" slow by {seconds:g} seconds, {times:d} time')
def step_slow_times(context: Context, route: str, seconds: float, times: int) -> None:
    scenario(context).emu.faults.slow(route, seconds=seconds, times=times)


@given('the OpenAI emulator makes "{route:Q}" slow by {seconds:g} seconds')
def step_slow(context: Context, route: str, seconds: float) -> None:
    scenario(context).emu.faults.slow(route, seconds=seconds)


def _prepared_file(s: OpenAIScenario) -> str:
    """A file made outside the counted route, for the routes that act on one."""
    created = s.runner.run(s.sdk.files.create(file=("x.jsonl", jsonl([request_line("r0", "/v1/responses", 0)])),
                                              purpose="batch"))  # fmt: skip
    return created.id


@step_when('I call the OpenAI emulator route "{route:Q}"')
def step_call_route(context: Context, route: str) -> None:
    s = scenario(context)
    sdk = s.sdk
    if route.startswith("openai.batches.") and route != "openai.batches.create":
        s.emu.processing_seconds = 100
        file_id = _prepared_file(s)
        s.batch = s.runner.run(
            sdk.batches.create(input_file_id=file_id, endpoint="/v1/responses", completion_window="24h")
        )
    file_id = _prepared_file(s) if route.startswith("openai.files.") and route != "openai.files.create" else ""
    input_file = _prepared_file(s) if route == "openai.batches.create" else ""
    calls: dict[str, Any] = {
        "openai.files.create": lambda: sdk.files.create(file=("n.txt", b"x"), purpose="user_data"),
        "openai.files.retrieve": lambda: sdk.files.retrieve(file_id),
        "openai.files.list": lambda: sdk.files.list(),
        "openai.files.delete": lambda: sdk.files.delete(file_id),
        "openai.files.content": lambda: sdk.files.content(file_id),
        "openai.batches.create": lambda: sdk.batches.create(
            input_file_id=input_file, endpoint="/v1/responses", completion_window="24h"
        ),
        "openai.batches.retrieve": lambda: sdk.batches.retrieve(s.batch.id),
        "openai.batches.list": lambda: sdk.batches.list(),
        "openai.batches.cancel": lambda: sdk.batches.cancel(s.batch.id),
        "openai.responses.create": lambda: sdk.responses.create(model=MODEL, input="Hi"),
        "openai.chat.completions.create": lambda: sdk.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Hi"}]
        ),
        "openai.embeddings.create": lambda: sdk.embeddings.create(model="text-embedding-3-small", input="Hi"),
    }
    s.reply = s.run(calls[route])
    if route == "openai.batches.cancel" and s.error is None:
        # The next cancel must find a batch it can still cancel.
        s.batch = s.runner.run(sdk.batches.create(input_file_id=_prepared_file(s), endpoint="/v1/responses",
                                                  completion_window="24h"))  # fmt: skip


@then("the OpenAI emulator call failed with a dropped connection")
def step_dropped(context: Context) -> None:
    error = scenario(context).error
    assert isinstance(error, openai.APIConnectionError), repr(error)
    assert not isinstance(error, openai.APITimeoutError), repr(error)
    assert isinstance(error.__cause__, httpx2.RemoteProtocolError), repr(error.__cause__)


@then("the OpenAI emulator lists {count:d} batch, holding {requests:d} requests")
def step_listed_one(context: Context, count: int, requests: int) -> None:
    s = scenario(context)
    page = s.run(lambda: s.sdk.batches.list())
    assert len(page.data) == count, page
    assert strict(page.data[0]).request_counts.total == requests, page.data[0]


def _created(ids: str) -> dict[str, int]:
    return {key: int(value) for key, value in (item.split("=") for item in ids.split(", "))}


@then('the OpenAI emulator counted {count:d} batch created, holding "{ids:Q}"')
@then('the OpenAI emulator counted {count:d} batches created, holding "{ids:Q}"')
def step_counted_created(context: Context, count: int, ids: str) -> None:
    backend = scenario(context).emu.openai
    assert backend.created_batches == count, backend.created_batches
    assert dict(backend.created_custom_ids) == _created(ids), backend.created_custom_ids


@then('the OpenAI emulator counted {count:d} calls to "{route:Q}"')
def step_counted_calls(context: Context, count: int, route: str) -> None:
    assert scenario(context).emu.calls[route] == count, scenario(context).emu.calls


@then("the OpenAI emulator counted these calls:")
def step_counted_table(context: Context) -> None:
    calls = scenario(context).emu.calls
    assert dict(calls) == {row["route"]: int(row["count"]) for row in context.table}, calls


@then("the OpenAI emulator clock slept {times:d} times for {seconds:g} seconds in all")
def step_slept(context: Context, times: int, seconds: float) -> None:
    sleeps = scenario(context).clock.sleeps
    assert (len(sleeps), sum(sleeps)) == (times, seconds), sleeps


@then("the OpenAI emulator clock slept at least {times:d} times")
def step_slept_many(context: Context, times: int) -> None:
    sleeps = scenario(context).clock.sleeps
    assert len(sleeps) >= times, sleeps
    assert set(sleeps[2:]) == {2.0}, sleeps


@step_when("I read the OpenAI emulator output file")
def step_read_output(context: Context) -> None:
    s = scenario(context)
    s.sleeps = len(s.clock.sleeps)
    assert len(_lines(s, s.batch.output_file_id)) == 3


@then("the OpenAI emulator clock slept {times:d} more times for {seconds:g} seconds in all")
def step_slept_more(context: Context, times: int, seconds: float) -> None:
    s = scenario(context)
    more = s.clock.sleeps[s.sleeps :]
    assert (len(more), sum(more)) == (times, seconds), more


# -- a socket and its admin routes -----------------------------------------------------------------------------------


@given("the OpenAI emulator serves on a socket")
def step_serve(context: Context) -> None:
    s = scenario(context)
    s.emulator = Emulator()
    serving = serve_in_thread(s.emulator)
    s.server = serving.__enter__()
    s.cleanups.append(lambda: serving.__exit__(None, None, None))
    s.client = openai.AsyncOpenAI(api_key="any-key", base_url=f"{s.server.url}/v1", max_retries=0)
    s.cleanups.append(s.client.close)


def _admin(s: OpenAIScenario, method: str, path: str, body: Any = None) -> httpx2.Response:
    assert s.server is not None
    with httpx2.Client(base_url=s.server.url) as http:
        s.raw = http.request(method, path, json=body)
    return s.raw


@step_when("I arm the socket OpenAI emulator's {kind} {body}")
def step_arm(context: Context, kind: str, body: str) -> None:
    _admin(scenario(context), "POST", f"/_emulator/{kind}s", json.loads(body))


@then('the socket OpenAI emulator\'s stats show {count:d} OpenAI batch created, holding "{ids:Q}"')
def step_socket_stats(context: Context, count: int, ids: str) -> None:
    stats = _admin(scenario(context), "GET", "/_emulator/stats").json()
    assert stats["openai_created_batches"] == count, stats
    assert stats["openai_batches"] == count, stats
    assert stats["openai_created_custom_ids"] == _created(ids), stats
    assert stats["calls"]["openai.batches.create"] == 2, stats


@step_when("I reset the socket OpenAI emulator")
def step_reset(context: Context) -> None:
    assert _admin(scenario(context), "POST", "/_emulator/reset").json() == {"reset": True}


@then("the socket OpenAI emulator's stats show no OpenAI batch, file or call")
def step_reset_stats(context: Context) -> None:
    s = scenario(context)
    stats = _admin(s, "GET", "/_emulator/stats").json()
    assert stats["calls"] == {}, stats
    assert (stats["openai_batches"], stats["openai_created_batches"], stats["openai_created_custom_ids"]) == (0, 0, {})
    assert s.emu.openai.files.order() == [], s.emu.openai.files.order()


@then("the socket OpenAI emulator admin answer is {status:d}")
def step_admin_status(context: Context, status: int) -> None:
    response = scenario(context).raw
    assert response is not None, response
    assert response.status_code == status, response


# -- the state file --------------------------------------------------------------------------------------------------


@given("the OpenAI emulator runs on a manual clock with a state file")
def step_start_state(context: Context) -> None:
    s = scenario(context)
    folder = Path(tempfile.mkdtemp(prefix="lowtide-openai-state-", dir=context.state_dir))
    s.state_file = str(folder / "state.json")
    start(context, state_file=s.state_file)


@step_when("I read the OpenAI emulator output and error files")
def step_read_both(context: Context) -> None:
    s = scenario(context)
    assert [line["custom_id"] for line in _lines(s, s.batch.output_file_id)] == ["ok"]
    assert [line["custom_id"] for line in _lines(s, s.batch.error_file_id)] == ["bad"]


@step_when("I cancel a second OpenAI emulator batch that is still in progress")
def step_cancel_second(context: Context) -> None:
    s = scenario(context)
    first = s.batch
    s.emu.processing_seconds = 100
    create_batch(s, [request_line(f"r{index}", "/v1/responses", index) for index in range(2)], "/v1/responses")
    s.clock.advance(50)
    assert s.run(lambda: s.sdk.batches.cancel(s.batch.id)) is not None, repr(s.error)
    s.emu.processing_seconds = 0
    s.batch = first


@step_when("I leave an OpenAI emulator batch of 1 request in progress")
def step_leave_running(context: Context) -> None:
    s = scenario(context)
    first = s.batch
    s.emu.processing_seconds = 100
    create_batch(s, [request_line("p0", "/v1/responses", 0)], "/v1/responses")
    assert s.batch.status == "validating", s.batch
    s.batch = first


def _everything(s: OpenAIScenario) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        files = [item.to_dict() for item in (await s.sdk.files.list()).data]
        contents = {item["id"]: (await s.sdk.files.content(str(item["id"]))).content for item in files}
        batches = [item.to_dict() for item in (await s.sdk.batches.list()).data]
        return {"files": files, "contents": contents, "batches": batches}

    found = s.run(read)
    assert found is not None, repr(s.error)
    return found


@step_when("the OpenAI emulator is started again on its state file")
def step_restart(context: Context) -> None:
    s = scenario(context)
    s.snapshot["before"] = _everything(s)
    s.emulator = Emulator(clock=s.clock, state_file=s.state_file)
    connect(s)


@then("the OpenAI emulator serves the same files, batches and output as before")
def step_same_after(context: Context) -> None:
    s = scenario(context)
    before, after = s.snapshot["before"], _everything(s)
    assert after == before, (after, before)
    assert len(after["batches"]) == 4, after["batches"]
    assert any(b["status"] == "cancelled" for b in after["batches"]), after["batches"]
    assert any(f["purpose"] == "vision" for f in after["files"]), after["files"]


@then('the OpenAI emulator still loses request "{custom_id:Q}"')
def step_still_lost(context: Context, custom_id: str) -> None:
    assert scenario(context).emu.faults.is_lost(custom_id)


@then("the OpenAI emulator has been running for {seconds:d} seconds")
def step_running(context: Context, seconds: int) -> None:
    assert when(scenario(context)) == seconds
