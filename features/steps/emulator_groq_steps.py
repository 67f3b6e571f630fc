"""Steps only the emulator's Groq scenarios have (features/emulator_groq.feature): the groq SDK's batches (windows,
metadata, request counts) against the emulator on a loopback socket. The steps the Groq and Together scenarios share
are in emulator_compat_steps.py."""

from __future__ import annotations

import json
from typing import Any

import groq
import httpx
import openai
from _compat_sockets import GROQ_SDK, Context, batch_lines, call, check_output, check_stats, serve
from _support import world
from step_context import given, then, when

from lowtide.emulator.groq.emulation import GroqEmulation


def _batch(context: Context) -> Any:
    batch = call(context, lambda c: c.batches.retrieve(context.sdk_socket.batch_id))
    assert batch is not None, context.sdk_socket.error
    return batch


def _upload(context: Context, lines: str) -> None:
    uploaded = call(context, lambda c: c.files.create(file=("in.jsonl", lines.encode()), purpose="batch"))
    assert uploaded is not None, context.sdk_socket.error
    context.sdk_socket.file_ids.append(uploaded.id)


@given("an emulator on a socket whose Groq batches take {seconds:g} seconds, reached through GROQ_BASE_URL alone")
def step_groq_socket(context: Context, seconds: float) -> None:
    serve(context, GROQ_SDK, seconds)


@when("the emulator's Groq batches take {seconds:g} seconds")
def step_groq_slower(context: Context, seconds: float) -> None:
    context.socket_emulator.emu.processing_seconds = seconds


@when('the groq SDK uploads a batch file of {count:d} request for "{model}"')
@when('the groq SDK uploads a batch file of {count:d} requests for "{model}"')
def step_groq_upload(context: Context, count: int, model: str) -> None:
    _upload(context, batch_lines(count, [model]))


@when('the groq SDK uploads a batch file whose requests name "{first}" and "{second}"')
def step_groq_upload_two(context: Context, first: str, second: str) -> None:
    _upload(context, batch_lines(2, [first, second]))


@when("the groq SDK uploads a batch file of these lines:")
def step_groq_upload_lines(context: Context) -> None:
    _upload(context, context.text or "")


def _create(context: Context, window: str, endpoint: str = "/v1/chat/completions", **extra: Any) -> None:
    s = context.sdk_socket
    created = call(
        context,
        lambda c: c.batches.create(input_file_id=s.file_id, endpoint=endpoint, completion_window=window, **extra),
    )
    if created is not None:
        s.batch_id = created.id


@when('the groq SDK creates a batch from it with the window "{window}" and the metadata "{key}" = "{value}"')
def step_groq_create(context: Context, window: str, key: str, value: str) -> None:
    _create(context, window, metadata={key: value})
    assert context.sdk_socket.error is None, context.sdk_socket.error


@when('the groq SDK creates a batch from it with the window "{window}"')
def step_groq_create_window(context: Context, window: str) -> None:
    _create(context, window)


@when('the groq SDK creates a batch from it for the endpoint "{endpoint}"')
def step_groq_create_endpoint(context: Context, endpoint: str) -> None:
    _create(context, "24h", endpoint)


@when('the groq SDK creates a batch from the file "{file_id}"')
def step_groq_create_unknown(context: Context, file_id: str) -> None:
    context.sdk_socket.file_ids.append(file_id)
    _create(context, "24h")


@when('the groq SDK retrieves the batch "{batch_id}"')
def step_groq_retrieve_unknown(context: Context, batch_id: str) -> None:
    call(context, lambda c: c.batches.retrieve(batch_id))


@when("the groq SDK calls without a key")
def step_groq_no_key(context: Context) -> None:
    answer = httpx.get(f"{context.socket_emulator.url}/openai/v1/batches", timeout=30)
    context.sdk_socket.error = (
        groq.AuthenticationError("unauthenticated", response=answer, body=answer.json())
        if answer.status_code == 401
        else None
    )


@when("the groq SDK cancels the batch")
def step_groq_cancel(context: Context) -> None:
    answer = call(context, lambda c: c.batches.cancel(context.sdk_socket.batch_id))
    assert answer is not None, context.sdk_socket.error
    context.sdk_socket.cancel_status = answer.status


@then('the cancel was answered "{status}"')
def step_groq_cancel_answer(context: Context, status: str) -> None:
    assert context.sdk_socket.cancel_status == status, context.sdk_socket.cancel_status


@then(
    'the Groq batch is "{status}", its window "{window}", its metadata kept, expiring {seconds:d} seconds after its'
    " creation"
)
def step_groq_created(context: Context, status: str, window: str, seconds: int) -> None:
    batch = _batch(context)
    assert (batch.status, batch.completion_window) == (status, window), batch
    assert batch.metadata == {"lowtide_intent": "intent-1"}, batch.metadata
    assert batch.expires_at - batch.created_at == seconds, batch


@then('the Groq batch is "{status}" with {done:d} of {total:d} requests done')
def step_groq_status(context: Context, status: str, done: int, total: int) -> None:
    batch = _batch(context)
    counts = batch.request_counts
    assert batch.status == status, batch.status
    assert (counts.completed, counts.total) == (done, total), counts


@then('the Groq batch is "{status}", saying "{code}"')
def step_groq_failed(context: Context, status: str, code: str) -> None:
    batch = _batch(context)
    assert batch.status == status, batch.status
    assert batch.errors is not None and batch.errors.data, batch  # noqa: PT018
    assert batch.errors.data[0].code == code, batch.errors


@then('the Groq batch\'s window is "{window}"')
def step_groq_window(context: Context, window: str) -> None:
    assert _batch(context).completion_window == window


@then('the Groq batch\'s output file holds an answer from "{model}" for each of its {count:d} requests')
def step_groq_output(context: Context, model: str, count: int) -> None:
    check_output(context, _batch(context).output_file_id, model, count)


@then('the Groq batch\'s error file says "{says}" for each of its {count:d} requests')
def step_groq_errors(context: Context, says: str, count: int) -> None:
    batch = _batch(context)

    async def read(c: groq.AsyncGroq) -> bytes:
        return await (await c.files.content(batch.error_file_id)).read()

    lines = [json.loads(line) for line in call(context, read).splitlines()]
    assert len(lines) == count, lines
    assert all(says in json.dumps(line) for line in lines), lines


@then("the groq SDK lists {count:d} batch")
@then("the groq SDK lists {count:d} batches")
def step_groq_lists(context: Context, count: int) -> None:
    listed = call(context, lambda c: c.batches.list())
    assert len(listed.data) == count, listed


@then("the emulator's stats count {batches:d} Groq batch created, with {ids:d} custom ids")
def step_groq_stats(context: Context, batches: int, ids: int) -> None:
    check_stats(context, batches, ids)


@then("the OpenAI SDK at the same address lists no batch")
def step_groq_openai_apart(context: Context) -> None:
    url = context.socket_emulator.url

    async def listing() -> list[Any]:
        async with openai.AsyncOpenAI(api_key=GROQ_SDK.key, base_url=f"{url}/v1", max_retries=0) as client:
            return [batch async for batch in client.batches.list()]

    assert world(context).run(listing()) == []
    assert context.socket_emulator.emu.emulation(GroqEmulation).created_batches == 1
