"""Steps the emulator's Groq and Together scenarios share (features/emulator_groq.feature,
features/emulator_together.feature): the emulator on a socket, restarted from its state file, on its own clock, and
what the groq and together SDKs see of it alike. `{sdk:Sdk}` is "groq" or "together" (features/steps/
_compat_sockets.py); what only one of them has stays in emulator_groq_steps.py and emulator_together_steps.py."""

from __future__ import annotations

import json

import groq
import httpx
import together
from _compat_sockets import Context, Sdk, call
from _support import world
from step_context import given, then, when


@given("the emulator keeps its state in a file")
def step_socket_state_file(context: Context) -> None:
    context.socket_emulator.keep_state(world(context))


@when("the emulator is restarted from its state file")
def step_socket_restart(context: Context) -> None:
    context.socket_emulator.serve(world(context))


@given("the emulator on the socket takes at most {count:d} bytes in a request")
def step_socket_request_bytes(context: Context, count: int) -> None:
    context.socket_emulator.max_request_bytes = count
    context.socket_emulator.serve(world(context))


@when("{seconds:g} seconds pass on the emulator's clock")
def step_socket_time(context: Context, seconds: float) -> None:
    context.socket_emulator.clock.advance(seconds)


@when('the {sdk:Sdk} SDK asks "{model}" for a chat completion')
def step_sdk_chat(context: Context, sdk: Sdk, model: str) -> None:
    call(context, lambda c: c.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}]))


@when('the {sdk:Sdk} SDK asks "{model}" for a chat completion with "{name}" = "{value}"')
def step_sdk_chat_with(context: Context, sdk: Sdk, model: str, name: str, value: str) -> None:
    messages = [{"role": "user", "content": "Hi"}]
    call(context, lambda c: c.chat.completions.create(model=model, messages=messages, extra_body={name: value}))


@when("the {sdk:Sdk} SDK posts a chat completion whose body is {body}")
def step_sdk_chat_body(context: Context, sdk: Sdk, body: str) -> None:
    sent = json.loads(body)
    call(context, lambda c: c.post(f"{sdk.api_path}/chat/completions", cast_to=object, body=sent))


@when("the emulator on the socket is reset")
def step_socket_reset(context: Context) -> None:
    answer = httpx.post(f"{context.socket_emulator.url}/_emulator/reset", timeout=30)
    assert answer.json() == {"reset": True}, answer.text


@when("the {sdk:Sdk} SDK deletes the input file")
def step_sdk_delete(context: Context, sdk: Sdk) -> None:
    assert call(context, lambda c: c.files.delete(context.sdk_socket.file_id)) is not None, context.sdk_socket.error


@then('the {sdk:Sdk} SDK lists no file of purpose "{purpose}"')
def step_sdk_no_files(context: Context, sdk: Sdk, purpose: str) -> None:
    listed = call(context, lambda c: c.files.list())
    assert purpose not in [item.purpose for item in listed.data], listed


@then('the {sdk:Sdk} SDK raised a {error:w} with status {status:d}, its error body saying "{says}"')
def step_sdk_raised(context: Context, sdk: Sdk, error: str, status: int, says: str) -> None:
    raised = context.sdk_socket.error
    assert isinstance(raised, getattr(sdk.module, error)), raised
    assert isinstance(raised, groq.APIStatusError | together.APIStatusError), raised
    assert raised.status_code == status, raised.status_code
    body = raised.body if isinstance(raised.body, dict) else {}
    detail = body.get("error", body)
    assert set(detail) >= {"message", "type"}, body
    assert says in str(detail), body
