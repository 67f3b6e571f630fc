"""Steps for the emulator's Groq API (features/emulator_groq.feature): the official groq SDK, as a program builds it
from `GROQ_BASE_URL` and `GROQ_API_KEY` alone, against the emulator on a loopback socket, on a manual clock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import groq
import httpx
import openai
from _socket_emulator import SocketEmulator
from _support import set_env, world
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide.emulator.groq.emulation import GroqEmulation

KEY = "gsk-emulated-groq-scenario-key-81c4"


@dataclass
class GroqSocket:
    """What the groq SDK did against the scenario's emulator."""

    file_id: str = ""
    batch_id: str = ""
    error: Exception | None = None
    cancel_status: str = ""


class Context(StepContext, Protocol):
    groq_socket: GroqSocket
    socket_emulator: SocketEmulator


def _call(context: Context, make: Any) -> Any:
    """An SDK call by a client built as a program builds it (from the environment alone); a Groq error is kept."""
    s = context.groq_socket
    s.error = None

    async def call() -> Any:
        client = groq.AsyncGroq(max_retries=0)
        try:
            return await make(client)
        finally:
            await client.close()

    try:
        return world(context).run(call())
    except groq.APIError as exc:
        s.error = exc
        return None


def _batch(context: Context) -> Any:
    batch = _call(context, lambda c: c.batches.retrieve(context.groq_socket.batch_id))
    assert batch is not None, context.groq_socket.error
    return batch


def _lines(count: int, models: list[str]) -> bytes:
    return "\n".join(
        json.dumps(
            {
                "custom_id": f"r{index}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": models[index % len(models)], "messages": [{"role": "user", "content": f"Q{index}"}]},
            }
        )
        for index in range(count)
    ).encode()


@given("an emulator on a socket whose Groq batches take {seconds:g} seconds, reached through GROQ_BASE_URL alone")
def step_groq_socket(context: Context, seconds: float) -> None:
    context.groq_socket = GroqSocket()
    context.socket_emulator = SocketEmulator("GROQ_BASE_URL", processing_seconds=seconds)
    set_env(world(context), "GROQ_API_KEY", KEY)
    context.socket_emulator.serve(world(context))


# The emulator on a socket, for the Groq and Together scenarios alike.


@given("the emulator keeps its state in a file")
def step_socket_state_file(context: Context) -> None:
    context.socket_emulator.keep_state(world(context))


@when("the emulator is restarted from its state file")
def step_socket_restart(context: Context) -> None:
    context.socket_emulator.serve(world(context))


@when("{seconds:g} seconds pass on the emulator's clock")
def step_socket_time(context: Context, seconds: float) -> None:
    context.socket_emulator.clock.advance(seconds)


@when("the emulator's Groq batches take {seconds:g} seconds")
def step_groq_slower(context: Context, seconds: float) -> None:
    context.socket_emulator.emu.processing_seconds = seconds


@when('the groq SDK uploads a batch file of {count:d} request for "{model}"')
@when('the groq SDK uploads a batch file of {count:d} requests for "{model}"')
def step_groq_upload(context: Context, count: int, model: str) -> None:
    uploaded = _call(context, lambda c: c.files.create(file=("in.jsonl", _lines(count, [model])), purpose="batch"))
    assert uploaded is not None, context.groq_socket.error
    context.groq_socket.file_id = uploaded.id


@when('the groq SDK uploads a batch file whose requests name "{first}" and "{second}"')
def step_groq_upload_two(context: Context, first: str, second: str) -> None:
    lines = _lines(2, [first, second])
    uploaded = _call(context, lambda c: c.files.create(file=("in.jsonl", lines), purpose="batch"))
    context.groq_socket.file_id = uploaded.id


def _create(context: Context, window: str, endpoint: str = "/v1/chat/completions", **extra: Any) -> None:
    s = context.groq_socket
    created = _call(
        context,
        lambda c: c.batches.create(input_file_id=s.file_id, endpoint=endpoint, completion_window=window, **extra),
    )
    if created is not None:
        s.batch_id = created.id


@when('the groq SDK creates a batch from it with the window "{window}" and the metadata "{key}" = "{value}"')
def step_groq_create(context: Context, window: str, key: str, value: str) -> None:
    _create(context, window, metadata={key: value})
    assert context.groq_socket.error is None, context.groq_socket.error


@when('the groq SDK creates a batch from it with the window "{window}"')
def step_groq_create_window(context: Context, window: str) -> None:
    _create(context, window)


@when('the groq SDK creates a batch from it for the endpoint "{endpoint}"')
def step_groq_create_endpoint(context: Context, endpoint: str) -> None:
    _create(context, "24h", endpoint)


@when('the groq SDK retrieves the batch "{batch_id}"')
def step_groq_retrieve_unknown(context: Context, batch_id: str) -> None:
    _call(context, lambda c: c.batches.retrieve(batch_id))


@when('the groq SDK asks "{model}" for a chat completion')
def step_groq_chat_unknown(context: Context, model: str) -> None:
    _call(context, lambda c: c.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}]))


@when("the groq SDK calls without a key")
def step_groq_no_key(context: Context) -> None:
    s = context.groq_socket
    answer = httpx.get(f"{context.socket_emulator.url}/openai/v1/batches", timeout=30)
    s.error = (
        groq.AuthenticationError("unauthenticated", response=answer, body=answer.json())
        if answer.status_code == 401
        else None
    )


@when("the groq SDK cancels the batch")
def step_groq_cancel(context: Context) -> None:
    answer = _call(context, lambda c: c.batches.cancel(context.groq_socket.batch_id))
    assert answer is not None, context.groq_socket.error
    context.groq_socket.cancel_status = answer.status


@then('the cancel was answered "{status}"')
def step_groq_cancel_answer(context: Context, status: str) -> None:
    assert context.groq_socket.cancel_status == status, context.groq_socket.cancel_status


@when("the groq SDK deletes the input file")
def step_groq_delete(context: Context) -> None:
    assert _call(context, lambda c: c.files.delete(context.groq_socket.file_id)) is not None


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
    batch = _batch(context)

    async def read(c: groq.AsyncGroq) -> bytes:
        return await (await c.files.content(batch.output_file_id)).read()

    lines = [json.loads(line) for line in _call(context, read).splitlines()]
    assert sorted(line["custom_id"] for line in lines) == [f"r{index}" for index in range(count)], lines
    assert {line["response"]["body"]["model"] for line in lines} == {model}, lines
    assert all(line["response"]["status_code"] == 200 for line in lines), lines


@then("the groq SDK lists {count:d} batch")
@then("the groq SDK lists {count:d} batches")
def step_groq_lists(context: Context, count: int) -> None:
    listed = _call(context, lambda c: c.batches.list())
    assert len(listed.data) == count, listed


@then('the groq SDK lists no file of purpose "{purpose}"')
def step_groq_no_files(context: Context, purpose: str) -> None:
    listed = _call(context, lambda c: c.files.list())
    assert purpose not in [item.purpose for item in listed.data], listed


@then("the emulator's stats count {batches:d} Groq batch created, with {ids:d} custom ids")
def step_groq_stats(context: Context, batches: int, ids: int) -> None:
    stats = httpx.get(f"{context.socket_emulator.url}/_emulator/stats", timeout=30).json()
    assert stats["groq_created_batches"] == batches, stats
    assert len(stats["groq_created_custom_ids"]) == ids, stats


@then('the groq SDK raised a {error:w} with status {status:d}, its error body saying "{says}"')
def step_groq_raised(context: Context, error: str, status: int, says: str) -> None:
    raised = context.groq_socket.error
    assert isinstance(raised, getattr(groq, error)), raised
    assert isinstance(raised, groq.APIStatusError)
    assert raised.status_code == status, raised.status_code
    body = raised.body if isinstance(raised.body, dict) else {}
    detail = body.get("error", body)
    assert set(detail) >= {"message", "type"}, body
    assert says in str(detail), body


@then("the OpenAI SDK at the same address lists no batch")
def step_groq_openai_apart(context: Context) -> None:
    url = context.socket_emulator.url

    async def listing() -> list[Any]:
        async with openai.AsyncOpenAI(api_key=KEY, base_url=f"{url}/v1", max_retries=0) as client:
            return [batch async for batch in client.batches.list()]

    assert world(context).run(listing()) == []
    assert context.socket_emulator.emu.emulation(GroqEmulation).created_batches == 1
